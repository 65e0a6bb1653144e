import Foundation
import MQTT
import Outbox
import TestSupport
import Testing

/// A SIGTERM while devices stream: no value a device handed to the gateway's notify socket before
/// its link went down is lost. The simulator numbers a value only when the gateway's socket takes it
/// (`loadStatistics().lastSequences`), so each of the numbers 1…last of each device must be in the
/// broker or in the outbox the gateway left: its stop drains the backlog for `drainTimeout` (5 s)
/// and keeps the rest for the next start. On a loaded machine 4,000 values/s outrun the publisher:
/// 1,056–1,591 values a device were in the outbox at exit in a full run at load 30 (2 of 6 runs of
/// this test alone failed at load 33–35 when it asked for every value in the broker). The gateway
/// stopped accepting readings before it disconnected the devices, and cancelled their listeners with
/// values still in the sockets: the last values of every device were lost to each stop, in neither
/// place.
///
/// A notify socket that is full drops the value, as bluetoothd does (`io_send` fails with `EAGAIN`):
/// a gateway starved of CPU on a loaded machine (load 45–56) does not read its sockets for a while,
/// and 400–1,800 values a device in the middle of the stream never reached it. Those were counted as
/// lost until the simulator recorded them (`loadDroppedSequences`); they are the radio's loss, not
/// the gateway's, and are reported, not failed.
@Suite struct ShutdownDrainTests {
    static let devices = 4
    static let characteristic = "6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b"

    @Test func aSIGTERMPublishesEveryValueTheDevicesSentBeforeTheirLinksWentDown() async throws {
        let world = try await SimulatedWorld(scenario: "load") { Self.streamLoad(Self.devices, in: &$0) }
        try await world.simulator.setLoad(devices: Self.devices, rate: 1000)
        let streaming = await world.recorder.wait(timeout: .seconds(60)) { messages in
            let topics = Set(messages.map(\.topic))
            return (0..<Self.devices).allSatisfy { topics.contains(String(format: "blebridge/load%02d", $0)) }
        }
        #expect(streaming, "not every device published; log: \(world.gateway.log.suffix(3000))")

        let atSignal = await world.simulator.loadStatistics().lastSequences
        world.gateway.process.signal(SIGTERM)
        let status = await world.gateway.process.waitForExit(timeout: .seconds(30))
        #expect(status == 0, "exit \(String(describing: status)); log: \(world.gateway.log.suffix(3000))")
        let sent = await world.simulator.loadStatistics().lastSequences
        // Values the gateway never had: dropped at a full notify socket (see above).
        var dropped: [Int: Set<UInt64>] = [:]
        for device in 0..<Self.devices {
            dropped[device] = Set(await world.simulator.loadDroppedSequences(device: device).flatMap { Array($0) })
        }
        // What the drain did not publish is in the outbox the gateway closed.
        let store = try await OutboxStore(path: world.gateway.outboxPath)
        let kept = try await store.next(limit: 1_000_000).map { (topic: $0.entry.topic, payload: $0.entry.payload) }
        let outboxStats = try await store.stats()
        await store.close()
        let inOutbox = Self.sequences(kept)
        func missing(_ device: Int, received: [Int: Set<UInt64>]) -> [UInt64] {
            let last = sent.indices.contains(device) ? sent[device] : 0
            return (1...max(last, 1)).filter {
                !(received[device]?.contains($0) ?? false) && !(inOutbox[device]?.contains($0) ?? false)
                    && !(dropped[device]?.contains($0) ?? false)
            }
        }
        // What the gateway published before it exited is in the broker; the recorder may still be
        // receiving it.
        let complete = await world.recorder.wait(timeout: .seconds(20)) { messages in
            let received = Self.sequences(messages.map { ($0.topic, $0.payload) })
            return (0..<Self.devices).allSatisfy { missing($0, received: received).isEmpty }
        }
        let received = Self.sequences(world.recorder.all.map { ($0.topic, $0.payload) })
        for device in 0..<Self.devices {
            let last = sent.indices.contains(device) ? sent[device] : 0
            #expect(last > 0, "device \(device) sent nothing")
            let lost = missing(device, received: received)
            #expect(
                lost.isEmpty,
                "device \(device): \(lost.count) of \(last) values lost, \(lost.prefix(20))…; dropped at a full socket \(dropped[device]?.count ?? 0); recorder complete: \(complete), recorded \(world.recorder.all.count), outbox \(outboxStats); log: \(world.gateway.log.suffix(6000))"
            )
        }
        print(
            "ShutdownDrainTests: values kept in the outbox at exit, by device: \((0..<Self.devices).map { inOutbox[$0]?.count ?? 0 }); dropped at a full notify socket: \((0..<Self.devices).map { dropped[$0]?.count ?? 0 }), of them after the SIGTERM: \((0..<Self.devices).map { device in dropped[device]?.filter { $0 > (atSignal.indices.contains(device) ? atSignal[device] : 0) }.count ?? 0 }); load \(Self.loadAverage())"
        )
        await world.shutdown()
    }

    /// Configures `count` load devices (`load00`, …), each kept connected with its load characteristic
    /// subscribed, and every value published as its own state (no state window), without Home
    /// Assistant discovery or raw GATT commands.
    static func streamLoad(_ count: Int, in configuration: inout [String: Any]) {
        configuration["devices"] = (0..<count).map { index in
            [
                "id": String(format: "load%02d", index),
                "match": ["address": String(format: "C0:FF:EE:10:00:%02X", index)],
                "connection": "keep_connected",
                "subscribe": [["characteristic": Self.characteristic, "mode": "notify"]],
            ] as [String: Any]
        }
        configuration["homeassistant"] = ["enabled": false]
        configuration["commands"] = ["raw_gatt": ["enabled": false, "allow": [Any]()]]
        if var mqtt = configuration["mqtt"] as? [String: Any] {
            mqtt["state_window"] = "0ms"
            configuration["mqtt"] = mqtt
        }
    }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(1)
            .joined()
    }

    /// Per load device (the value's first 4 bytes), the sequence numbers (its next 8) received.
    static func sequences(_ messages: [(topic: String, payload: [UInt8])]) -> [Int: Set<UInt64>] {
        var result: [Int: Set<UInt64>] = [:]
        for message in messages where message.topic.hasPrefix("blebridge/load") {
            guard let document = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
            else { continue }
            for case let text as String in document.values where text.count == 40 {
                guard let bytes = Self.bytes(hex: text) else { continue }
                let device = bytes[0..<4].reversed().reduce(0) { $0 << 8 | Int($1) }
                let sequence = bytes[4..<12].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                result[device, default: []].insert(sequence)
            }
        }
        return result
    }

    static func bytes(hex: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
