import Bluetooth

/// Builds the virtual peripherals of load mode: `LOAD-0000`, `LOAD-0001`, … at `C0:FF:EE:10:hh:ll`,
/// each with one notify characteristic whose value is a ``LoadValue``.
package enum LoadDevices {
    package static let maximumDevices = 4096
    package static let service = BluetoothUUID("6b1e2001-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    package static let characteristic = BluetoothUUID("6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!

    package static func address(_ index: Int) -> BluetoothAddress {
        BluetoothAddress(bytes: [0xC0, 0xFF, 0xEE, 0x10, UInt8(index >> 8), UInt8(index & 0xFF)])!
    }

    package static func devices(count: Int) -> [ScenarioDevice] {
        (0..<count).map { index in
            let name = "LOAD-" + String(repeating: "0", count: max(0, 4 - String(index).count)) + String(index)
            return ScenarioDevice(
                id: name.lowercased(), address: address(index), name: name, rssi: -50, rssiJitter: 0,
                advertisement: ScenarioAdvertisement(serviceUUIDs: [service]),
                services: [
                    ScenarioService(
                        uuid: service,
                        characteristics: [
                            ScenarioCharacteristic(
                                uuid: characteristic, properties: [.read, .notify],
                                value: Array(repeating: 0, count: LoadValue.length),
                                notifyOnWrite: false)
                        ])
                ])
        }
    }
}
