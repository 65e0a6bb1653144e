/// How the simulated bluetoothd goes away in a restart (``BlueZSimulator/restartBluez(downtime:stop:)``).
package enum BluezStop: String, Sendable, Equatable, CaseIterable {
    /// SIGTERM (`systemctl stop bluetooth`): bluetoothd shuts down cleanly. It powers its adapters off
    /// (the links drop: `ServicesResolved` and `Connected` false, then `Powered` false), removes its
    /// objects (`InterfacesRemoved`: each device after its GATT objects, then the adapter), then
    /// releases `org.bluez` (`NameOwnerChanged`), the timing's `terminate_delay` after the signal.
    case terminate = "TERM"
    /// SIGKILL (or a crash): `org.bluez` vanishes with bluetoothd's connection at once; clients see only
    /// `NameOwnerChanged`, no property change and no `InterfacesRemoved`.
    case kill = "KILL"
}
