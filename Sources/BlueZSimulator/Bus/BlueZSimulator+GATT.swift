import Bluetooth
import DBus
import Foundation

/// `org.bluez.GattCharacteristic1` and `GattDescriptor1` behaviour.
extension BlueZSimulator {
    /// Releases the acquired sockets of `key` whose client end is already closed.
    func releaseClosedSockets(_ key: CharacteristicKey) {
        for notify in [true, false] {
            let socketKey = SocketKey(characteristic: key, notify: notify)
            guard let socket = sockets[socketKey], socket.peerClosed else { continue }
            socketEvent(socketKey, socket: socket, .closed, sender: "", generation: generation)
        }
    }

    func link(_ key: CharacteristicKey) -> CharacteristicState.Link {
        releaseClosedSockets(key)
        return devices[key.address]!.linkState(mtu: timing.mtu)
    }

    /// Reads `offset` (q) and `type` (s) from an options dictionary as `parse_options` does.
    static func parseOptions(_ value: DBusValue?) throws -> (offset: UInt16, type: String?) {
        guard let options = value?.asDictionary else { throw BlueZError.invalidArguments.dbus }
        var offset: UInt16 = 0
        var type: String?
        if let raw = options["offset"] {
            guard case .uint16(let parsed) = raw.unwrappedVariant else { throw BlueZError.invalidArguments.dbus }
            offset = parsed
        }
        if let raw = options["type"] {
            guard let parsed = raw.unwrappedVariant.asString else { throw BlueZError.invalidArguments.dbus }
            type = parsed
        }
        return (offset, type)
    }

    func readValue(_ key: CharacteristicKey, _ call: DBusMethodCall) async throws -> [UInt8] {
        let options = try Self.parseOptions(call.arguments.first)
        return try await withSecurity(key, call) { try readValue(key, offset: options.offset) }
    }

    private func readValue(_ key: CharacteristicKey, offset: UInt16) throws -> [UInt8] {
        let link = link(key)
        let options = (offset: offset, type: String?.none)
        do {
            let hadValue = devices[key.address]!.characteristics[key.id]!.hasCachedValue
            let before = devices[key.address]!.characteristics[key.id]!.cachedValue
            let value = try devices[key.address]!.withCharacteristic(key.id) { state throws(BlueZError) in
                try state.read(offset: options.offset, link: link)
            }
            if !hadValue || before != devices[key.address]!.characteristics[key.id]!.cachedValue {
                emitCharacteristic(key, ["Value"])
            }
            return value
        } catch {
            throw error.dbus
        }
    }

    /// `WriteValue`. As bluetoothd 5.66 (`characteristic_write_value`): "Not connected" first, then
    /// `InProgress` while a write request on the characteristic is under way (here: one waiting for a
    /// security raise, i.e. a pairing), from this client or another; a write command (without
    /// response) is never under way. (A second `ReadValue` at the same offset shares the running
    /// read's answer in bluetoothd, which is what waiting for the same pairing gives here.)
    func writeValue(_ key: CharacteristicKey, _ call: DBusMethodCall) async throws {
        if devices[key.address]!.connected && writesUnderWay.contains(key) { throw BlueZError.inProgress.dbus }
        guard let bytes = call.arguments.first?.asBytes else { throw BlueZError.invalidArguments.dbus }
        let options = try Self.parseOptions(call.arguments.last)
        var type: CharacteristicState.WriteType?
        if let text = options.type {
            // Any other string is not a procedure bluetoothd knows: NotSupported.
            guard let parsed = CharacteristicState.WriteType(rawValue: text.lowercased()) else {
                throw BlueZError.notSupported.dbus
            }
            type = parsed
        }
        let holds = type != .command && writesUnderWay.insert(key).inserted
        defer { if holds { writesUnderWay.remove(key) } }
        try await withSecurity(key, call) {
            try performWrite(key, bytes, type: type, offset: options.offset, sender: call.sender)
        }
    }

    func performWrite(
        _ key: CharacteristicKey, _ bytes: [UInt8], type: CharacteristicState.WriteType?, offset: UInt16,
        sender: String,
        acquired: Bool = false
    ) throws {
        let link = link(key)
        let outcome: CharacteristicState.WriteOutcome
        do {
            outcome = try devices[key.address]!.withCharacteristic(key.id) { state throws(BlueZError) in
                try state.write(bytes, type: type, offset: offset, link: link, acquired: acquired)
            }
        } catch {
            throw error.dbus
        }
        let uuid = devices[key.address]!.characteristics[key.id]!.definition.uuid
        writes[key.address, default: []].append(
            RecordedWrite(
                characteristic: uuid, value: bytes, type: outcome.type, accepted: outcome.accepted, sender: sender,
                time: wallClock.date))
        deliver(key, outcome.delivery)
    }

    func startNotify(_ key: CharacteristicKey, _ call: DBusMethodCall) async throws {
        try await withSecurity(key, call) { try startNotify(key, sender: call.sender) }
    }

    private func startNotify(_ key: CharacteristicKey, sender: String) throws {
        if devices[key.address]!.link == .disconnecting { throw BlueZError.notConnected.dbus }
        let link = link(key)
        do {
            let result = try devices[key.address]!.withCharacteristic(key.id) { state throws(BlueZError) in
                try state.startNotify(sender: sender, link: link)
            }
            if case .subscribed(notifyingChanged: true) = result { emitCharacteristic(key, ["Notifying"]) }
        } catch {
            throw error.dbus
        }
    }

    func stopNotify(_ key: CharacteristicKey, _ call: DBusMethodCall) async throws {
        releaseClosedSockets(key)
        do {
            let result = try devices[key.address]!.withCharacteristic(key.id) { state throws(BlueZError) in
                try state.stopNotify(sender: call.sender)
            }
            if result.releasedSocket {
                sockets.removeValue(forKey: SocketKey(characteristic: key, notify: true))?.close()
                emitCharacteristic(key, ["NotifyAcquired"])
            }
            if result.notifyingChanged { emitCharacteristic(key, ["Notifying"]) }
        } catch {
            throw error.dbus
        }
    }

    /// `AcquireNotify` / `AcquireWrite`: a SOCK_SEQPACKET pair; replies `(h fd, q mtu)`.
    func acquire(_ key: CharacteristicKey, notify: Bool, _ call: DBusMethodCall) async throws -> [DBusValue] {
        _ = try Self.parseOptions(call.arguments.first)
        try await withSecurity(key, call) {
            let link = link(key)
            let state = devices[key.address]!.characteristics[key.id]!
            do {
                if notify { try state.checkAcquireNotify(link: link) } else { try state.checkAcquireWrite(link: link) }
            } catch let error as BlueZError {
                throw error.dbus
            }
        }
        let (socket, clientFD) = try { () throws(BlueZError) in try AcquiredSocket.makePair() }()
        let descriptor = DBusFileDescriptor(takingOwnershipOf: clientFD)
        let socketKey = SocketKey(characteristic: key, notify: notify)
        sockets[socketKey] = socket
        devices[key.address]!.withCharacteristicUnchecked(key.id) { state in
            if notify { state.notifyAcquired(by: call.sender) } else { state.writeAcquired(by: call.sender) }
        }
        emitCharacteristic(key, [notify ? "NotifyAcquired" : "WriteAcquired"])
        let generation = self.generation
        Task { [weak self] in
            for await event in socket.events {
                guard let self else { return }
                await self.socketEvent(socketKey, socket: socket, event, sender: call.sender, generation: generation)
            }
        }
        return [.unixFD(descriptor), .uint16(timing.mtu)]
    }

    func socketEvent(
        _ socketKey: SocketKey, socket: AcquiredSocket, _ event: AcquiredSocket.Event, sender: String, generation: Int
    ) {
        guard generation == self.generation, sockets[socketKey] === socket else { return }
        let key = socketKey.characteristic
        switch event {
        case .packet(let bytes):
            // bluetoothd forwards each packet as a write command.
            try? performWrite(key, bytes, type: .command, offset: 0, sender: sender, acquired: true)
        case .closed:
            sockets[socketKey] = nil
            devices[key.address]!.withCharacteristicUnchecked(key.id) { $0.socketClosed(notify: socketKey.notify) }
            emitCharacteristic(key, [socketKey.notify ? "NotifyAcquired" : "WriteAcquired"])
        }
    }

    /// Sends a value change to whoever listens: PropertiesChanged on `Value`, or the AcquireNotify socket.
    /// Says whether the value reached a client: `.taken` when signalled or taken by its notify socket,
    /// `.full` when the notify socket was full (bluetoothd drops the value there: the client's loss,
    /// which load mode records), `.nobody` when nobody listens or the client closed or shut its socket.
    @discardableResult
    func deliver(_ key: CharacteristicKey, _ delivery: CharacteristicState.Delivery) -> AcquiredSocket.SendOutcome {
        switch delivery {
        case .none:
            return .nobody
        case .propertiesChanged(let value):
            guard let bluez, let path = try? DBusObjectPath(characteristicPath(key)) else { return .nobody }
            let emitted =
                (try? bluez.emitPropertiesChanged(
                    path: path, interface: Self.characteristicInterface, changed: ["Value": .bytes(value)])) != nil
            return emitted ? .taken : .nobody
        case .socket(let value):
            return sockets[SocketKey(characteristic: key, notify: true)]?.send(value) ?? .nobody
        }
    }

    /// The peer's value changed (generator, control channel, load mode); says whether it reached a
    /// client (``deliver(_:_:)``).
    @discardableResult
    func updateValue(_ key: CharacteristicKey, _ value: [UInt8], notify: Bool = true) -> AcquiredSocket.SendOutcome {
        let connected = devices[key.address]!.link == .connected && devices[key.address]!.servicesResolved
        let delivery = devices[key.address]!.withCharacteristicUnchecked(key.id) {
            $0.update(value, connected: notify && connected)
        }
        let delivered = deliver(key, delivery)
        if notify { batteryLevelChanged(key) }
        return delivered
    }

    // MARK: Descriptors

    func readDescriptor(_ key: CharacteristicKey, index: Int, _ call: DBusMethodCall) async throws -> [UInt8] {
        let options = try Self.parseOptions(call.arguments.first)
        guard link(key).connected else { throw BlueZError.gattNotConnected.dbus }
        guard var value = descriptorDefinition(key, index)?.value else { throw BlueZError.gattNotConnected.dbus }
        if let written = descriptorWrites[DescriptorKey(characteristic: key, index: index)] { value = written }
        if descriptorDefinition(key, index)?.uuid == ScenarioDescriptor.clientCharacteristicConfiguration {
            let state = devices[key.address]!.characteristics[key.id]!
            let enabled = state.notifying || state.notifyAcquired
            let indicate = !state.definition.properties.contains(.notify)
            value = [enabled ? (indicate ? 0x02 : 0x01) : 0x00, 0x00]
        }
        guard Int(options.offset) <= value.count else { throw BlueZError.att(.invalidOffset).dbus }
        let descriptorKey = DescriptorKey(characteristic: key, index: index)
        let changed = descriptorCache[descriptorKey] != value
        descriptorCache[descriptorKey] = value
        if changed, let bluez,
            let path = try? DBusObjectPath(
                characteristicPath(key) + "/" + descriptorDefinition(key, index)!.pathComponent)
        {
            try? bluez.emitPropertiesChanged(
                path: path, interface: Self.descriptorInterface, changed: ["Value": .bytes(value)])
        }
        return Array(value[Int(options.offset)...])
    }

    func writeDescriptor(_ key: CharacteristicKey, index: Int, _ call: DBusMethodCall) async throws {
        guard call.arguments.first?.asBytes != nil else { throw BlueZError.invalidArguments.dbus }
        _ = try Self.parseOptions(call.arguments.last)
        guard link(key).connected else { throw BlueZError.gattNotConnected.dbus }
        // The CCCD is written through StartNotify/StopNotify only; other descriptors as the scenario says.
        guard let spec = descriptorDefinition(key, index)?.spec else { throw BlueZError.att(.writeNotPermitted).dbus }
        guard spec.writable, let bytes = call.arguments.first?.asBytes else {
            throw BlueZError.att(spec.writeError).dbus
        }
        descriptorWrites[DescriptorKey(characteristic: key, index: index)] = bytes
    }
}
