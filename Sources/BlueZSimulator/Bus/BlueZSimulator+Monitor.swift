import Bluetooth
import DBus

/// `org.bluez.AdvertisementMonitorManager1` (bluetoothd 5.66 with `-E`, src/adv_monitor.c): a
/// client registers the root of its `AdvertisementMonitor1` objects; bluetoothd reads them with
/// `GetManagedObjects` on the root, answers, then calls `Activate` on each valid monitor and
/// `Release` on each invalid one. Matching advertisements reach the client as `DeviceFound` calls
/// without a discovery session; the devices' `Device1` properties are updated first.
extension BlueZSimulator {
    static let monitorManagerInterface = "org.bluez.AdvertisementMonitorManager1"
    static let monitorInterface = "org.bluez.AdvertisementMonitor1"

    /// The manager's interface on the adapter, when the scenario has one.
    func monitorManagerInterfaces() -> [DBusInterface] {
        let mode = advertisementMonitor
        guard mode != .absent else { return [] }
        let features: [String] = mode == .controller ? ["controller-patterns"] : []
        return [
            DBusInterface(
                name: Self.monitorManagerInterface,
                methods: [
                    DBusMethod(name: "RegisterMonitor", inSignature: "o") { [weak self] call in
                        try await self?.registerMonitor(call)
                        return []
                    },
                    DBusMethod(name: "UnregisterMonitor", inSignature: "o") { [weak self] call in
                        try await self?.unregisterMonitor(call)
                        return []
                    },
                ],
                properties: [
                    // 5.66 lists its one supported type whatever the kernel can do.
                    DBusProperty(name: "SupportedMonitorTypes", signature: "as", get: { .strings(["or_patterns"]) }),
                    DBusProperty(name: "SupportedFeatures", signature: "as", get: { .strings(features) }),
                ])
        ]
    }

    func registerMonitor(_ call: DBusMethodCall) async throws {
        guard let root = call.arguments.first?.asObjectPath?.rawValue else { throw BlueZError.invalidArguments.dbus }
        do {
            try monitors.register(owner: call.sender, root: root)
        } catch {
            throw error.dbus
        }
        // bluetoothd's client reads the tree first and answers when it is ready.
        var outcomes: [(String, MonitorRegistry.Outcome)] = []
        if let bluez, let rootPath = try? DBusObjectPath(root),
            let reply = try? await bluez.call(
                destination: call.sender, path: rootPath, interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects", timeout: .seconds(5)),
            let tree = reply.first?.asObjectPathDictionary
        {
            for (path, interfaces) in tree.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                guard let properties = interfaces.asDictionary?[Self.monitorInterface]?.asDictionary else { continue }
                let outcome = monitors.monitorAdded(
                    owner: call.sender, root: root, path: path.rawValue, properties: properties)
                outcomes.append((path.rawValue, outcome))
            }
        }
        let owner = call.sender
        let activated = outcomes.filter { $0.1 == .activate }.map(\.0)
        // Release for refused content comes at once; Activate once the kernel added the patterns.
        for (path, outcome) in outcomes where outcome == .release {
            callMonitor(MonitorRegistry.Target(owner: owner, path: path), "Release")
        }
        afterReply(call) { simulator in
            for path in activated {
                await simulator.callMonitor(MonitorRegistry.Target(owner: owner, path: path), "Activate")
            }
        }
    }

    func unregisterMonitor(_ call: DBusMethodCall) async throws {
        guard let root = call.arguments.first?.asObjectPath?.rawValue else { throw BlueZError.invalidArguments.dbus }
        let released: [MonitorRegistry.Target]
        do {
            released = try monitors.unregister(owner: call.sender, root: root)
        } catch {
            throw error.dbus
        }
        for target in released { callMonitor(target, "Release") }
    }

    /// Calls a method of a client's monitor object, as bluetoothd does without waiting for an answer.
    func callMonitor(_ target: MonitorRegistry.Target, _ method: String, device: String? = nil) {
        guard let bluez, let path = try? DBusObjectPath(target.path) else { return }
        var arguments: [DBusValue] = []
        if let device, let devicePath = try? DBusObjectPath(device) { arguments = [.objectPath(devicePath)] }
        try? bluez.callWithoutReply(
            destination: target.owner, path: path, interface: Self.monitorInterface, method: method,
            arguments: arguments)
    }

    /// The monitors `key`'s advertisement matches (none while powered off or without monitors).
    func matchingMonitors(
        _ key: String, manufacturerData: [UInt16: [UInt8]], serviceData: [BluetoothUUID: [UInt8]]
    ) -> [MonitorRegistry.Target] {
        guard adapter.powered, monitors.isMonitoring, let spec = devices[key]?.spec else { return [] }
        let advertisement = AdvertisementData(
            localName: spec.name, serviceUUIDs: spec.advertisement.serviceUUIDs, manufacturerData: manufacturerData,
            serviceData: serviceData)
        // A controller filtering in hardware reads whole structures whatever bluetoothd's version.
        let matching = advertisementMonitor == .controller ? .wholeStructure : scenario.adapter.monitorMatching
        return monitors.matching(ADStructure.structures(of: advertisement), matching)
    }

    /// After the device's properties were updated: `DeviceFound` for every matching advertisement
    /// (software filtering, no RSSI thresholds) or once per device (controller offload).
    func monitorsFound(_ key: String, _ targets: [MonitorRegistry.Target]) {
        guard let path = devices[key]?.path else { return }
        for target in targets {
            if advertisementMonitor == .controller,
                !monitors.startTracking(key, for: target)
            {
                continue
            }
            callMonitor(target, "DeviceFound", device: path)
        }
    }

    /// The device went out of range: monitors offloaded to the controller lose it.
    func monitorsLost(_ key: String) {
        guard let path = devices[key]?.path else { return }
        for target in monitors.stopTracking(key) { callMonitor(target, "DeviceLost", device: path) }
    }

    /// Calls `DeviceFound` before, not after, the `PropertiesChanged` of the advertisement that
    /// matched: what a client sees when it handles bluetoothd's method call before the signals
    /// bluetoothd sent just before it (the gateway's signal stream and its exported methods take
    /// different paths; in the VM tier a first report was a copy 20 s old). bluetoothd itself
    /// sends the signals first.
    package func setDeviceFoundFirst(_ first: Bool) { deviceFoundFirst = first }

    /// How many times `StartDiscovery` succeeded since the start (a passive scan calls it never).
    package var startDiscoveryCount: Int { discoveryStarts }

    /// The registered monitor applications: owner, root, and each monitor's path.
    package func monitorApplications() -> [(owner: String, root: String, monitors: [String])] {
        monitors.applications.map { ($0.owner, $0.root, $0.monitors.keys.sorted()) }
    }
}
