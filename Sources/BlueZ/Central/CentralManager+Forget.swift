import Bluetooth
import DBus

extension CentralManager {
    /// Makes BlueZ forget the peripheral (`Adapter1.RemoveDevice`): the link drops, the device object goes
    /// with its GATT objects, bluetoothd's cached copy of the peer's database and, for a bonded device, its
    /// keys. The next discovery creates it afresh and the next connection discovers the whole database.
    ///
    /// This is the cure for a stale cached database (``GATTCacheRecovery``); callers should not use it on a
    /// bonded device without the user's say, since the bond is lost with it. Throws the mapped BlueZ error
    /// (`DoesNotExist` when BlueZ no longer knows the device, `NotReady` with the adapter off).
    public func forget(_ peripheral: Peripheral) async throws {
        do {
            _ = try await connection.call(
                destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter,
                method: "RemoveDevice", arguments: [.objectPath(peripheral.path)], timeout: options.callTimeout)
        } catch {
            throw BluetoothError.from(error, during: .other)
        }
    }
}
