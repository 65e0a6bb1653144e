import Bluetooth
import Configuration
import Foundation
import TestSupport
import Testing

@testable import Gateway

/// What `bridge/request/device/adopt` and `device/remove` leave in the state database (real
/// SQLite): docs/mqtt.md promises the removed device's stored row is deleted, and an adoption is
/// what is restored at the next start, not the automatic device it replaced.
@Suite struct GatewayAdoptionStateTests {
    static let address = "C0:FF:EE:00:00:03"

    static func pending(_ step: GatewayCommand) -> Gateway.PendingCommand {
        Gateway.PendingCommand(
            id: 1, command: ValidatedCommand(transaction: nil, source: "test", device: nil, steps: [step]),
            reply: Gateway.ReplyTarget(topic: "answers", correlationData: nil))
    }

    /// An automatic device adopted under its own id kept its `auto-devices/` row: after a restart
    /// it was an automatic device too, so removing the adoption then left the device in the
    /// configuration (as the automatic one), `apply` did not forget it, and the `adopted-devices/`
    /// row survived: the adoption came back at the next start.
    @Test func adoptingUnderTheSameIdLeavesNoAutomaticRow() async throws {
        let directory = try TemporaryDirectory(prefix: "adopt-same-id")
        let gateway = try await unstartedGateway(in: directory, json: #"{"auto_devices": {"enabled": true}}"#)
        let id = "bthome_000003"
        let entry = AutoDevices.Entry(address: Self.address, decoder: "bthome", lastSeen: Date())
        try await gateway.state.setAutoDevice(entry, id: id)
        await gateway.restoreForTest(autoDevices: [id: entry])

        await gateway.adopt(
            Self.pending(.adopt(device: id, id: id, name: "Kitchen", bindKey: nil)),
            device: id, as: id, name: "Kitchen", bindKey: nil)
        #expect(try await gateway.state.adoptedDevices()[id]?.name == "Kitchen")
        #expect(try await gateway.state.autoDevices()[id] == nil, "the adopted device is not automatic any more")
        await gateway.stop()
    }

    /// An adopted device that config.json's device with the same address outranks is not in the
    /// running configuration: removing it deleted nothing from the state database, and it came
    /// back at the next start.
    @Test func removingAnOutrankedAdoptionDeletesItsRow() async throws {
        let directory = try TemporaryDirectory(prefix: "remove-outranked")
        let gateway = try await unstartedGateway(
            in: directory,
            json: #"{"devices": [{"id": "configured", "match": {"address": "\#(Self.address)"}, "#
                + #""connection": "passive", "advertisement": {"decoder": "bthome"}}]}"#)
        let entry = AdoptedDevices.Entry(address: Self.address, decoder: "bthome", name: "Kitchen")
        try await gateway.state.setAdoptedDevice(entry, id: "kitchen")
        await gateway.restoreForTest(adopted: ["kitchen": entry])

        await gateway.removeDevice(Self.pending(.removeDevice(device: "kitchen")), "kitchen")
        #expect(try await gateway.state.adoptedDevices()["kitchen"] == nil, "the stored adoption is deleted")
        await gateway.stop()
    }
}

extension Gateway {
    /// What ``start()`` restores from the state database, without starting.
    func restoreForTest(
        autoDevices restored: [String: AutoDevices.Entry] = [:], adopted entries: [String: AdoptedDevices.Entry] = [:]
    ) async {
        autoDevices = AutoDevices(entries: restored, loadedAt: Date())
        adopted = AdoptedDevices(entries: entries)
        await apply(expanded(configured), reason: "restored for a test")
    }
}
