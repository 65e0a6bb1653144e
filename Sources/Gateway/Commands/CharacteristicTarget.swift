import Bluetooth

/// A characteristic of a device, within `service` when given (a device may have the same
/// characteristic UUID in several services).
package struct CharacteristicTarget: Sendable, Hashable {
    package var characteristic: BluetoothUUID
    package var service: BluetoothUUID?

    package init(_ characteristic: BluetoothUUID, service: BluetoothUUID? = nil) {
        self.characteristic = characteristic
        self.service = service
    }
}
