import BlueZSimulator
import Configuration
import Foundation
import TestSupport
import Testing

@testable import Gateway

/// A gateway running in the test process (so a test can hold its notify thread), streaming
/// `devices` of the simulator's load devices (`load00`…, 20 values/s each) to a real broker over a
/// private bus, with a real outbox: the world of `PowerOffDrainTests` and `DisconnectDrainTests`.
final class InProcessLoadWorld: Sendable {
    /// How the devices' values reach the gateway.
    enum Stream: Sendable {
        /// Each device's configuration subscribes to its load characteristic.
        case subscription
        /// Nothing is configured: a raw `bridge/request/gatt/notify` per device starts the stream,
        /// published on the raw topic (``rawTopic(_:)``).
        case rawNotify
    }

    let bus: DBusDaemonFixture
    let simulator: BlueZSimulator
    let broker: MosquittoFixture
    let recorder: MQTTRecorder
    let directory: TemporaryDirectory
    let gateway: Gateway
    /// The gateway's `run()`, which returns after ``shutdown()``'s stop.
    let running: Task<Void, Never>
    let devices: Int

    /// Started, and every device published (an issue is recorded otherwise).
    init(devices: Int, prefix: String, stream: Stream = .subscription) async throws {
        self.devices = devices
        bus = try await DBusDaemonFixture()
        simulator = BlueZSimulator(scenario: try Scenario.load("load"))
        try await simulator.start(busAddress: bus.address)
        broker = try await MosquittoFixture()
        recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        directory = try TemporaryDirectory(prefix: prefix)
        var object = try GatewayProcess.repositoryConfiguration()
        ShutdownDrainTests.streamLoad(devices, in: &object)
        if stream == .rawNotify { Self.allowRawNotify(devices, in: &object) }
        if var bluetooth = object["bluetooth"] as? [String: Any] {
            bluetooth["max_connections"] = devices
            object["bluetooth"] = bluetooth
        }
        let configuration = try ConfigurationLoader().decode(JSONSerialization.data(withJSONObject: object))
        gateway = try await Gateway(
            configuration: configuration,
            options: GatewayOptions(
                busAddress: bus.address, brokerURL: broker.url, outboxPath: directory.file("outbox.sqlite").path))
        running = try await gateway.runInTask()
        try await simulator.setLoad(devices: devices, rate: 20)
        if stream == .rawNotify {
            // A request for a device the adapter has not seen yet is answered `device_unavailable`:
            // each is sent once its device is connected (`online`).
            let connected = await recorder.wait(timeout: .seconds(60)) { messages in
                let online = Set(
                    messages.filter { String(decoding: $0.payload, as: UTF8.self).contains("online") }.map(\.topic))
                return (0..<devices).allSatisfy {
                    online.contains(String(format: "blebridge/load%02d/availability", $0))
                }
            }
            #expect(connected, "not every device connected")
            for device in 0..<devices {
                let answer = try await notify(device, enable: true)
                #expect(answer == "ok", "gatt/notify of load\(device): \(answer ?? "no answer")")
            }
        }
        let published = (0..<devices).map {
            stream == .rawNotify ? Self.rawTopic($0) : String(format: "blebridge/load%02d", $0)
        }
        let streaming = await recorder.wait(timeout: .seconds(60)) { messages in
            Set(published).isSubset(of: messages.map(\.topic))
        }
        #expect(streaming, "not every device published")
    }

    /// The raw topic of load device `device`'s load characteristic.
    static func rawTopic(_ device: Int) -> String {
        String(format: "blebridge/load%02d/raw/", device) + ShutdownDrainTests.characteristic
    }

    /// Leaves the load devices' subscriptions out, and allows raw notify requests on their load
    /// characteristic, published on the raw topics.
    static func allowRawNotify(_ count: Int, in configuration: inout [String: Any]) {
        configuration["devices"] = (configuration["devices"] as? [[String: Any]] ?? []).map {
            var device = $0
            device["subscribe"] = [Any]()
            return device
        }
        let allow = (0..<count).map {
            [
                "device": String(format: "load%02d", $0), "characteristic": ShutdownDrainTests.characteristic,
                "operations": ["notify"],
            ] as [String: Any]
        }
        configuration["commands"] = ["raw_gatt": ["enabled": true, "allow": allow]]
        if var mqtt = configuration["mqtt"] as? [String: Any] {
            mqtt["raw_topics"] = true
            configuration["mqtt"] = mqtt
        }
    }

    /// Sends `bridge/request/gatt/notify` for load device `device`'s load characteristic; the
    /// answer's status or error code (nil without an answer within 30 s).
    func notify(_ device: Int, enable: Bool) async throws -> String? {
        let transaction = UUID().uuidString
        try await recorder.publish(
            "blebridge/bridge/request/gatt/notify",
            String(
                format: #"{"device":"load%02d","characteristic":"%@","enable":%@,"transaction":"%@"}"#, device,
                ShutdownDrainTests.characteristic, enable ? "true" : "false", transaction))
        let answer = await recorder.first(on: "blebridge/bridge/response/gatt/notify", timeout: .seconds(30)) {
            self.recorder.json($0)?["transaction"] as? String == transaction
        }
        guard let document = answer.flatMap(recorder.json) else { return nil }
        return (document["error"] as? [String: Any])?["code"] as? String ?? document["status"] as? String
    }

    func shutdown() async {
        await gateway.stop()
        await running.value
        await recorder.close()
        await simulator.stop()
        await broker.stop()
        await bus.stop()
    }
}
