import Bluetooth

/// A peripheral lost its connection (Core Bluetooth's `centralManager(_:didDisconnectPeripheral:error:)`).
public struct DisconnectEvent: Sendable {
    public var peripheral: Peripheral
    public var reason: DisconnectReason

    public init(peripheral: Peripheral, reason: DisconnectReason) {
        self.peripheral = peripheral
        self.reason = reason
    }

    /// The peripheral's address.
    public var identifier: BluetoothAddress { peripheral.identifier }
}
