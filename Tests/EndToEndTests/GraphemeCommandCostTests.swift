import Foundation
import MQTT
import TestSupport
import Testing

/// Issue 19: refused commands whose field name, or device id, is ONE character of 7,000 Unicode
/// scalars ("a" and 6,999 combining accents, 13,999 bytes) made the gateway normalize that
/// character for every string comparison and hash on the way (`==`, `Set`, `Dictionary`, `split`
/// and `hasPrefix` on characters): 2.4 times the CPU of an ASCII name of the same bytes, 20
/// commands a second under load. Against the real binary, each kind of command is sent in a
/// flood of plain names and a flood of such characters, alternately, and the gateway's own CPU
/// time for each flood is compared: a ratio, which the machine's load moves little (a wall-clock
/// bound would follow it).
@Suite(.serialized) struct GraphemeCommandCostTests {
    static let floodSize = 150
    static let cluster = "a" + String(repeating: "\u{301}", count: 6_999)
    static let plain = String(repeating: "a", count: cluster.utf8.count)
    /// The measured ratio is 0.9-1.1 (it was 2.4-2.6 for field names before the fix, see docs/testing.md).
    static let bound = 1.5

    /// The gateway's CPU time so far (user and system), in seconds.
    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let close = try #require(text.lastIndex(of: ")"))
        // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        let ticks = try #require(Double(fields[11])) + #require(Double(fields[12]))
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A `set` refused `not_allowed` (a field the lamp does not have) or `unknown_device`.
    static func command(field: Bool, name: String, _ index: Int) -> (topic: String, payload: String) {
        field
            ? ("blebridge/lamp/set", #"{"\#(name)":1,"transaction":\#(index)}"#)
            : ("blebridge/\(name)/set", #"{"power":true,"transaction":\#(index)}"#)
    }

    /// Sends `floodSize` commands and waits for their answers; returns the gateway's CPU seconds meanwhile.
    static func flood(_ world: SimulatedWorld, field: Bool, name: String) async throws -> Double {
        let answerTopic = field ? "blebridge/bridge/response/lamp/set" : "blebridge/bridge/response/set"
        let before = world.recorder.on(answerTopic).count
        let pid = world.gateway.process.processIdentifier
        let started = try cpuSeconds(pid)
        let flooder = MQTTClient(
            configuration: try MQTTConfiguration(
                url: world.broker.url, clientID: "e2e-grapheme-cost", protocolVersion: .v5, cleanSession: true))
        try await flooder.connect()
        for index in 0..<floodSize {
            let command = command(field: field, name: name, index)
            try flooder.publish(MQTTMessage(topic: command.topic, text: command.payload, qos: .atMostOnce)) { _ in }
        }
        try await flooder.publish(MQTTMessage(topic: "e2e/grapheme-cost-end", text: "", qos: .atLeastOnce))
        await flooder.disconnect()
        let answered = await world.recorder.wait(timeout: .seconds(120)) { messages in
            messages.lazy.filter { $0.topic == answerTopic }.count >= before + floodSize
        }
        #expect(answered, "log: \(world.gateway.log.suffix(2000))")
        return try cpuSeconds(pid) - started
    }

    @Test(arguments: [true, false]) func aCharacterOfThousandsOfScalarsCostsWhatItsBytesCost(field: Bool) async throws {
        let world = try await SimulatedWorld()
        await world.waitOnline("lamp")
        // Twice each, alternately; the smaller of each pair (load only adds).
        var plainCPU = Double.infinity
        var clusterCPU = Double.infinity
        for _ in 0..<2 {
            plainCPU = min(plainCPU, try await Self.flood(world, field: field, name: Self.plain))
            clusterCPU = min(clusterCPU, try await Self.flood(world, field: field, name: Self.cluster))
        }
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8).prefix(14)) ?? ""
        let ratio = clusterCPU / max(plainCPU, 0.01)
        print(
            "GraphemeCommandCostTests: \(field ? "field name" : "device id") of \(Self.plain.utf8.count) bytes,"
                + " \(Self.floodSize) commands: gateway CPU \(plainCPU) s ASCII, \(clusterCPU) s one character"
                + " (ratio \(ratio)); load \(load)")
        #expect(plainCPU > 0.05, "too little work to compare: \(plainCPU) s")
        #expect(ratio < Self.bound, "one character of 7,000 scalars cost \(ratio) times its ASCII bytes")
        #expect(world.gateway.process.isRunning)
        await world.shutdown()
    }
}
