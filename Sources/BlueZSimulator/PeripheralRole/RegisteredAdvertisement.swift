import Bluetooth
import DBus

/// An advertisement a client registered with `LEAdvertisingManager1.RegisterAdvertisement`, as
/// bluetoothd reads it from the client's `org.bluez.LEAdvertisement1` properties (`src/advertising.c`).
public struct RegisteredAdvertisement: Sendable, Equatable {
    public let owner: String
    public let path: String
    /// The advertising instance bluetoothd allotted (1…`SupportedInstances`).
    public let instance: Int
    /// "peripheral" (connectable) or "broadcast".
    public var type: String
    public var localName: String?
    public var serviceUUIDs: [BluetoothUUID]
    public var manufacturerData: [UInt16: [UInt8]]
    public var serviceData: [BluetoothUUID: [UInt8]]
    public var includes: [String]
    public var appearance: UInt16?
    public var discoverable: Bool?

    /// Nil when bluetoothd would refuse the properties (`Failed` "Failed to parse advertisement."):
    /// a `Type` other than peripheral/broadcast, or a property of the wrong type.
    public init?(owner: String, path: String, instance: Int, properties: [String: DBusValue]) {
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
