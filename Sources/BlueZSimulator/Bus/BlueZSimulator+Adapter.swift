import Bluetooth
import DBus

/// `org.bluez.Adapter1` and `org.bluez.AgentManager1` behaviour.
extension BlueZSimulator {
    /// `Discovering` (and, on stop, the devices' `TxPower`/`RSSI` going) follow the reply, as
    /// bluetoothctl shows against bluetoothd: "Discovery started" before "Discovering: yes".
    func startDiscovery(_ call: DBusMethodCall) async throws {
        startDiscoveryCalls += 1
        if heldDiscoveryStarts != nil {
            await withCheckedContinuation { heldDiscoveryStarts?.append($0) }
        }
        if discoveryStartFailures > 0, adapter.powered {
            // bluetoothd's answer when the kernel refused to start (`discovery_complete` in
            // adapter.c): InProgress, and the client's session dropped, so nothing runs.
            discoveryStartFailures -= 1
            throw BlueZError.busy.dbus
        }
        do {
            let effects = try adapter.startDiscovery(sender: call.sender)
            discoveryStarts += 1
            afterReply(call) { await $0.apply(effects) }
        } catch {
            throw error.dbus
        }
    }

    func stopDiscovery(_ call: DBusMethodCall) async throws {
        do {
            let effects = try adapter.stopDiscovery(sender: call.sender)
            afterReply(call) { await $0.apply(effects) }
        } catch {
            throw error.dbus
        }
    }

    /// Runs `body` once the reply to `call` has been queued on the bus: bluetoothd answers first
    /// and emits the property changes the call caused afterwards (from mgmt's completion, through
    /// gdbus's deferred PropertiesChanged). Dropped if the simulator stopped or restarted meanwhile.
    func afterReply(_ call: DBusMethodCall, _ body: @escaping @Sendable (BlueZSimulator) async -> Void) {
        let generation = self.generation
        let notice = call.replyNotice
        Task { [weak self] in
            await notice.queued()
            guard let self, await self.generation == generation else { return }
            await body(self)
        }
    }

    func setDiscoveryFilter(_ call: DBusMethodCall) async throws {
        let filter = try Self.parseDiscoveryFilter(call.arguments.first)
        do {
            let effects = try adapter.setDiscoveryFilter(sender: call.sender, filter)
            await apply(effects)
        } catch {
            throw error.dbus
        }
    }

    /// Parses `SetDiscoveryFilter`'s dictionary as `parse_discovery_filter_dict` does; an empty
    /// dictionary clears the filter; unknown keys or wrong types are `InvalidArguments`.
    static func parseDiscoveryFilter(_ value: DBusValue?) throws -> DiscoveryFilter? {
        guard let entries = value?.asDictionary else { throw BlueZError.invalidArguments.dbus }
        guard !entries.isEmpty else { return nil }
        var filter = DiscoveryFilter()
        for (key, value) in entries {
            let value = value.unwrappedVariant
            switch key {
            case "UUIDs":
                guard let strings = value.asStrings else { throw BlueZError.invalidArguments.dbus }
                filter.uuids = try strings.map { text in
                    guard let uuid = BluetoothUUID(text) else { throw BlueZError.invalidArguments.dbus }
                    return uuid
                }
            case "RSSI":
                guard case .int16(let rssi) = value, rssi >= -127, rssi <= 20 else {
                    throw BlueZError.invalidArguments.dbus
                }
                filter.rssi = rssi
            case "Pathloss":
                guard case .uint16(let pathloss) = value, pathloss <= 137 else {
                    throw BlueZError.invalidArguments.dbus
                }
                filter.pathloss = pathloss
            case "Transport":
                guard let text = value.asString, let transport = DiscoveryFilter.Transport(rawValue: text) else {
                    throw BlueZError.invalidArguments.dbus
                }
                filter.transport = transport
            case "DuplicateData":
                guard case .boolean(let flag) = value else { throw BlueZError.invalidArguments.dbus }
                filter.duplicateData = flag
            case "Discoverable":
                guard case .boolean(let flag) = value else { throw BlueZError.invalidArguments.dbus }
                filter.discoverable = flag
            case "Pattern":
                guard let text = value.asString else { throw BlueZError.invalidArguments.dbus }
                filter.pattern = text
            default:
                throw BlueZError.invalidArguments.dbus
            }
        }
        if filter.rssi != nil, filter.pathloss != nil { throw BlueZError.invalidArguments.dbus }
        return filter
    }

    func removeDevice(_ call: DBusMethodCall) async throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        guard let address = BluetoothAddress.fromDevicePath(path.rawValue), path.rawValue == devices[address]?.path,
            devices[address]!.exported
        else { throw BlueZError.doesNotExist.dbus }
        guard adapter.powered else { throw BlueZError.notReady.dbus }
        if devices[address]!.connected {
            await disconnectDevice(address)
        }
        await apply(devices[address]!.remove(), to: address)
    }

    /// Applies adapter effects: `Discovering`/`Powered` signals and what discovery ending or
    /// power going off means for devices.
    func apply(_ effects: [AdapterState.Effect]) async {
        if effects.contains(.poweredChanged(false)) {
            await poweredOff(discoveryEnded: effects.contains(.discoveringChanged(false)))
            return
        }
        for effect in effects {
            switch effect {
            case .discoveringChanged(let on):
                discoveryAnnounced = on
                if on {
                    emitAdapter(["Discovering"])
                    scheduleAdvertisingSoon()
                } else {
                    // bluetoothd invalidates the devices' TxPower and RSSI when the last session
                    // ends; `Discovering` false comes later, with the controller's Discovering event.
                    for key in deviceOrder { await apply(devices[key]!.discoveryStopped(), to: key) }
                    emitAdapter(["Discovering"])
                }
            case .poweredChanged:
                emitAdapter(["Powered"])
            case .filterChanged:
                scheduleAdvertisingSoon()
            }
        }
    }

    /// The adapter powered off, in the order bluetoothd 5.66 reported it on the bus (VM tier capture of
    /// a SIGTERM, `Reference/bluez-5.66/sigterm-*.txt`): the kernel drops the links first
    /// (`ServicesResolved` and `Connected` false), discovery's RSSI goes, then one `PropertiesChanged`
    /// says `Powered` (and `Discovering`) false. Devices linked at that moment keep their objects and
    /// GATT tree (unbonded ones until the temporary timeout), other unpaired ones go at once (the 5.66
    /// reference capture: power off after a Disconnect removes the device).
    func poweredOff(discoveryEnded: Bool) async {
        var linked: Set<String> = []
        for key in deviceOrder where devices[key]!.link != .disconnected {
            linked.insert(key)
            await linkDown(key, pendingError: BlueZError.abortByLocal)
        }
        if discoveryEnded {
            discoveryAnnounced = false
            for key in deviceOrder { await apply(devices[key]!.discoveryStopped(), to: key) }
        }
        emitAdapter(discoveryEnded ? ["Powered", "Discovering"] : ["Powered"])
        let now = clock.now
        for key in deviceOrder {
            await apply(devices[key]!.adapterPoweredOff(wasLinked: linked.contains(key), now: now), to: key)
        }
    }

    func setAdapterProperty(_ name: String, _ value: DBusValue) async throws {
        switch name {
        case "Powered":
            guard let on = value.unwrappedVariant.asBool else { throw BlueZError.invalidArguments.dbus }
            await setPowered(on)
        case "Alias":
            guard let alias = value.unwrappedVariant.asString else { throw BlueZError.invalidArguments.dbus }
            adapterAliasOverride = alias.isEmpty ? nil : alias
            emitAdapter(["Alias"])
        case "Discoverable":
            guard let on = value.unwrappedVariant.asBool else { throw BlueZError.invalidArguments.dbus }
            do { changedModes(try adapterModes.setDiscoverable(on, powered: adapter.powered)) } catch {
                throw error.dbus
            }
        case "Pairable":
            guard let on = value.unwrappedVariant.asBool else { throw BlueZError.invalidArguments.dbus }
            changedModes(adapterModes.setPairable(on))
        case "DiscoverableTimeout":
            guard let seconds = value.unwrappedVariant.asUInt32 else { throw BlueZError.invalidArguments.dbus }
            changedModes(adapterModes.setDiscoverableTimeout(seconds))
        case "PairableTimeout":
            guard let seconds = value.unwrappedVariant.asUInt32 else { throw BlueZError.invalidArguments.dbus }
            changedModes(adapterModes.setPairableTimeout(seconds))
        default:
            throw BlueZError.invalidArguments.dbus
        }
    }

    /// Emits changed mode properties and (re)starts the timeouts that turn the modes off again.
    func changedModes(_ names: [String]) {
        guard !names.isEmpty else { return }
        emitAdapter(names)
        restartModeTimer("Discoverable", after: adapterModes.discoverableDeadline) { modes in
            try modes.setDiscoverable(false, powered: true)
        }
        restartModeTimer("Pairable", after: adapterModes.pairableDeadline) { modes in modes.setPairable(false) }
    }

    private func restartModeTimer(
        _ name: String, after deadline: Duration?, _ expire: @escaping @Sendable (inout AdapterModes) throws -> [String]
    ) {
        modeTimers.removeValue(forKey: name)?.cancel()
        guard let deadline else { return }
        let generation = self.generation
        modeTimers[name] = Task { [weak self] in
            // Real delay: the adapter's discoverable/pairable timeout.
            try? await Task.sleep(for: deadline)
            guard !Task.isCancelled, let self else { return }
            await self.modeTimerFired(name, generation: generation, expire)
        }
    }

    private func modeTimerFired(
        _ name: String, generation: Int, _ expire: @Sendable (inout AdapterModes) throws -> [String]
    ) {
        guard generation == self.generation else { return }
        modeTimers[name] = nil
        if let names = try? expire(&adapterModes), !names.isEmpty { emitAdapter(names) }
    }

    /// The default agent appeared or went: bluetoothd makes the adapter bondable exactly while there is one.
    func defaultAgentMayHaveChanged() {
        changedModes(adapterModes.defaultAgentChanged(present: agents.defaultOwner != nil))
    }

    /// Powers the adapter off or on (`Powered` property, or `SetPowered` on the control channel).
    package func setPowered(_ on: Bool) async {
        await apply(adapter.setPowered(on))
    }

    // MARK: AgentManager1

    func registerAgent(_ call: DBusMethodCall) throws {
        guard let path = call.arguments.first?.asObjectPath, let capability = call.arguments.last?.asString else {
            throw BlueZError.invalidArguments.dbus
        }
        do { try agents.register(owner: call.sender, path: path.rawValue, capability: capability) } catch {
            throw error.dbus
        }
        // bluetoothd makes the adapter pairable (bondable) through mgmt after answering: bluetoothctl
        // prints "Agent registered" before "Pairable: yes" against it.
        afterReply(call) { await $0.defaultAgentMayHaveChanged() }
    }

    func unregisterAgent(_ call: DBusMethodCall) throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        do { try agents.unregister(owner: call.sender, path: path.rawValue) } catch { throw error.dbus }
        afterReply(call) { await $0.defaultAgentMayHaveChanged() }
    }

    func requestDefaultAgent(_ call: DBusMethodCall) throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        do { try agents.requestDefault(owner: call.sender, path: path.rawValue) } catch { throw error.dbus }
        afterReply(call) { await $0.defaultAgentMayHaveChanged() }
    }

    // MARK: ProfileManager1

    func registerProfile(_ call: DBusMethodCall) throws {
        guard let path = call.arguments.first?.asObjectPath, let uuid = call.arguments.dropFirst().first?.asString
        else { throw BlueZError.invalidArguments.dbus }
        do { try profiles.register(owner: call.sender, path: path.rawValue, uuid: uuid) } catch { throw error.dbus }
    }

    func unregisterProfile(_ call: DBusMethodCall) throws {
        guard let path = call.arguments.first?.asObjectPath else { throw BlueZError.invalidArguments.dbus }
        do { try profiles.unregister(owner: call.sender, path: path.rawValue) } catch { throw error.dbus }
    }

    /// A client left the bus: its discovery session, filters, notification sessions and agent end.
    func clientVanished(_ name: String, generation: Int) async {
        guard generation == self.generation else { return }
        agents.clientVanished(name)
        profiles.clientVanished(name)
        monitors.ownerVanished(name)
        defaultAgentMayHaveChanged()
        if peripheralRole.clientVanished(name) { emitAdvertisingInstances() }
        await apply(adapter.clientVanished(name))
        for key in deviceOrder {
            await apply(devices[key]!.clientVanished(name), to: key)
        }
    }
}
