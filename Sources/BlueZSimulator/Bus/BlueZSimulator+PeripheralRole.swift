import Bluetooth
import DBus

/// `org.bluez.GattManager1` and `org.bluez.LEAdvertisingManager1` on the adapter: a client (such
/// as BLEBridge's `PeripheralManager`) publishes GATT services and advertises, and a test acts as
/// the remote central through ``remoteRead(_:)``, ``remoteWrite(_:_:)`` and ``remoteSubscribe(_:)``.
extension BlueZSimulator {
    static let gattManagerInterface = "org.bluez.GattManager1"
    static let advertisingManagerInterface = "org.bluez.LEAdvertisingManager1"
    /// `LEAdvertisingManager1.SupportedInstances` before any registration (the controller's
    /// advertising sets as bluetoothd reads them from the kernel: 5 on the VM's btvirt, whose
    /// controllers lack extended advertising, so `SupportedSecondaryChannels` is absent from GetAll as there).
    static let supportedAdvertisingInstances = 5
    /// The address of the simulated remote central (the `device` option of its reads and writes).
    static let remoteCentral = BluetoothAddress("C0:FF:EE:CE:00:01")!

    func peripheralRoleInterfaces() -> [DBusInterface] {
        [
            DBusInterface(
                name: Self.gattManagerInterface,
                methods: [
                    DBusMethod(name: "RegisterApplication", inSignature: "oa{sv}") { [weak self] call in
                        try await self?.registerApplication(call)
                        return []
                    },
                    DBusMethod(name: "UnregisterApplication", inSignature: "o") { [weak self] call in
                        try await self?.unregisterApplication(call)
                        return []
                    },
                ], properties: [], signals: []),
            DBusInterface(
                name: Self.advertisingManagerInterface,
                methods: [
                    DBusMethod(name: "RegisterAdvertisement", inSignature: "oa{sv}") { [weak self] call in
                        try await self?.registerAdvertisement(call)
                        return []
                    },
                    DBusMethod(name: "UnregisterAdvertisement", inSignature: "o") { [weak self] call in
                        try await self?.unregisterAdvertisement(call)
                        return []
                    },
                ],
                properties: [
                    DBusProperty(name: "ActiveInstances", signature: "y") { [weak self] in
                        await self?.advertisingInstances().active
                    },
                    DBusProperty(name: "SupportedInstances", signature: "y") { [weak self] in
                        await self?.advertisingInstances().free
                    },
                    DBusProperty(name: "SupportedIncludes", signature: "as") {
                        .strings(["tx-power", "appearance", "local-name"])
                    },
                    // Exists only with extended advertising, which btvirt lacks: introspected, not in GetAll.
                    DBusProperty(name: "SupportedSecondaryChannels", signature: "as") { nil },
                ], signals: []),
        ]
    }

    // MARK: GattManager1

    func registerApplication(_ call: DBusMethodCall) async throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        do { try peripheralRole.reserveApplication(owner: call.sender, path: path.rawValue) } catch {
            throw error.dbus
        }
        // bluetoothd reads the application's objects from the client before it answers.
        let reply = try? await bluez?.call(
            destination: call.sender, path: path, interface: "org.freedesktop.DBus.ObjectManager",
            method: "GetManagedObjects", timeout: .seconds(10))
        let application = reply?.first?.asObjectPathDictionary.flatMap {
            LocalGattApplication(owner: call.sender, path: path.rawValue, managedObjects: $0)
        }
        peripheralRole.finishApplication(owner: call.sender, path: path.rawValue, application)
        guard application != nil else { throw BlueZError.failed("Failed to register application").dbus }
    }

    func unregisterApplication(_ call: DBusMethodCall) throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        do { try peripheralRole.unregisterApplication(owner: call.sender, path: path.rawValue) } catch {
            throw error.dbus
        }
    }

    // MARK: LEAdvertisingManager1

    func registerAdvertisement(_ call: DBusMethodCall) async throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        let instance: Int
        do { instance = try peripheralRole.reserveAdvertisement(owner: call.sender, path: path.rawValue) } catch {
            throw error.dbus
        }
        let reply = try? await bluez?.call(
            destination: call.sender, path: path, interface: "org.freedesktop.DBus.Properties", method: "GetAll",
            arguments: [.string("org.bluez.LEAdvertisement1")], timeout: .seconds(10))
        let advertisement = reply?.first?.asDictionary.flatMap {
            RegisteredAdvertisement(owner: call.sender, path: path.rawValue, instance: instance, properties: $0)
        }
        peripheralRole.finishAdvertisement(owner: call.sender, path: path.rawValue, advertisement)
        guard advertisement != nil else { throw BlueZError.failed("Failed to parse advertisement.").dbus }
        emitAdvertisingInstances()
    }

    func unregisterAdvertisement(_ call: DBusMethodCall) throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        do { try peripheralRole.unregisterAdvertisement(owner: call.sender, path: path.rawValue) } catch {
            throw error.dbus
        }
        emitAdvertisingInstances()
    }

    /// `ActiveInstances` and `SupportedInstances` (the instances still free, as bluetoothd counts them).
    func advertisingInstances() -> (active: DBusValue, free: DBusValue) {
        let active = peripheralRole.activeInstances
        return (.byte(UInt8(clamping: active)), .byte(UInt8(clamping: peripheralRole.supportedInstances - active)))
    }

    func emitAdvertisingInstances() {
        guard let bluez, let path = try? DBusObjectPath(adapterPath) else { return }
        let instances = advertisingInstances()
        try? bluez.emitPropertiesChanged(
            path: path, interface: Self.advertisingManagerInterface,
            changed: ["ActiveInstances": instances.active, "SupportedInstances": instances.free])
    }

    // MARK: The remote central

    /// The GATT applications registered now.
    package func localApplications() -> [LocalGattApplication] { peripheralRole.applications }

    /// The advertisements registered now.
    package func registeredAdvertisements() -> [RegisteredAdvertisement] { peripheralRole.advertisements }

    /// A simulated remote central reads a local characteristic: bluetoothd calls the application's
    /// `ReadValue` (with the options it passes: `device`, `link`, `mtu`) and returns its answer.
    package func remoteRead(_ uuid: BluetoothUUID) async throws -> [UInt8] {
        let (owner, path) = try localCharacteristic(uuid)
        let reply = try await callApplication(
            owner, path, "ReadValue", [.properties(remoteOptions(["offset": .uint16(0)]))])
        return reply.first?.asBytes ?? []
    }

    /// A simulated remote central writes a local characteristic (a write request).
    package func remoteWrite(_ uuid: BluetoothUUID, _ value: [UInt8]) async throws {
        let (owner, path) = try localCharacteristic(uuid)
        _ = try await callApplication(
            owner, path, "WriteValue",
            [.bytes(value), .properties(remoteOptions(["offset": .uint16(0), "type": .string("request")]))])
    }

    /// A simulated remote central writes the CCCD: bluetoothd calls `StartNotify` (or `StopNotify`)
    /// and, while subscribed, sends each `Value` the application signals (`PropertiesChanged`) to
    /// the central; ``remoteNotifications(_:)`` lists them.
    package func remoteSubscribe(_ uuid: BluetoothUUID, _ on: Bool = true) async throws {
        let (owner, path) = try localCharacteristic(uuid)
        remoteListeners.removeValue(forKey: uuid)?.cancel()
        if on, let bluez {
            let stream = try await bluez.signals(
                matching: DBusMatchRule(
                    sender: owner, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path
                ))
            remoteListeners[uuid] = Task { [weak self] in
                for await signal in stream {
                    guard signal.arguments.first?.asString == "org.bluez.GattCharacteristic1",
                        let value = signal.arguments.dropFirst().first?.asDictionary?["Value"]?.asBytes
                    else { continue }
                    await self?.recordRemoteNotification(uuid, value)
                }
            }
        }
        _ = try await callApplication(owner, path, on ? "StartNotify" : "StopNotify", [])
    }

    /// The values the simulated remote central received from a local characteristic.
    package func remoteNotifications(_ uuid: BluetoothUUID) -> [[UInt8]] { remoteNotificationLog[uuid] ?? [] }

    private func recordRemoteNotification(_ uuid: BluetoothUUID, _ value: [UInt8]) {
        remoteNotificationLog[uuid, default: []].append(value)
    }

    private func localCharacteristic(_ uuid: BluetoothUUID) throws(SimulatorError) -> (String, DBusObjectPath) {
        for application in peripheralRole.applications {
            if let characteristic = application.characteristic(uuid),
                let path = try? DBusObjectPath(characteristic.path)
            {
                return (application.owner, path)
            }
        }
        throw SimulatorError(.unknownCharacteristic, "no registered application serves \(uuid)")
    }

    private func remoteOptions(_ extra: [String: DBusValue]) -> [String: DBusValue] {
        var options = extra
        if let device = try? DBusObjectPath(adapterPath + "/" + Self.remoteCentral.bluezPathComponent) {
            options["device"] = .objectPath(device)
        }
        options["link"] = .string("LE")
        options["mtu"] = .uint16(timing.mtu)
        return options
    }

    private func callApplication(_ owner: String, _ path: DBusObjectPath, _ method: String, _ arguments: [DBusValue])
        async throws -> [DBusValue]
    {
        guard let bluez else { throw SimulatorError(.notRunning, "the simulator is not running") }
        return try await bluez.call(
            destination: owner, path: path, interface: "org.bluez.GattCharacteristic1", method: method,
            arguments: arguments, timeout: .seconds(10))
    }
}
