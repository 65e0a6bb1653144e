import Bluetooth

/// One sighting of a peripheral while scanning (Core Bluetooth's `didDiscover peripheral, advertisementData, rssi`).
public struct Discovery: Sendable {
    public var peripheral: Peripheral
    public var advertisementData: AdvertisementData
    /// Signal strength in dBm, when BlueZ reported one.
    public var rssi: Int?
    /// When the advertisement was seen.
    public var timestamp: ContinuousClock.Instant

    public init(
        peripheral: Peripheral, advertisementData: AdvertisementData, rssi: Int?,
        timestamp: ContinuousClock.Instant = .now
    ) {
        self.peripheral = peripheral
        self.advertisementData = advertisementData
        self.rssi = rssi
        self.timestamp = timestamp
    }

    /// The peripheral's address.
    public var identifier: BluetoothAddress { peripheral.identifier }
}
