import Bluetooth
import DBus
import Foundation
import Logging
import Timekeeping

/// BlueZ's changes to the device and its GATT objects, handed over by ``CentralManager`` in bus
/// order.
extension Peripheral {
    // MARK: BlueZ object updates (from CentralManager, in bus order, after it changed its tree)

    func deviceAdded(_ properties: [String: DBusValue]) {
        if let connected = properties["Connected"]?.asBool { handle(.connectedChanged(connected)) }
        if let resolved = properties["ServicesResolved"]?.asBool { handle(.servicesResolvedChanged(resolved)) }
    }

    func deviceChanged(_ changed: [String: DBusValue], invalidated: [String]) {
        if let connected = changed["Connected"]?.asBool { handle(.connectedChanged(connected)) }
        if let resolved = changed["ServicesResolved"]?.asBool { handle(.servicesResolvedChanged(resolved)) }
    }

    /// Objects were added below the device.
    func gattAdded() {
        if !gattWaiters.isEmpty { wakeGATTWaiters() }
    }

    /// The manager replaced the objects below the device with those `GetManagedObjects` reported
    /// after services resolved (`objectCount` nil when that call failed, leaving those the signals built).
    func gattReloaded(objectCount: Int?, cacheReused: Bool) {
        gattCacheReused = cacheReused
        // Its time in the log ends the `GetManagedObjects` round trip after `ServicesResolved` (the VM tier's breakdown).
        Self.logger.debug(
            "GATT tree from GetManagedObjects",
            [
                ("device", identifier.description), ("objects", objectCount.map { "\($0)" } ?? "call failed"),
                ("cache_reused", "\(cacheReused)"),
            ])
        guard objectCount != nil else { return }
        if !gattWaiters.isEmpty { wakeGATTWaiters() }
    }

    func gattChanged(_ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue]) {
        if interface == BlueZNames.gattCharacteristic, let value = changed["Value"]?.asBytes,
            let subscription = subscriptions[path], subscription.reader == nil, subscription.enabling != nil
        {
            subscription.channel.yield(Data(value))
        }
    }

    /// BlueZ dropped the device object (cache cleanup, power off): the peripheral keeps what BlueZ
    /// last said of it, without the link's state, and no GATT objects.
    func deviceRemoved(lastKnown: [String: DBusValue]) {
        handle(.adapterLost(.unknown))
        var kept = lastKnown
        kept["Connected"] = nil
        kept["ServicesResolved"] = nil
        detachedDevice = kept
    }

    /// The adapter went away (power off, removal, BlueZ restart). A powered-off adapter keeps its
    /// devices and their GATT objects on the bus (bluetoothd 5.66; it says `InterfacesRemoved` for any
    /// it drops), and on power-on it sends no `InterfacesAdded` for them: so the manager's tree keeps
    /// them then. It is the cache that arms the stalled-resolve limit of the first connect after power-on.
    func adapterLost(_ reason: DisconnectReason) {
        handle(.adapterLost(reason))
    }

    /// Whether the device is connected, connecting or bonded in BlueZ, so it must not be dropped from the cache.
    var isProtected: Bool {
        lifecycle.peripheralState != .disconnected || lifecycle.isLinkUp || isPaired
            || (device["Trusted"]?.asBool ?? false)
    }
}
