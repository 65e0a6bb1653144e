import Bluetooth

/// Whether a fresh connection may wait for a subscribed characteristic its resolved services lack (the
/// peripheral's GATT application registered after the link came up; its services follow through
/// Service Changed), rather than failing the connect and waiting out the pool's backoff. How long, and
/// whether the resolved tree can still change at all, is ``GATTCacheRecovery``'s decision (a tree that is
/// bluetoothd's unchanged cached copy is not waited on).
///
/// Only for a characteristic the device, at the same address, served before: it was subscribed on
/// an earlier connection (``KnownPeripheral/subscriptions``). A characteristic it never had is a
/// configuration error; waiting for it would hold the pool's one connect at a time on every attempt.
package struct LateCharacteristicPolicy: Sendable, Hashable {
    package init() {}

    /// Whether device `id` at `address` is worth waiting for `characteristic`, given what earlier
    /// runs remembered.
    package func waits(
        for characteristic: BluetoothUUID, device id: String, address: String, known: [KnownPeripheral]
    ) -> Bool {
        known.contains { entry in
            entry.deviceID == id && entry.address == address
                && entry.subscriptions.contains(characteristic.shortString)
        }
    }
}
