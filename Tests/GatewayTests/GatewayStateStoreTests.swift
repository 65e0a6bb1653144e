import Foundation
import Gateway
import Outbox
import TestSupport
import Testing

@Suite struct GatewayStateStoreTests {
    @Test func knownPeripheralsAndDiscoveryTopicsSurviveReopening() async throws {
        let directory = try TemporaryDirectory(prefix: "gateway-state")
        let path = directory.file("blebridge.sqlite").path
        let strap = KnownPeripheral(
            deviceID: "hr_strap", address: "C0:FF:EE:00:00:01", addressType: "public", services: ["180d", "180f"],
            subscriptions: ["2a37"], lastSeen: Date(timeIntervalSince1970: 1_000))
        do {
            let state = GatewayStateStore(store: try await OutboxStore(path: path))
            try await state.remember(strap)
            try await state.remember(
                KnownPeripheral(
                    deviceID: "lamp", address: "C0:FF:EE:00:00:05", addressType: "random", services: [],
                    subscriptions: [], lastSeen: Date(timeIntervalSince1970: 2_000)))
            try await state.setAnnouncedDiscovery(["homeassistant/sensor/x/y/config"], deviceID: "lamp")
            try await state.store.append(
                OutboxEntry(topic: "t", payload: [1], qos: .atLeastOnce, retain: false, sampleTime: Date(), stream: "s")
            )
            await state.store.close()
        }
        let reopened = GatewayStateStore(store: try await OutboxStore(path: path))
        let known = try await reopened.knownPeripherals()
        #expect(known.map(\.deviceID) == ["hr_strap", "lamp"])
        #expect(known.first == strap)
        #expect(try await reopened.announcedDiscovery() == ["lamp": ["homeassistant/sensor/x/y/config"]])
        #expect(try await reopened.store.stats().depth == 1)
        try await reopened.forget(deviceID: "lamp")
        #expect(try await reopened.knownPeripherals().map(\.deviceID) == ["hr_strap"])
        #expect(try await reopened.announcedDiscovery().isEmpty)
    }

    /// The ids a match without an address assigned (``MatchInstances``) survive a restart.
    @Test func matchBindingsSurviveReopeningAndAreForgottenWithTheirDevice() async throws {
        let directory = try TemporaryDirectory(prefix: "gateway-state")
        let path = directory.file("blebridge.sqlite").path
        do {
            let state = GatewayStateStore(store: try await OutboxStore(path: path))
            try await state.setMatchBindings(["A4:C1:38:8D:18:B2", "A4:C1:38:CF:01:56"], deviceID: "one")
            try await state.setMatchBindings(["A4:C1:38:00:00:01"], deviceID: "two")
            await state.store.close()
        }
        let reopened = GatewayStateStore(store: try await OutboxStore(path: path))
        #expect(
            try await reopened.matchBindings()
                == ["one": ["A4:C1:38:8D:18:B2", "A4:C1:38:CF:01:56"], "two": ["A4:C1:38:00:00:01"]])
        try await reopened.forget(deviceID: "two")
        #expect(try await reopened.matchBindings().keys.sorted() == ["one"])
    }

    @Test func automaticDevicesSurviveReopeningAndAreForgottenWithTheirDevice() async throws {
        let directory = try TemporaryDirectory(prefix: "gateway-state")
        let path = directory.file("blebridge.sqlite").path
        let entry = AutoDevices.Entry(
            address: "A4:C1:38:CF:01:56", decoder: "bthome", lastSeen: Date(timeIntervalSince1970: 1_800_000_000))
        do {
            let state = GatewayStateStore(store: try await OutboxStore(path: path))
            try await state.setAutoDevice(entry, id: "bthome_cf0156")
            await state.store.close()
        }
        let reopened = GatewayStateStore(store: try await OutboxStore(path: path))
        #expect(try await reopened.autoDevices() == ["bthome_cf0156": entry])
        try await reopened.forget(deviceID: "bthome_cf0156")
        #expect(try await reopened.autoDevices().isEmpty)
    }
}
