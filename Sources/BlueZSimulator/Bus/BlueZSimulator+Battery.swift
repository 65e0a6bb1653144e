import Bluetooth
import DBus

/// `org.bluez.Battery1` on a device: bluetoothd's battery plugin reads a resolved peer's Battery
/// Level (180f/2a19), follows its notifications, and removes the interface when the link goes.
extension BlueZSimulator {
    static let batteryInterface = "org.bluez.Battery1"
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))

    /// The battery level characteristic of a device that has a Battery Service.
    func batteryCharacteristic(_ key: String) -> CharacteristicKey? {
        guard let device = devices[key] else { return nil }
        for (serviceIndex, service) in device.gatt.services.enumerated()
        where service.uuid == BluetoothUUID(UInt16(0x180F)) {
            for (index, characteristic) in service.characteristics.enumerated()
            where characteristic.uuid == Self.batteryLevel && characteristic.properties.contains(.read) {
                return CharacteristicKey(
                    address: key, id: GattDatabase.CharacteristicID(service: serviceIndex, characteristic: index))
            }
        }
        return nil
    }

    /// Services resolved: the plugin reads the level and `Battery1` appears with `Percentage`.
    func exportBattery(_ key: String) async {
        guard let battery = batteryCharacteristic(key), !batteryExported.contains(key), let bluez,
            let path = try? DBusObjectPath(devices[key]!.path)
        else { return }
        let interface = DBusInterface(
            name: Self.batteryInterface, methods: [],
            properties: [
                DBusProperty(name: "Percentage", signature: "y") { [weak self] in await self?.batteryPercentage(battery)
                }
            ], signals: [])
        batteryExported.insert(key)
        do {
            try await bluez.export(path: path, interfaces: [interface], signatureMismatch: .unknownMethod)
        } catch {
            batteryExported.remove(key)
        }
    }

    /// The link went: the plugin removes `Battery1`.
    func unexportBattery(_ key: String) async {
        guard batteryExported.remove(key) != nil, let bluez, let path = try? DBusObjectPath(devices[key]!.path) else {
            return
        }
        try? await bluez.unexport(path: path, interfaces: [Self.batteryInterface])
    }

    func batteryPercentage(_ battery: CharacteristicKey) -> DBusValue? {
        guard let value = devices[battery.address]?.characteristics[battery.id]?.value.first else { return nil }
        return .byte(min(value, 100))
    }

    /// The peer's level changed (it notifies it; the plugin subscribed): `Percentage` follows.
    func batteryLevelChanged(_ key: CharacteristicKey) {
        guard batteryExported.contains(key.address), batteryCharacteristic(key.address) == key, let bluez,
            let path = try? DBusObjectPath(devices[key.address]!.path), let percentage = batteryPercentage(key)
        else { return }
        try? bluez.emitPropertiesChanged(
            path: path, interface: Self.batteryInterface, changed: ["Percentage": percentage])
    }
}
