/// What bluetoothd knows about one remote characteristic and what the peer holds for it, with the rules
/// of `src/gatt-client.c` (5.66) for reads, writes and notification sessions.
///
/// Pure: the caller passes the link state in and performs the returned effects.
package struct CharacteristicState: Sendable, Equatable {
    /// How a write was sent.
    package enum WriteType: String, Sendable, Equatable {
        case request, command, reliable
    }

    /// What a value change means for clients.
    package enum Delivery: Sendable, Equatable {
        /// Nobody listens, or the device is not connected: nothing is sent.
        case none
        /// `PropertiesChanged` on `Value` (StartNotify sessions).
        case propertiesChanged([UInt8])
        /// Written to the AcquireNotify socket.
        case socket([UInt8])
    }

    /// The link and security state the operation happens in.
    package struct Link: Sendable, Equatable {
        package var connected: Bool
        package var paired: Bool
        package var mtu: UInt16
        package init(connected: Bool, paired: Bool, mtu: UInt16) {
            self.connected = connected
            self.paired = paired
            self.mtu = mtu
        }
    }

    package let definition: GattDatabase.Characteristic
    /// The peer's current value.
    package private(set) var value: [UInt8]
    /// BlueZ's cached `Value` property: absent until a read or a notification.
    package private(set) var cachedValue: [UInt8]?
    /// Unique bus names with a StartNotify session (they survive disconnects, like bluetoothd's).
    package private(set) var notifySessions: Set<String> = []
    /// `Notifying`: the CCCD was written on the current or a previous connection.
    package private(set) var notifying = false
    /// The AcquireNotify owner while its socket is open.
    package private(set) var notifyAcquiredBy: String?
    package private(set) var writeAcquiredBy: String?

    package init(definition: GattDatabase.Characteristic) {
        self.definition = definition
        self.value = definition.spec.value
    }

    private var properties: Set<CharacteristicProperty> { definition.properties }
    private var spec: ScenarioCharacteristic { definition.spec }

    /// Whether `Value` exists: after a read or notification.
    package var hasCachedValue: Bool { cachedValue != nil }
    package var notifyAcquired: Bool { notifyAcquiredBy != nil }
    package var writeAcquired: Bool { writeAcquiredBy != nil }

    // MARK: Reads and writes

    /// `ReadValue`: returns the value (and caches it) or BlueZ's error. bluetoothd checks neither the
    /// read flag nor the offset (`characteristic_read_value` sends the read as it is): every refusal
    /// here is the peer's ATT answer.
    package mutating func read(offset: UInt16, link: Link) throws(BlueZError) -> [UInt8] {
        guard link.connected else { throw BlueZError.gattNotConnected }
        guard properties.contains(.read) else { throw BlueZError.att(spec.readError) }
        if spec.requiresPairing, !link.paired { throw BlueZError.att(.insufficientAuthentication) }
        if spec.readIgnoresOffset {
            cachedValue = value
            return value
        }
        guard Int(offset) <= value.count else { throw BlueZError.att(.invalidOffset) }
        let result = Array(value[Int(offset)...])
        cachedValue = value
        return result
    }

    /// The outcome of a write that reached the peer.
    package struct WriteOutcome: Sendable, Equatable {
        /// The write went out as this ATT procedure.
        package var type: WriteType
        /// The peer accepted the value (write commands to attributes that refuse them are silently dropped, as on air).
        package var accepted: Bool
        /// Delivery of the new value to notification listeners when the peer notifies on write.
        package var delivery: Delivery
    }

    /// `WriteValue`, choosing the procedure exactly as `characteristic_write_value` does.
    /// Packets from the AcquireWrite socket come in with `acquired` (write commands that bypass the lock).
    package mutating func write(
        _ bytes: [UInt8], type requested: WriteType?, offset: UInt16, link: Link, acquired: Bool = false
    ) throws(BlueZError) -> WriteOutcome {
        guard link.connected else { throw BlueZError.gattNotConnected }
        if writeAcquiredBy != nil, !acquired { throw BlueZError.notPermitted("Write acquired") }
        let procedure: WriteType
        if requested == .reliable || (requested == nil && properties.contains(.reliableWrite)) {
            procedure = .reliable
        } else if requested == .request || (requested == nil && properties.contains(.write)) {
            procedure = .request
        } else if (requested == .command || (requested == nil && properties.contains(.writeWithoutResponse)))
            && offset == 0
        {
            procedure = .command
        } else {
            throw BlueZError.notSupported
        }
        // The peer's ATT server answers; a write command gets no answer, so refusals are silent.
        let refusal = peerRefusal(bytes, procedure: procedure, offset: offset, link: link)
        if let refusal {
            if procedure == .command { return WriteOutcome(type: .command, accepted: false, delivery: .none) }
            throw BlueZError.att(refusal)
        }
        var newValue = value
        if offset == 0 {
            newValue = bytes
        } else {
            newValue.replaceSubrange(Int(offset)..<min(value.count, Int(offset) + bytes.count), with: bytes)
        }
        value = newValue
        let delivery = spec.notifyOnWrite ? deliver(newValue, connected: true) : .none
        return WriteOutcome(type: procedure, accepted: true, delivery: delivery)
    }

    private func peerRefusal(_ bytes: [UInt8], procedure: WriteType, offset: UInt16, link: Link) -> ATTError? {
        let permitted =
            switch procedure {
            case .request: properties.contains(.write)
            case .reliable: properties.contains(.reliableWrite) || properties.contains(.write)
            case .command: properties.contains(.writeWithoutResponse) || properties.contains(.write)
            }
        guard permitted else { return spec.writeError }
        if spec.requiresPairing, !link.paired { return .insufficientAuthentication }
        guard Int(offset) <= value.count else { return .invalidOffset }
        let length = Int(offset) + bytes.count
        guard length >= spec.minLength, length <= spec.maxLength else { return .invalidAttributeValueLength }
        if procedure == .command, bytes.count > Int(link.mtu) - 3 { return .invalidAttributeValueLength }
        if let range = spec.allowedRange, offset == 0, bytes.count == 1, !range.contains(bytes[0]) {
            return .valueNotAllowed
        }
        return nil
    }

    // MARK: Notifications

    /// What `StartNotify` does.
    package enum StartNotifyResult: Sendable, Equatable {
        /// The session exists and the CCCD was written: `Notifying` becomes true (emit it when it changed).
        case subscribed(notifyingChanged: Bool)
        /// The device is not connected: the session is kept and registered on the next connection (bluetoothd does this).
        case deferred
        /// The sender already has a session.
        case alreadySubscribed
    }

    package mutating func startNotify(sender: String, link: Link) throws(BlueZError) -> StartNotifyResult {
        if notifyAcquiredBy != nil { throw BlueZError.notPermitted("Notify acquired") }
        guard definition.canNotify else { throw BlueZError.notSupported }
        if notifySessions.contains(sender) { return .alreadySubscribed }
        if link.connected, spec.requiresPairing, !link.paired {
            // The CCCD write is refused with insufficient authentication.
            throw BlueZError.att(.insufficientAuthentication)
        }
        notifySessions.insert(sender)
        guard link.connected else { return .deferred }
        let changed = !notifying
        notifying = true
        return .subscribed(notifyingChanged: changed)
    }

    /// `StopNotify`: returns whether `Notifying` changed (to false).
    package mutating func stopNotify(sender: String) throws(BlueZError) -> (
        notifyingChanged: Bool, releasedSocket: Bool
    ) {
        if notifyAcquiredBy != nil {
            notifyAcquiredBy = nil
            return (false, true)
        }
        guard notifySessions.remove(sender) != nil else { throw BlueZError.failed("No notify session started") }
        return (updateNotifying(), false)
    }

    /// A client left the bus: its sessions end (`notify_client_disconnect`).
    package mutating func clientVanished(_ sender: String) -> (notifyingChanged: Bool, releasedSocket: Bool) {
        var released = false
        if notifyAcquiredBy == sender {
            notifyAcquiredBy = nil
            released = true
        }
        if writeAcquiredBy == sender { writeAcquiredBy = nil }
        guard notifySessions.remove(sender) != nil else { return (false, released) }
        return (updateNotifying(), released)
    }

    private mutating func updateNotifying() -> Bool {
        guard notifying, notifySessions.isEmpty, notifyAcquiredBy == nil else { return false }
        notifying = false
        return true
    }

    /// `AcquireNotify` checks; on success the caller creates the socket pair and calls ``notifyAcquired(by:)``.
    package func checkAcquireNotify(link: Link) throws(BlueZError) {
        guard link.connected else { throw BlueZError.gattNotConnected }
        if notifyAcquiredBy != nil { throw BlueZError.notPermitted("Notify acquired") }
        if !notifySessions.isEmpty { throw BlueZError.busy }
        guard properties.contains(.notify) else { throw BlueZError.notSupported }
        if spec.requiresPairing, !link.paired { throw BlueZError.att(.insufficientAuthentication) }
    }

    package mutating func notifyAcquired(by sender: String) { notifyAcquiredBy = sender }

    /// `AcquireWrite` checks.
    package func checkAcquireWrite(link: Link) throws(BlueZError) {
        guard link.connected else { throw BlueZError.gattNotConnected }
        if writeAcquiredBy != nil { throw BlueZError.notPermitted("Write acquired") }
        guard properties.contains(.writeWithoutResponse) else { throw BlueZError.notSupported }
    }

    package mutating func writeAcquired(by sender: String) { writeAcquiredBy = sender }

    /// The client closed its socket (or the link dropped): `NotifyAcquired`/`WriteAcquired` go false.
    package mutating func socketClosed(notify: Bool) {
        if notify { notifyAcquiredBy = nil } else { writeAcquiredBy = nil }
    }

    /// A disconnection: sockets close (HUP), sessions stay registered and `Notifying` keeps its value,
    /// as bluetoothd's `btd_gatt_client_disconnected` does. Returns which sockets closed.
    package mutating func linkDropped() -> (notify: Bool, write: Bool) {
        let closed = (notifyAcquiredBy != nil, writeAcquiredBy != nil)
        notifyAcquiredBy = nil
        writeAcquiredBy = nil
        return closed
    }

    /// Reconnected with services resolved: deferred sessions register; returns whether `Notifying` changed.
    package mutating func linkReady() -> Bool {
        guard !notifySessions.isEmpty, !notifying else { return false }
        notifying = true
        return true
    }

    // MARK: Value changes

    /// The peer's value changed (generator tick, control channel): returns how it reaches clients.
    package mutating func update(_ newValue: [UInt8], connected: Bool) -> Delivery {
        value = newValue
        return deliver(newValue, connected: connected)
    }

    private mutating func deliver(_ newValue: [UInt8], connected: Bool) -> Delivery {
        guard connected, definition.canNotify else { return .none }
        if notifyAcquiredBy != nil { return .socket(newValue) }
        guard notifying, !notifySessions.isEmpty else { return .none }
        cachedValue = newValue
        return .propertiesChanged(newValue)
    }

    /// Forgets everything a client set up (the device object was removed).
    package mutating func reset() {
        notifySessions = []
        notifying = false
        notifyAcquiredBy = nil
        writeAcquiredBy = nil
        cachedValue = nil
    }
}
