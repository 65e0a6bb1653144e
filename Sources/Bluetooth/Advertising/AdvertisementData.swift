/// What a peripheral advertises (Core Bluetooth's advertisement data dictionary, as a typed value).
///
/// With BlueZ this is assembled from `org.bluez.Device1` properties (`Name`, `UUIDs`, `ManufacturerData`,
/// `ServiceData`, `TxPower`) which arrive piecewise; `merging(_:)` folds an update into what was known.
public struct AdvertisementData: Sendable, Hashable {
    /// The advertised local name (`CBAdvertisementDataLocalNameKey`).
    public var localName: String?
    /// Advertised service UUIDs (`CBAdvertisementDataServiceUUIDsKey`).
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data by company identifier, without the 2 id bytes (`0x004C` → Apple).
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by service UUID (`CBAdvertisementDataServiceDataKey`), e.g. BTHome under `fcd2`.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Advertised transmit power in dBm (`CBAdvertisementDataTxPowerLevelKey`).
    public var txPowerLevel: Int?
    /// Whether the peripheral accepts connections, when known (`CBAdvertisementDataIsConnectable`).
    public var isConnectable: Bool?

    public init(
        localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [], manufacturerData: [UInt16: [UInt8]] = [:],
        serviceData: [BluetoothUUID: [UInt8]] = [:], txPowerLevel: Int? = nil, isConnectable: Bool? = nil
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPowerLevel = txPowerLevel
        self.isConnectable = isConnectable
    }

    /// True when nothing is known.
    public var isEmpty: Bool {
        localName == nil && serviceUUIDs.isEmpty && manufacturerData.isEmpty && serviceData.isEmpty
            && txPowerLevel == nil && isConnectable == nil
    }

    /// `update` over `self`: fields present in `update` replace, absent ones keep their old value. Manufacturer and
    /// service data merge per key (BlueZ reports each as a whole dictionary, newest entries win).
    public func merging(_ update: AdvertisementData) -> AdvertisementData {
        var merged = self
        if let name = update.localName { merged.localName = name }
        if !update.serviceUUIDs.isEmpty { merged.serviceUUIDs = update.serviceUUIDs }
        merged.manufacturerData.merge(update.manufacturerData) { _, new in new }
        merged.serviceData.merge(update.serviceData) { _, new in new }
        if let power = update.txPowerLevel { merged.txPowerLevel = power }
        if let connectable = update.isConnectable { merged.isConnectable = connectable }
        return merged
    }

    /// True when any of `uuids` is advertised as a service or as a service-data key (how BlueZ's UUID discovery
    /// filter matches). An empty list matches everything.
    public func advertisesAny(of uuids: some Collection<BluetoothUUID>) -> Bool {
        guard !uuids.isEmpty else { return true }
        return uuids.contains { serviceUUIDs.contains($0) || serviceData[$0] != nil }
    }
}
