import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// Issue 21 item 3 with real parts: three `blebridge run` processes in shared-broker mode, each on
/// its own private bus with its own simulated adapter, one real mosquitto, all hearing the demo's
/// passive BTHome sensor. Each simulator's copy of the sensor sends its own humidity, so the state
/// on `blebridge/bthome` tells which gateway published it: only the nearest (gw-b) may.
/// docs/multi-gateway.md, "De-duplication of passive readings".
@Suite(.serialized) struct MultiGatewayPassiveEndToEndTests {
    typealias Member = SharedBrokerEndToEndTests.Member
    typealias View = MultiGatewayEndToEndTests.View
    /// dBm and humidity (%) of the sensor per gateway (the generator swings ±3.1 % around it).
    static let heard: [String: (rssi: Int16, humidity: Double)] = [
        "gw-a": (-70, 20), "gw-b": (-52, 50), "gw-c": (-81, 80),
    ]

    /// The gateway whose simulator sent `humidity`.
    static func source(_ humidity: Double) -> String {
        heard.min { abs($0.value.humidity - humidity) < abs($1.value.humidity - humidity) }!.key
    }

    static func scenario(_ id: String) throws -> Scenario {
        var scenario = try Scenario.load("demo")
        scenario.devices = scenario.devices.filter { $0.id == "bthome" }
        for index in scenario.devices.indices {
            scenario.devices[index].rssi = heard[id]?.rssi ?? -90
            scenario.devices[index].rssiJitter = 0
            for data in scenario.devices[index].advertisement.serviceData.indices {
                scenario.devices[index].advertisement.serviceData[data].generator?.humidity = heard[id]?.humidity ?? 0
            }
        }
        return scenario
    }

    static func configure(_ configuration: inout [String: Any]) {
        let configured = configuration["devices"] as? [[String: Any]] ?? []
        configuration["devices"] = configured.filter { $0["id"] as? String == "bthome" }
        // The sample's raw GATT rules name the lamp, which is not configured here.
        var commands = configuration["commands"] as? [String: Any] ?? [:]
        commands["raw_gatt"] = nil
        configuration["commands"] = commands
    }

    @Test func onlyTheNearestGatewayPublishesAPassiveSensorAndItsStandbyTakesOverAtItsWill() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        let view = View(recorder: recorder)
        let members = try await MultiGatewayEndToEndTests.start(broker, scenario: Self.scenario, edit: Self.configure)
        func logs() -> String { MultiGatewayEndToEndTests.logs(members) }
        let state = "blebridge/bthome"
        /// The humidity of every state sampled after `instant` (its `ts`: a state a gateway sampled
        /// before it learnt of a new owner may arrive after the recorder did).
        func sources(after instant: Date) -> [String] {
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return recorder.on(state).compactMap { message in
                guard let json = recorder.json(message), let ts = (json["ts"] as? String).flatMap(format.date),
                    ts > instant
                else { return nil }
                return (json["humidity"] as? NSNumber).map { Self.source($0.doubleValue) }
            }
        }
        let started = Date()
        // The nearest gateway's candidacy says it publishes the sensor.
        let elected = await recorder.wait(timeout: .seconds(40)) { _ in view.holders("bthome") == ["gw-b"] }
        #expect(elected, "holders \(view.holders("bthome"))\n\(logs())")
        let electedAt = Date()
        print(
            "multi-gateway passive: publisher elected \(Int(electedAt.timeIntervalSince(started) * 1000)) ms after the start"
        )
        // From then on every state is gw-b's: 8 of them (one advertisement a second each).
        let eight = await recorder.wait(timeout: .seconds(30)) { _ in sources(after: electedAt).count >= 8 }
        #expect(eight, "states after the election: \(sources(after: electedAt))")
        #expect(Set(sources(after: electedAt)) == ["gw-b"], "\(sources(after: electedAt))\n\(logs())")

        // SIGKILL of gw-b: at its will gw-a (the next nearest) publishes, and gw-c still does not.
        let killed = Date()
        members["gw-b"]!.gateway.process.signal(SIGKILL)
        await members["gw-b"]!.gateway.process.waitForExit()
        let will = await SharedBrokerEndToEndTests.recordArrival(
            "gw-b", "offline", on: recorder, after: killed, timeout: .seconds(10))
        #expect(will != nil, "no will of gw-b")
        let after = will ?? killed
        let resumed = await recorder.wait(timeout: .seconds(20)) { _ in sources(after: after).count >= 5 }
        let states = sources(after: after)
        #expect(resumed, "states after the will: \(states)\n\(logs())")
        #expect(Set(states) == ["gw-a"], "\(states)")
        let first = recorder.arrivals(on: state).first { $0.arrival > killed }?.arrival
        print(
            "multi-gateway passive: SIGKILL of the publisher -> first state from the standby "
                + "\(first.map { "\(Int($0.timeIntervalSince(killed) * 1000)) ms" } ?? "never"); "
                + "load \(MultiGatewayEndToEndTests.loadAverage())")

        for member in members.values { await member.stop() }
        await recorder.close()
        await broker.stop()
    }
}
