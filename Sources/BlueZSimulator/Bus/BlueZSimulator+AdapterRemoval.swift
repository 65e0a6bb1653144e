import DBus

/// The controller going away and coming back (a USB dongle unplugged and plugged in again,
/// `hciuart` or `btvirt` restarted), while bluetoothd keeps running and keeps `org.bluez`.
///
/// As bluetoothd 5.66 does when the kernel closes and removes the controller: `Powered` goes false
/// (the links drop), each device of the adapter goes with its GATT objects (`InterfacesRemoved`,
/// GATT first), then the adapter object with its interfaces; discovery sessions, registered GATT
/// applications and advertisements end.
/// On "Index Added" the adapter object comes back, off, with the devices bluetoothd stored (paired
/// or trusted, or connected before), disconnected and without GATT objects until they connect
/// again, and is then powered on (`AutoEnable=true`, Debian's default). Other devices are forgotten.
extension BlueZSimulator {
    /// Removes the adapter (see above); a no-op when it is already gone.
    package func removeAdapter() async throws {
        guard let bluez else { throw SimulatorError(.notRunning, "the simulator is not running") }
        guard !adapterRemoved else { return }
        // The kernel closes the controller first: bluetoothd reports `Powered` false (links drop,
        // the power-off rules for devices apply), then removes the objects (seen in the VM tier).
        let stored = Set(deviceOrder.filter { devices[$0]!.exported && !devices[$0]!.temporary })
        await setPowered(false)
        for key in deviceOrder.reversed() where devices[key]!.exported {
            await unexportDevice(key)
            devices[key]!.adapterRemoved(stored: stored.contains(key))
        }
        adapterRemoved = true
        adapter = AdapterState(powered: false)
        peripheralRole = PeripheralRoleState(supportedInstances: Self.supportedAdvertisingInstances)
        try? await bluez.unexport(path: try DBusObjectPath(adapterPath))
        log.notice("adapter removed (simulated controller unplug)", [("adapter", adapterPath)])
    }

    /// Brings the adapter back, powered, with the devices bluetoothd stored; a no-op when it is there.
    package func addAdapter() async throws {
        guard let bluez else { throw SimulatorError(.notRunning, "the simulator is not running") }
        guard adapterRemoved else { return }
        adapterRemoved = false
        // bluetoothd registers the adapter as the kernel reports it (off), loads the stored devices,
        // then powers it (AutoEnable): `Powered` true comes last.
        adapter = AdapterState(powered: false)
        try await exportAdapter(on: bluez)
        for key in deviceOrder where devices[key]!.exported {
            try await exportDevice(key, on: bluez)
        }
        await setPowered(true)
        log.notice("adapter added back", [("adapter", adapterPath)])
    }

    /// Whether the adapter object is exported (false between ``removeAdapter()`` and ``addAdapter()``).
    package var adapterPresent: Bool { !adapterRemoved }
}
