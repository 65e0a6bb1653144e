import BlueZ
import BlueZSimulator
import Decoders
import Foundation
import TestSupport

@testable import Gateway

/// A ``BLELink`` on a private bus with the simulator on it, configured as an unstarted gateway
/// with `json` (whose pipeline and clock it uses), reporting to a host of the test's own.
struct SimulatedLink {
    let bus: DBusDaemonFixture
    let simulator: BlueZSimulator
    let directory: TemporaryDirectory
    let gateway: Gateway
    let link: BLELink

    init(
        json: String, prefix: String, scenario: Scenario? = nil, decoders: DecoderRegistry = .standard,
        host: (Gateway) async -> BLELink.Host
    ) async throws {
        bus = try await DBusDaemonFixture()
        simulator = BlueZSimulator(scenario: try scenario ?? Scenario.load("demo"))
        try await simulator.start(busAddress: bus.address)
        directory = try TemporaryDirectory(prefix: prefix)
        gateway = try await unstartedGateway(in: directory, json: json)
        let (configuration, pipeline, clock) = await (gateway.model.configuration, gateway.pipeline, gateway.clock)
        link = BLELink(
            host: await host(gateway), configuration: configuration, busAddress: bus.address, pipeline: pipeline,
            clock: clock, thread: try BlueZBusThread(), decoders: decoders)
    }

    /// Stops the link, the gateway, the simulator and the bus.
    func close() async {
        await link.stop(until: .now + .seconds(1))
        await gateway.stop()
        await simulator.stop()
        await bus.stop()
    }
}
