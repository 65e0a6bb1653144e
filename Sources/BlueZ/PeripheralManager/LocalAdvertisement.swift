import Bluetooth

/// What ``PeripheralManager`` advertises through `org.bluez.LEAdvertisingManager1`.
public struct LocalAdvertisement: Sendable, Equatable {
    public var localName: String?
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]]
    public var serviceData: [BluetoothUUID: [UInt8]]
    public var includeTxPower: Bool
    /// `peripheral` (connectable) or `broadcast` (not connectable).
    public var connectable: Bool

    public init(
        localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt16: [UInt8]] = [:],
        serviceData: [BluetoothUUID: [UInt8]] = [:], includeTxPower: Bool = false, connectable: Bool = true
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.includeTxPower = includeTxPower
        self.connectable = connectable
    }
}
