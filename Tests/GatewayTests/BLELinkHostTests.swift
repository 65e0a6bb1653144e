import BlueZ
import Bluetooth
import Foundation
import Synchronization
import TestSupport
import Testing
import Timekeeping

@testable import Gateway

/// The seam between ``BLELink`` and the ``Gateway`` (``BLELink/Host``): the link reports events and
/// asks questions through what the gateway gives it, never through the gateway itself. Without a
/// bus: the gateway's side is driven through the host it builds, the link's side records what it
/// reports to a host of the test's own.
@Suite struct BLELinkHostTests {
    static let address = "C0:FF:EE:00:00:01"
    static let json =
        #"{"devices": [{"id": "strap", "match": {"address": "\#(address)"}, "connection": "keep_connected", "#
        + #""subscribe": [{"characteristic": "heart_rate_measurement"}]}, "#
        + #"{"id": "lamp", "match": {"name_prefix": "Lamp"}, "connection": "passive", "#
        + #""advertisement": {"decoder": "bthome"}}]}"#

    /// Every event reaches the handler it stands for, and every question the gateway's answer.
    @Test func theGatewayHandlesWhatItsHostIsGiven() async throws {
        let directory = try TemporaryDirectory(prefix: "link-host")
        let gateway = try await unstartedGateway(in: directory, json: Self.json)
        let host = await gateway.linkHost()

        #expect(await host.seen("strap", Self.address, -61, false) == true, "publishes without shared-broker mode")
        #expect(await gateway.devices["strap"]?.rssi == -61)
        #expect(await gateway.devices["strap"]?.lastSeen != nil)

        await host.report(.connected("strap", services: ["180D"]), nil)
        #expect(await gateway.devices["strap"]?.connected == true)
        #expect(await gateway.devices["strap"]?.services == ["180D"])
        await host.report(.disconnected("strap", expected: false), nil)
        #expect(await gateway.devices["strap"]?.connected == false)
        #expect(await gateway.counters.reconnects == 1, "an unexpected drop of a connected device counts")
        await host.report(.connected("strap", services: ["180D"]), nil)
        await host.report(.adapterPowered(false), nil)
        #expect(await gateway.devices["strap"]?.connected == false, "the adapter going off drops every link")
        await host.report(.unseen("strap"), nil)
        #expect(await gateway.unseenByBlueZ.contains("strap"))

        let health = BluetoothHealth(adapter: "hci0", lastError: "gone", problem: .adapterMissing)
        await host.report(.health(health), nil)
        #expect(await gateway.bluetooth == health)

        // The match without an address keeps its id for the first fixed address it catches.
        let lamp = try #require(BluetoothAddress("C0:FF:EE:00:00:02"))
        #expect(await host.assignMatch(lamp, "lamp") == "lamp")
        #expect(await gateway.instances.bindings["lamp"]?.isEmpty == false)
        // Automatic devices are off: none is made.
        #expect(await host.addAutoDevice(lamp, "bthome", nil) == nil)

        // The known peripherals are the state database's.
        let known = KnownPeripheral(
            deviceID: "strap", address: Self.address, addressType: "public", services: ["180D"],
            subscriptions: ["2A37"], lastSeen: Date(timeIntervalSince1970: 1_700_000_000))
        try await host.remember(known)
        #expect(try await host.knownPeripherals() == [known])
        #expect(try await gateway.state.knownPeripherals() == [known])
        await gateway.stop()
    }

    /// The link reports to the host it was given: what it says without a bus (the bus refused, a
    /// connect or disconnect with no central, a poll), each as the event the gateway handles.
    @Test func theLinkReportsToItsHost() async throws {
        let directory = try TemporaryDirectory(prefix: "link-events")
        let gateway = try await unstartedGateway(in: directory, json: Self.json)
        let events = Mutex<[BLELink.Event]>([])
        let host = BLELink.Host(
            report: { event, _ in events.withLock { $0.append(event) } },
            seen: { _, _, _, _ in true }, assignMatch: { _, template in template },
            addAutoDevice: { _, _, _ in nil }, knownPeripherals: { [] }, remember: { _ in })
        let (configuration, pipeline, clock) = await (gateway.model.configuration, gateway.pipeline, gateway.clock)
        let link = BLELink(
            host: host, configuration: configuration, busAddress: "unix:path=\(directory.file("no-bus").path)",
            pipeline: pipeline, clock: clock, thread: try BlueZBusThread())

        // The health is reported before start returns.
        await link.start()
        let reported = events.withLock { $0 }
        guard case .health(let health)? = reported.first else {
            Issue.record("no health reported by a start without a bus: \(reported)")
            return
        }
        #expect(health.problem == .busUnavailable)

        await link.connect("strap")
        await link.disconnect("lamp")
        await link.poll("strap")
        let expected: [BLELink.Event] = [
            .connectFailed("strap", error: "not seen by the adapter"), .disconnected("lamp", expected: true),
            .pollFinished("strap"),
        ]
        #expect(
            await waitUntil { expected.allSatisfy { event in events.withLock { $0.contains(event) } } },
            "reported: \(events.withLock { $0 })")
        await link.stop(until: .now + .seconds(1))
        await gateway.stop()
    }
}
