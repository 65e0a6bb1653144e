import Dispatch
import EventLoop
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MQTT

#if canImport(Glibc)
    import Glibc
#endif

/// What the client puts on the wire, against a broker that never acknowledges.
///
/// `MQTTConfiguration.sendMaximum`: how many QoS 1 publishes libmosquitto keeps on the wire before
/// the broker acknowledges any. Without it libmosquitto keeps 20 there, whatever window its caller
/// keeps (the gateway's `outbox.inflight`, 64 by default), and queues the rest until PUBACKs come.
/// And the TCP segments a burst of publishes takes.
///
/// mosquitto acknowledges at once, so the broker here is a scripted peer on a loopback port
/// (`WithholdingBroker`): it accepts the connection and never acknowledges a publish.
@Suite struct MQTTClientWireTests {
    @Test(arguments: [(nil, 20), (40, 40)] as [(Int?, Int)])
    func publishesOnTheWireStopAtTheSendMaximum(sendMaximum: Int?, onTheWire: Int) async throws {
        let broker = try WithholdingBroker()
        defer { broker.close() }
        let client = MQTTClient(
            configuration: try MQTTConfiguration(
                url: "mqtt://127.0.0.1:\(broker.port)", clientID: "send-maximum", sendMaximum: sendMaximum))
        try await client.start()
        #expect(await MQTTTestHelpers.waitForState(client) { $0.isConnected })
        for index in 0..<60 {
            try client.publish(MQTTMessage(topic: "qos1/\(index)", text: "x", qos: .atLeastOnce)) { _ in }
        }
        // A QoS 0 publish is not held back: it goes out after the QoS 1 publishes written before it,
        // so once it arrived the broker has every QoS 1 publish the client put on the wire.
        try client.publish(MQTTMessage(topic: "marker", text: "x", qos: .atMostOnce)) { _ in }
        #expect(await waitUntil { broker.topics.contains("marker") }, "the QoS 0 marker never arrived")
        let qos1 = broker.topics.filter { $0.hasPrefix("qos1/") }
        #expect(qos1 == (0..<onTheWire).map { "qos1/\($0)" })
        #expect(client.publishesAwaitingAcknowledgement == 60)
        await client.disconnect()
    }

    /// The packets of one write turn leave in a few TCP segments, not one each: the loop corks the
    /// socket while libmosquitto writes more than one packet (`TCP_NODELAY` sent each alone). The
    /// loop's thread is held while 50 publishes are queued, so they are written in one turn; the
    /// socket's own count of segments sent (`TCP_INFO`) tells how many they took.
    @Test func theBurstOfOneWriteTurnLeavesInFewSegments() async throws {
        let broker = try WithholdingBroker()
        defer { broker.close() }
        let client = MQTTClient(
            configuration: try MQTTConfiguration(
                url: "mqtt://127.0.0.1:\(broker.port)", clientID: "cork", sendMaximum: 100))
        try await client.start()
        #expect(await MQTTTestHelpers.waitForState(client) { $0.isConnected })
        let connection = try #require(client.activeConnection.withLock { $0 })
        let before = try #require(Self.segmentsSent(connection.socketDescriptor))
        let gate = DispatchSemaphore(value: 0)
        #expect(connection.loop.execute { gate.wait() })
        for index in 0..<50 {
            try client.publish(MQTTMessage(topic: "burst/\(index)", text: "x", qos: .atLeastOnce)) { _ in }
        }
        gate.signal()
        #expect(await waitUntil { broker.topics.count == 50 }, "the burst did not arrive: \(broker.topics.count)")
        let sent = try #require(Self.segmentsSent(connection.socketDescriptor)) - before
        #expect(sent <= 5, "50 publishes written in one turn took \(sent) TCP segments")
        await client.disconnect()
    }

    /// `tcpi_segs_out` of the socket's `TCP_INFO` (Linux 4.2 on; the struct only grows, so the
    /// field stays at byte 136: glibc's `struct tcp_info` stops before it).
    static func segmentsSent(_ fd: Int32) -> UInt32? {
        var info = [UInt8](repeating: 0, count: 256)
        var length = socklen_t(info.count)
        let read = info.withUnsafeMutableBytes {
            getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) == 0
        }
        guard read, length >= 140 else { return nil }
        return info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 136, as: UInt32.self) }
    }

    @Test func aSendMaximumOutsideOneTo65535IsRefused() async throws {
        for value in [0, 65536] {
            let client = MQTTClient(
                configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:1", clientID: "bad", sendMaximum: value))
            await #expect(throws: MQTTError.self) { try await client.start() }
        }
    }
}
