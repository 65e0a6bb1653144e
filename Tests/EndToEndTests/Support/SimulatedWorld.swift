import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// A private bus with the simulator (demo scenario, in this process), a real broker, the real
/// `blebridge run` subprocess pointed at both, and a recorder subscribed to everything.
final class SimulatedWorld: Sendable {
    let bus: DBusDaemonFixture
    let simulator: BlueZSimulator
    let broker: MosquittoFixture
    let recorder: MQTTRecorder
    let gateway: GatewayProcess

    static let strap = "C0:FF:EE:00:00:01"
    static let thermometer = "C0:FF:EE:00:00:02"
    static let lamp = "C0:FF:EE:00:00:05"
    static let power = "6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
    static let brightness = "6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b"

    init(
        scenario: String = "demo", passing: ScenarioPassing? = nil, healthInterval: String = "30s",
        outboxDirectory: String? = nil, disconnectDelay: Duration = .milliseconds(100),
        edit: (inout [String: Any]) -> Void = { _ in },
        beforeGateway: (MQTTRecorder) async throws -> Void = { _ in },
        world: (inout Scenario) -> Void = { _ in }
    ) async throws {
        bus = try await DBusDaemonFixture()
        var loaded = try Scenario.load(scenario)
        loaded.passing = passing ?? loaded.passing
        world(&loaded)
        simulator = BlueZSimulator(
            scenario: loaded, options: BlueZSimulator.Options(disconnectDelay: disconnectDelay))
        try await simulator.start(busAddress: bus.address)
        broker = try await MosquittoFixture()
        recorder = try await MQTTRecorder(url: broker.url, cleanSession: false)
        try await recorder.subscribe("blebridge/#")
        try await recorder.subscribe("homeassistant/#")
        try await beforeGateway(recorder)
        gateway = try GatewayProcess(
            brokerURL: broker.url, busAddress: bus.address, healthInterval: healthInterval,
            outboxDirectory: outboxDirectory, edit: edit)
    }

    /// The JSON states published for `device` so far.
    func states(_ device: String) -> [[String: Any]] {
        recorder.on("blebridge/\(device)").compactMap(recorder.json)
    }

    /// Waits for a state of `device` satisfying `predicate`.
    func state(
        _ device: String, timeout: Duration = .seconds(20),
        where predicate: @escaping ([String: Any]) -> Bool = { _ in true }
    ) async -> [String: Any]? {
        let recorder = self.recorder
        let message = await recorder.first(on: "blebridge/\(device)", timeout: timeout) { message in
            recorder.json(message).map(predicate) ?? false
        }
        return message.flatMap(recorder.json)
    }

    /// Waits until `device` is announced online; records an issue with the gateway's log if not.
    func waitOnline(_ device: String, timeout: Duration = .seconds(30)) async {
        let online = await recorder.first(on: "blebridge/\(device)/availability", timeout: timeout) {
            $0.text == "online"
        }
        #expect(online != nil, "\(device) never online; log: \(gateway.log.suffix(3000))")
    }

    func shutdown() async {
        if gateway.process.isRunning {
            gateway.process.signal(SIGTERM)
            await gateway.process.waitForExit(timeout: .seconds(15))
        }
        await recorder.close()
        await simulator.stop()
        await broker.stop()
        await bus.stop()
    }
}
