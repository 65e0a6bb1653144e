import DBus

/// bluetoothd's clean shutdown on SIGTERM (``BluezStop/terminate``), before it releases `org.bluez`.
extension BlueZSimulator {
    /// Powers the adapter off (links drop, the power-off rules for devices apply), removes each device with
    /// its GATT objects and then the adapter object, and waits the timing's `terminate_delay` (the rest of
    /// bluetoothd's exit) before the caller closes the connection and so releases the name. The devices'
    /// state is kept for the restart (``DeviceState/bluetoothdRestarted()`` decides what comes back).
    func terminateCleanly() async {
        log.notice("bluetoothd terminating (simulated SIGTERM)")
        if !adapterRemoved {
            // bluetoothd stored every device that was connected, paired or trusted (its info file):
            // the restarted one loads them again, unbonded ones included (VM capture: the example
            // peripheral, connected and unbonded at the SIGTERM, came back), whatever the power-off
            // made of them since.
            let stored = deviceOrder.filter { devices[$0]!.exported && !devices[$0]!.temporary }
            await setPowered(false)
            for key in stored { devices[key]!.markStored() }
            for key in deviceOrder.reversed() where devices[key]!.exported {
                await unexportDevice(key)
            }
            try? await bluez?.unexport(path: try DBusObjectPath(adapterPath))
        }
        // Real delay: the simulated bluetoothd's exit after its objects are gone (a scenario timing).
        try? await Task.sleep(for: timing.terminateDelay)
    }
}
