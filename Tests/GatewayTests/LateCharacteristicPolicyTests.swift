import Bluetooth
import Foundation
import Gateway
import Testing

@Suite struct LateCharacteristicPolicyTests {
    let heartRate = BluetoothUUID(UInt16(0x2A37))
    let policy = LateCharacteristicPolicy()

    func known(_ id: String, _ address: String, subscriptions: [String]) -> KnownPeripheral {
        KnownPeripheral(
            deviceID: id, address: address, addressType: "public", services: ["180d"], subscriptions: subscriptions,
            lastSeen: Date(timeIntervalSince1970: 0))
    }

    @Test func waitsOnlyForACharacteristicTheDeviceServedBeforeAtThatAddress() {
        let strap = known("strap", "00:AA:01:00:00:00", subscriptions: [heartRate.shortString])
        #expect(policy.waits(for: heartRate, device: "strap", address: "00:AA:01:00:00:00", known: [strap]))
        // Never seen: a configuration error, not a late GATT application.
        #expect(!policy.waits(for: heartRate, device: "strap", address: "00:AA:01:00:00:00", known: []))
        // Another characteristic, another address, another device: no.
        #expect(
            !policy.waits(for: BluetoothUUID(UInt16(0x2A19)), device: "strap", address: strap.address, known: [strap]))
        #expect(!policy.waits(for: heartRate, device: "strap", address: "00:AA:01:00:00:01", known: [strap]))
        #expect(!policy.waits(for: heartRate, device: "belt", address: strap.address, known: [strap]))
    }
}
