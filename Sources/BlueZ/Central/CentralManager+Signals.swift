import Bluetooth
import DBus
import Foundation
import Timekeeping

/// bluetoothd's signals, handled on the connection's thread in bus order: the manager's copy of
/// BlueZ's objects, the adapter's state, and each peripheral's share of the changes.
extension CentralManager {
    func receive(_ signal: DBusSignal) {
        if loading {
            buffered.append(signal)
            return
        }
        dispatch(signal)
    }

    func dispatch(_ signal: DBusSignal) {
        defer { signalHandled(signal.sequence) }
        switch (signal.interface, signal.member) {
        case (BlueZNames.objectManager, "InterfacesAdded"):
            guard let path = signal.arguments.first?.asObjectPath, signal.arguments.count > 1 else { return }
            interfacesAdded(path, ManagedObjects.interfaces(signal.arguments[1]))
        case (BlueZNames.objectManager, "InterfacesRemoved"):
            guard let path = signal.arguments.first?.asObjectPath, signal.arguments.count > 1 else { return }
            interfacesRemoved(path, signal.arguments[1].asStrings ?? [])
        case (BlueZNames.properties, "PropertiesChanged"):
            guard signal.arguments.count > 1, let interface = signal.arguments[0].asString else { return }
            let changed = signal.arguments[1].asDictionary ?? [:]
            let invalidated = signal.arguments.count > 2 ? (signal.arguments[2].asStrings ?? []) : []
            propertiesChanged(signal.path, interface, changed, invalidated)
        case (BlueZNames.device, "Disconnected"):
            guard let reason = signal.arguments.first?.asString, let peripheral = peripherals[signal.path] else {
                return
            }
            update(peripheral) { $0.handle(.disconnectReasonReported(DisconnectReason(bluezReason: reason))) }
        default:
            break
        }
    }

    private func interfacesAdded(_ path: DBusObjectPath, _ interfaces: [String: ManagedObjects.Properties]) {
        tree.update { $0.add(path, interfaces) }
        if path == adapterPath { monitorManagerChanged() }
        if path == PairingAgent.managerPath, interfaces[BlueZNames.agentManager] != nil {
            agentManagerAppeared()
        }
        if path == adapterPath, let adapter = interfaces[BlueZNames.adapter] {
            let powered = adapter["Powered"]?.asBool ?? false
            track(.adapterAdded(powered: powered))
            runDiscovery(arbiter.handle(.adapterAvailable(powered)))
            return
        }
        if let device = interfaces[BlueZNames.device] {
            guard isOurDevice(path) else { return }
            lastSeen[path] = options.clock.now
            if let peripheral = peripherals[path] { update(peripheral) { $0.deviceAdded(device) } }
            reportDiscovery(path, changed: Set(device.keys))
            return
        }
        if let owner = owningPeripheral(path) { update(owner) { $0.gattAdded() } }
    }

    private func interfacesRemoved(_ path: DBusObjectPath, _ interfaces: [String]) {
        let lastKnown = interfaces.contains(BlueZNames.device) ? objects.properties(path, BlueZNames.device) : nil
        let removedDevice = isOurDevice(path) ? lastKnown.flatMap(DeviceProperties.address) : nil
        tree.update { $0.remove(path, interfaces) }
        if path == adapterPath { monitorManagerChanged() }
        if path == adapterPath, interfaces.contains(BlueZNames.adapter) {
            // The peripherals' GATT objects went with the adapter (their devices' removals may follow).
            for (devicePath, peripheral) in peripherals {
                tree.update { $0.removeDescendants(of: devicePath) }
                update(peripheral) { $0.adapterLost(.bluezRestarted) }
            }
            runDiscovery(arbiter.handle(.adapterAvailable(false)))
            track(.adapterRemoved)
            return
        }
        if interfaces.contains(BlueZNames.device) {
            if let removedDevice { removalBroadcaster.yield(removedDevice) }
            lastSeen[path] = nil
            for id in scanners.keys { scanners[id]?.reported[path] = nil }
            if let peripheral = peripherals[path] {
                update(peripheral) { $0.deviceRemoved(lastKnown: lastKnown ?? [:]) }
                peripherals[path] = nil
            }
            return
        }
    }

    private func propertiesChanged(
        _ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue], _ invalidated: [String]
    ) {
        tree.update { $0.change(path, interface, changed, invalidated: invalidated) }
        switch interface {
        case BlueZNames.adapter where path == adapterPath:
            if let powered = changed["Powered"]?.asBool {
                if !powered {
                    for peripheral in peripherals.values { update(peripheral) { $0.adapterLost(.adapterPoweredOff) } }
                }
                track(.poweredChanged(powered))
                runDiscovery(arbiter.handle(.adapterAvailable(powered)))
            }
            if let discovering = changed["Discovering"]?.asBool {
                runDiscovery(arbiter.handle(.discoveringChanged(discovering)))
            }
        case BlueZNames.device:
            if let peripheral = peripherals[path] {
                update(peripheral) { $0.deviceChanged(changed, invalidated: invalidated) }
            }
            if isOurDevice(path),
                !changed.keys.allSatisfy({ ["Connected", "ServicesResolved", "Paired", "Trusted"].contains($0) })
            {
                lastSeen[path] = options.clock.now
                reportDiscovery(path, changed: Set(changed.keys))
            }
        default:
            if let owner = owningPeripheral(path) { update(owner) { $0.gattChanged(path, interface, changed) } }
        }
    }

    /// Runs `body` on `peripheral`, which shares this manager's thread: a plain call, in bus order.
    func update(_ peripheral: Peripheral, _ body: (isolated Peripheral) -> Void) {
        peripheral.assumeIsolated(body)
    }

    /// The peripheral whose device path is a prefix of `path` (a GATT object).
    private func owningPeripheral(_ path: DBusObjectPath) -> Peripheral? {
        let components = path.rawValue.split(separator: "/")
        guard components.count > 4 else { return nil }
        let devicePath = "/" + components.prefix(4).joined(separator: "/")
        return DBusObjectPath(validating: devicePath).flatMap { peripherals[$0] }
    }
}
