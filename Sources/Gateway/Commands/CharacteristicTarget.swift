public import Bluetooth

/// A characteristic of a device, within `service` when given (a device may have the same
/// characteristic UUID in several services).
public struct CharacteristicTarget: Sendable, Hashable {
    public var characteristic: BluetoothUUID
    public var service: BluetoothUUID?

    public init(_ characteristic: BluetoothUUID, service: BluetoothUUID? = nil) {
        self.characteristic = characteristic
        self.service = service
    }
}
