import Foundation
import MQTT
import Outbox
import Publisher
import Synchronization
import TestSupport
import Timekeeping

/// A reading as the tests encode it: `{"device":…,"seq":…,"ts":…}` with the sample time.
struct TestReading: Hashable, Sendable {
    var device: String
    var seq: Int
    var ts: String

    static func entry(device: String, seq: Int, time: Date = Date(), topic: String = "readings") -> OutboxEntry {
        // Not rounded: the sample-time property (formatted from the time the outbox stored) must
        // show the same millisecond as `ts` (formatted from this time) whatever the fraction.
        let ts = Timestamp.iso8601(time)
        let payload = #"{"device":"\#(device)","seq":\#(seq),"ts":"\#(ts)"}"#
        return OutboxEntry(topic: "\(topic)/\(device)", payload: Array(payload.utf8), sampleTime: time, stream: device)
    }

    init(device: String, seq: Int, ts: String) {
        self.device = device
        self.seq = seq
        self.ts = ts
    }

    /// Parses what the tests publish (also the probe's `{"seq":…,"ts":…}` with the device from the topic).
    init?(_ message: MQTTMessage) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
            let seq = object["seq"] as? Int, let ts = object["ts"] as? String
        else { return nil }
        self.device = object["device"] as? String ?? String(message.topic.split(separator: "/").last ?? "")
        self.seq = seq
        self.ts = ts
    }
}

/// Everything a subscription delivered, collected by a background task.
///
/// Each message is parsed once, as it arrives: the tests poll ``distinct`` every few milliseconds
/// while thousands of messages come in, and re-parsing all of them on every poll cost more CPU
/// than the publisher and subscriber together, so under load the test starved the very delivery
/// it was waiting for (a 10,000-reading run then "missed" its last readings at the deadline).
final class Received: Sendable {
    private struct State {
        var all: [MQTTMessage] = []
        var readings: [TestReading] = []
        var seen: Set<TestReading> = []
        /// For each device, the sequence numbers in the order they first arrived.
        var firstArrivals: [String: [Int]] = [:]
    }
    private final class Shared: Sendable {
        let state = Mutex(State())
    }
    private let shared = Shared()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<MQTTMessage>) {
        let shared = self.shared
        task = Task {
            for await message in stream {
                let reading = TestReading(message)
                shared.state.withLock { state in
                    state.all.append(message)
                    guard let reading else { return }
                    state.readings.append(reading)
                    if state.seen.insert(reading).inserted {
                        state.firstArrivals[reading.device, default: []].append(reading.seq)
                    }
                }
            }
        }
    }

    deinit { task.cancel() }

    var all: [MQTTMessage] { shared.state.withLock { $0.all } }
    var readings: [TestReading] { shared.state.withLock { $0.readings } }

    /// For each device, the sequence numbers in the order they first arrived.
    func firstArrivals() -> [String: [Int]] { shared.state.withLock { $0.firstArrivals } }

    /// Messages whose user property `property` is not exactly the payload's `ts`.
    func unstamped(property: String) -> [MQTTMessage] {
        all.filter { message in
            guard let reading = TestReading(message) else { return true }
            return message.properties.userProperties != [MQTTUserProperty(property, reading.ts)]
        }
    }

    /// Number of distinct readings received.
    var distinct: Int { shared.state.withLock { $0.seen.count } }
}

enum PublisherTestSupport {
    static func client(
        _ broker: MosquittoFixture, clientID: String, cleanSession: Bool = true
    ) throws -> MQTTClient {
        MQTTClient(
            configuration: try MQTTConfiguration(
                url: broker.url, clientID: clientID, cleanSession: cleanSession,
                minimumReconnectDelay: .milliseconds(50), maximumReconnectDelay: .milliseconds(300)))
    }

    /// A connected subscriber on `filter` (QoS 1); persistent session when `clientID` is stable.
    static func subscriber(
        _ broker: MosquittoFixture, filter: String, clientID: String = "sub-\(UUID().uuidString.prefix(8))",
        cleanSession: Bool = true
    ) async throws -> (MQTTClient, Received) {
        let client = try client(broker, clientID: clientID, cleanSession: cleanSession)
        try await client.connect()
        let stream = try await client.subscribe(filter, qos: .atLeastOnce)
        return (client, Received(stream))
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes; returns its last value.
    /// `timeout` counts only time this process could run (see `waitUntil`).
    static func wait(
        timeout: Duration, _ condition: @Sendable () async throws -> Bool
    ) async rethrows -> Bool {
        try await waitUntil(timeout: timeout, interval: .milliseconds(20), condition)
    }
}
