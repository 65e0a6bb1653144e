import Bluetooth
import DBus

/// An advertisement a client registered with `LEAdvertisingManager1.RegisterAdvertisement`, as
/// bluetoothd reads it from the client's `org.bluez.LEAdvertisement1` properties (`src/advertising.c`).
package struct RegisteredAdvertisement: Sendable, Equatable {
    package let owner: String
    package let path: String
    /// The advertising instance bluetoothd allotted (1…`SupportedInstances`).
    package let instance: Int
    /// "peripheral" (connectable) or "broadcast".
    package var type: String
    package var localName: String?
    package var serviceUUIDs: [BluetoothUUID]
    package var manufacturerData: [UInt16: [UInt8]]
    package var serviceData: [BluetoothUUID: [UInt8]]
    package var includes: [String]
    package var appearance: UInt16?
    package var discoverable: Bool?

    /// Nil when bluetoothd would refuse the properties (`Failed` "Failed to parse advertisement."):
    /// a `Type` other than peripheral/broadcast, or a property of the wrong type.
    package init?(owner: String, path: String, instance: Int, properties: [String: DBusValue]) {
        self.owner = owner
        self.path = path
        self.instance = instance
        type = properties["Type"]?.asString ?? "peripheral"
        guard ["peripheral", "broadcast"].contains(type) else { return nil }
        if let name = properties["LocalName"] {
            guard let text = name.asString else { return nil }
            localName = text
        }
        let uuids = properties["ServiceUUIDs"]?.asStrings ?? []
        serviceUUIDs = uuids.compactMap(BluetoothUUID.init)
        guard serviceUUIDs.count == uuids.count else { return nil }
        manufacturerData = [:]
        for entry in properties["ManufacturerData"]?.asDictionaryEntries ?? [] {
            guard case .uint16(let company) = entry.key, let bytes = entry.value.unwrappedVariant.asBytes else {
                return nil
            }
            manufacturerData[company] = bytes
        }
        serviceData = [:]
        for entry in properties["ServiceData"]?.asDictionaryEntries ?? [] {
            guard let uuid = entry.key.asString.flatMap(BluetoothUUID.init),
                let bytes = entry.value.unwrappedVariant.asBytes
            else { return nil }
            serviceData[uuid] = bytes
        }
        includes = properties["Includes"]?.asStrings ?? []
        appearance = properties["Appearance"]?.asUInt16
        discoverable = properties["Discoverable"]?.asBool
    }
}
