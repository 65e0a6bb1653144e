public import Bluetooth

/// When a fresh connection waits for a subscribed characteristic its resolved services lack (the
/// peripheral's GATT application registered after the link came up; its services follow through
/// Service Changed), rather than failing the connect and waiting out the pool's backoff.
///
/// Only for a characteristic the device, at the same address, served before: it was subscribed on
/// an earlier connection (``KnownPeripheral/subscriptions``). A characteristic it never had is a
/// configuration error; waiting for it would hold the pool's one connect at a time for `timeout` on
/// every attempt.
public struct LateCharacteristicPolicy: Sendable, Hashable {
    /// How long a connection waits for all its late characteristics together.
    public var timeout: Duration

    public init(timeout: Duration = .seconds(15)) {
        self.timeout = timeout
    }

    /// Whether device `id` at `address` is worth waiting for `characteristic`, given what earlier
    /// runs remembered.
    public func waits(
        for characteristic: BluetoothUUID, device id: String, address: String, known: [KnownPeripheral]
    ) -> Bool {
        known.contains { entry in
            entry.deviceID == id && entry.address == address
                && entry.subscriptions.contains(characteristic.shortString)
        }
    }
}
