import Logging

/// The one log line written per failed or lost connection: what happened, whether the broker was
/// ever reached since the client started, and when the next attempt comes (rounded seconds).
/// Pure, so the wording and levels are unit-tested without a broker.
///
/// The first failure of a streak is a warning; the later ones of the same streak are `info`
/// (still one line per attempt, so the journal shows the retries without shouting).
struct MQTTRetryReport: Sendable, Equatable {
    var level: LogLevel
    var message: String
    var metadata: [Pair]

    struct Pair: Sendable, Equatable {
        var key: String
        var value: String
    }

    /// - Parameters:
    ///   - wasConnected: CONNACK had been accepted on the connection that just ended.
    ///   - everConnected: some connection since the client started was accepted.
    ///   - failures: failed attempts in a row, this one included (0 when `wasConnected`).
    ///   - retryIn: the delay before the next attempt; nil when the client stops instead.
    init(reason: String, broker: String, wasConnected: Bool, everConnected: Bool, failures: Int, retryIn: Duration?) {
        let retry = retryIn.map { "; retrying in \(LogDuration.rounded($0))" } ?? ""
        if wasConnected {
            level = .warning
            message = "MQTT connection lost" + retry
        } else if everConnected {
            level = failures <= 1 ? .warning : .info
            message = "MQTT reconnect attempt failed" + retry
        } else {
            level = failures <= 1 ? .warning : .info
            message = "MQTT broker not reachable (never connected since start)" + retry
        }
        metadata = [Pair(key: "broker", value: broker), Pair(key: "reason", value: reason)]
        if !wasConnected { metadata.append(Pair(key: "attempt", value: "\(failures)")) }
    }
}
