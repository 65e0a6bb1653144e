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

/// A loopback peer that speaks just enough MQTT 5 for one client: CONNACK for its CONNECT, PINGRESP
/// for its pings, and nothing for its publishes, whose topics it records in order.
final class WithholdingBroker: Sendable {
    let port: UInt16
    private let listener: Int32
    private let received = Mutex<[String]>([])

    /// The topics of the publishes received, in order.
    var topics: [String] { received.withLock { $0 } }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socket in
                bind(fd, socket, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, socket, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { Glibc.close(fd) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Stops accepting (the connection ends when the client disconnects).
    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve() {
        let connection = accept(listener, nil, nil)
        Glibc.close(listener)
        guard connection >= 0 else { return }
        defer { Glibc.close(connection) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            pending += chunk[0..<count]
            while let (type, body, used) = Self.packet(in: pending) {
                pending.removeFirst(used)
                switch type {
                case 1: write(connection, [0x20, 0x03, 0x00, 0x00, 0x00])  // CONNACK: accepted, no properties
                case 3: received.withLock { $0.append(Self.topic(of: body)) }
                case 12: write(connection, [0xD0, 0x00])  // PINGRESP
                case 14: return  // DISCONNECT
                default: break
                }
            }
        }
    }

    private func write(_ connection: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(connection, $0.baseAddress, $0.count) }
    }

    /// The first whole packet of `bytes`: its type, its body and how many bytes it took.
    private static func packet(in bytes: [UInt8]) -> (type: UInt8, body: ArraySlice<UInt8>, used: Int)? {
        guard let first = bytes.first else { return nil }
        var length = 0
        var shift = 0
        var index = 1
        while true {
            guard index < bytes.count, index <= 4 else { return nil }
            let byte = bytes[index]
            length |= Int(byte & 0x7F) << shift
            shift += 7
            index += 1
            if byte & 0x80 == 0 { break }
        }
        guard bytes.count >= index + length else { return nil }
        return (first >> 4, bytes[index..<(index + length)], index + length)
    }

    /// A PUBLISH body starts with the topic: a 2-byte length, then UTF-8.
    private static func topic(of body: ArraySlice<UInt8>) -> String {
        guard body.count >= 2 else { return "" }
        let start = body.startIndex
        let length = Int(body[start]) << 8 | Int(body[start + 1])
        let end = min(body.endIndex, start + 2 + length)
        return String(decoding: body[(start + 2)..<end], as: UTF8.self)
    }
}
