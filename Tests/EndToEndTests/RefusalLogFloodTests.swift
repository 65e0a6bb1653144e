import Foundation
import MQTT
import TestSupport
import Testing

/// Issue 19, D12: a hostile client's refused commands filled 23 MB of log in one run (every
/// refusal logged with its full value). Against the real binary: a flood of refused commands
/// costs at most 5 "command refused" lines a second, each with topic and reason cut to 200
/// characters, with control characters escaped.
@Suite(.serialized) struct RefusalLogFloodTests {
    static let floodSize = 600
    /// The gateway's limit: 5 lines within a second (counted from the first of them).
    static let burst = 5
    /// Topic and reason are cut to 200 Unicode scalars; the escape of one is at most 8 bytes
    /// (`\u{2028}`), a character at most 4; then `…(N bytes)` and the quotes.
    static let valueBytes = 200 * 8 + 32
    /// Level, label, message, the two values, code and `not_logged_since_last`.
    static let lineBytes = 2 * valueBytes + 160

    /// The flood's commands, in turn: an unknown field whose name carries CR, LF, ESC and NUL
    /// (refused `not_allowed`, the reason quotes it); an unknown field that is a single
    /// character of 7,000 scalars ("a" and combining accents), which no character count cuts;
    /// a device id of such a character in the topic (`unknown_device`, answered on
    /// `bridge/response/set`). Each payload is under the 16 KiB command limit, so each is read.
    static func command(_ index: Int) -> (topic: String, payload: String) {
        let accents = "a" + String(repeating: "\u{301}", count: 7_000)
        switch index % 3 {
        case 0:
            let controls = String(repeating: #"\r\n\u001b[2J\u0000"#, count: 500)
            return ("blebridge/lamp/set", #"{"k\#(controls)":1,"transaction":\#(index)}"#)
        case 1:
            return ("blebridge/lamp/set", #"{"\#(accents)":1,"transaction":\#(index)}"#)
        default:
            return ("blebridge/\(accents)/set", #"{"power":true,"transaction":\#(index)}"#)
        }
    }

    @Test func refusedCommandLinesAreRateLimitedAndCut() async throws {
        let world = try await SimulatedWorld()
        await world.waitOnline("lamp")
        let before = world.gateway.process.standardError.utf8.count
        let answerTopics: Set = ["blebridge/bridge/response/lamp/set", "blebridge/bridge/response/set"]
        let flooder = MQTTClient(
            configuration: try MQTTConfiguration(
                url: world.broker.url, clientID: "e2e-refusal-flood", protocolVersion: .v5, cleanSession: true))
        try await flooder.connect()
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0..<Self.floodSize {
            let command = Self.command(index)
            try flooder.publish(MQTTMessage(topic: command.topic, text: command.payload, qos: .atMostOnce)) { _ in }
        }
        try await flooder.publish(MQTTMessage(topic: "e2e/refusal-flood-end", text: "", qos: .atLeastOnce))
        await flooder.disconnect()
        let answered = await world.recorder.wait(timeout: .seconds(120)) { messages in
            messages.lazy.filter { answerTopics.contains($0.topic) }.count >= Self.floodSize
        }
        let took = clock.now - started
        let log = String(decoding: world.gateway.process.standardError.utf8.dropFirst(before), as: UTF8.self)
        let answers = world.recorder.all.filter { answerTopics.contains($0.topic) }.compactMap(world.recorder.json)
        #expect(answered, "\(answers.count) of \(Self.floodSize) answered; log: \(log.suffix(3000))")
        let codes = Set(answers.compactMap { ($0["error"] as? [String: Any])?["code"] as? String })
        #expect(codes == ["not_allowed", "unknown_device"], "\(codes)")

        let lines = log.split(separator: "\n", omittingEmptySubsequences: true)
        let refusals = lines.filter { $0.contains("command refused") }
        // Windows of at least a second each, all within the run: at most ⌊T⌋ + 1 of them.
        let windows = Int(took.components.seconds) + 1
        let bound = Self.burst * windows
        let held = refusals.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("not_logged_since_last=") }.flatMap {
                Int($0.dropFirst("not_logged_since_last=".count))
            }
        }.reduce(0, +)
        let longest = refusals.map(\.utf8.count).max() ?? 0
        print(
            "RefusalLogFloodTests: \(Self.floodSize) refused commands answered in \(took); \(refusals.count)"
                + " refusal lines (bound \(bound)), \(held) counted as not logged; longest \(longest) bytes;"
                + " log grew \(log.utf8.count) bytes")
        #expect(refusals.count >= 1)
        #expect(refusals.count <= bound, "\(refusals.count) refusal lines in \(took)")
        #expect(refusals.count + held <= Self.floodSize)
        #expect(
            longest <= Self.lineBytes,
            "a refusal line of \(longest) bytes: \(refusals.max { $0.count < $1.count }?.prefix(300) ?? "")")
        // Control characters from the client are escaped: none reaches the log raw.
        #expect(!log.unicodeScalars.contains { $0 == "\r" || $0 == "\u{1B}" || $0 == "\u{0}" })
        #expect(world.gateway.process.isRunning)
        await world.shutdown()
    }
}
