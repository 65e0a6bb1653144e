import Bluetooth
import DBus
import Foundation
import Logging
import Timekeeping

/// BlueZ's changes to the device and its GATT objects, handed over by ``CentralManager`` in bus
/// order.
extension Peripheral {
    // MARK: BlueZ object updates (from CentralManager, in bus order)

    func deviceAdded(_ properties: [String: DBusValue]) {
        device.merge(properties) { _, new in new }
        if let connected = properties["Connected"]?.asBool { handle(.connectedChanged(connected)) }
        if let resolved = properties["ServicesResolved"]?.asBool { handle(.servicesResolvedChanged(resolved)) }
    }

    func deviceChanged(_ changed: [String: DBusValue], invalidated: [String]) {
        device.merge(changed) { _, new in new }
        for name in invalidated { device[name] = nil }
        if let connected = changed["Connected"]?.asBool { handle(.connectedChanged(connected)) }
        if let resolved = changed["ServicesResolved"]?.asBool { handle(.servicesResolvedChanged(resolved)) }
    }

    func gattAdded(_ path: DBusObjectPath, _ interfaces: [String: [String: DBusValue]]) {
        gatt[path, default: [:]].merge(interfaces) { _, new in new }
        if !gattWaiters.isEmpty { wakeGATTWaiters() }
    }

    /// The whole GATT tree as bluetoothd reports it now (`GetManagedObjects` after services resolved; nil
    /// when that call failed, leaving the tree the signals built).
    func replaceGATT(_ tree: [DBusObjectPath: [String: [String: DBusValue]]]?, cacheReused: Bool) {
        gattCacheReused = cacheReused
        // Its time in the log ends the `GetManagedObjects` round trip after `ServicesResolved` (the VM tier's breakdown).
        Self.logger.debug(
            "GATT tree from GetManagedObjects",
            [
                ("device", identifier.description), ("objects", tree.map { "\($0.count)" } ?? "call failed"),
                ("cache_reused", "\(cacheReused)"),
            ])
        guard let tree else { return }
        gatt = tree
        if !gattWaiters.isEmpty { wakeGATTWaiters() }
    }

    func gattRemoved(_ path: DBusObjectPath, _ interfaces: [String]) {
        for interface in interfaces { gatt[path]?[interface] = nil }
        if gatt[path]?.isEmpty == true { gatt[path] = nil }
    }

    func gattChanged(_ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue]) {
        gatt[path]?[interface]?.merge(changed) { _, new in new }
        if interface == BlueZNames.gattCharacteristic, let value = changed["Value"]?.asBytes,
            let subscription = subscriptions[path], subscription.reader == nil, subscription.enabling != nil
        {
            subscription.channel.yield(Data(value))
        }
    }

    /// BlueZ dropped the device object (cache cleanup, power off): forget its GATT tree.
    func deviceRemoved() {
        handle(.adapterLost(.unknown))
        device["Connected"] = nil
        device["ServicesResolved"] = nil
        gatt.removeAll()
    }

    /// The adapter went away (power off, removal, BlueZ restart). A powered-off adapter keeps its
    /// devices and their GATT objects on the bus (bluetoothd 5.66; it says `InterfacesRemoved` for any
    /// it drops), and on power-on it sends no `InterfacesAdded` for them: so the tree stays here then.
    /// It is the cache that arms the stalled-resolve limit of the first connect after power-on.
    func adapterLost(_ reason: DisconnectReason) {
        handle(.adapterLost(reason))
        if reason != .adapterPoweredOff { gatt.removeAll() }
    }

    /// Whether the device is connected, connecting or bonded in BlueZ, so it must not be dropped from the cache.
    var isProtected: Bool {
        lifecycle.peripheralState != .disconnected || lifecycle.isLinkUp || isPaired
            || (device["Trusted"]?.asBool ?? false)
    }
}
