import Bluetooth

/// What ``PeripheralManager`` advertises through `org.bluez.LEAdvertisingManager1`.
package struct LocalAdvertisement: Sendable, Equatable {
    package var localName: String?
    package var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier.
    package var manufacturerData: [UInt16: [UInt8]]
    package var serviceData: [BluetoothUUID: [UInt8]]
    package var includeTxPower: Bool
    /// `peripheral` (connectable) or `broadcast` (not connectable).
    package var connectable: Bool

    package init(
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
