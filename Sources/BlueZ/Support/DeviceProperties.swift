import Bluetooth
import DBus

/// Reads `org.bluez.Device1` properties into the library's model.
enum DeviceProperties {
    static func address(_ properties: [String: DBusValue]) -> BluetoothAddress? {
        guard let text = properties["Address"]?.asString else { return nil }
        let type: BluetoothAddress.AddressType = properties["AddressType"]?.asString == "random" ? .random : .public
        return BluetoothAddress(text, type: type)
    }

    static func name(_ properties: [String: DBusValue]) -> String? {
        properties["Name"]?.asString
    }

    /// The RSSI in dBm; nil when absent or 127, the HCI value for "not available" (which
    /// bluetoothd passes through, e.g. for btvirt's virtual controllers in the VM tier).
    static func rssi(_ properties: [String: DBusValue]) -> Int? {
        guard let value = properties["RSSI"]?.asInt16, value != 127 else { return nil }
        return Int(value)
    }

    /// The advertisement fields present in `properties` (a full set or a `PropertiesChanged` subset).
    static func advertisement(_ properties: [String: DBusValue]) -> AdvertisementData {
        var data = AdvertisementData()
        data.localName = properties["Name"]?.asString
        data.serviceUUIDs = (properties["UUIDs"]?.asStrings ?? []).compactMap(BluetoothUUID.init)
        for entry in properties["ManufacturerData"]?.asDictionaryEntries ?? [] {
            guard let company = entry.key.asUInt16, let bytes = entry.value.unwrappedVariant.asBytes else { continue }
            data.manufacturerData[company] = bytes
        }
        for (uuid, value) in properties["ServiceData"]?.asDictionary ?? [:] {
            guard let uuid = BluetoothUUID(uuid), let bytes = value.asBytes else { continue }
            data.serviceData[uuid] = bytes
        }
        data.txPowerLevel = properties["TxPower"]?.asInt16.map(Int.init)
        return data
    }

    static func bool(_ properties: [String: DBusValue], _ name: String) -> Bool? {
        properties[name]?.asBool
    }
}
