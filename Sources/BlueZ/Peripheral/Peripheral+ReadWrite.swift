import Bluetooth
import DBus
import Foundation
import Logging
import Timekeeping

/// Reads and writes of characteristics and descriptors, and the one-operation-per-attribute rule
/// every BlueZ call of a ``Peripheral`` goes through.
extension Peripheral {
    // MARK: Reads and writes

    /// Reads the characteristic's value from the peripheral (always a fresh ATT read).
    public func readValue(for characteristic: GATTCharacteristic) async throws -> Data {
        let characteristic = try current(characteristic)
        guard characteristic.properties.contains(.read) else {
            throw BluetoothError(.readNotPermitted, "\(characteristic.uuid) is not readable")
        }
        let connection = self.connection
        let path = DBusObjectPath(trusted: characteristic.id)
        let timeout = callTimeout
        return try await perform(.read, on: path) { answered in
            try connection.startCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "ReadValue", arguments: [.properties([:])], timeout: timeout, whenAnswered: answered)
        } reply: { reply in
            Data(reply.first?.asBytes ?? [])
        }
    }

    /// Writes `data` with or without response. Throws `operationNotSupported` when the characteristic does not
    /// declare that write type and `invalidValueLength` when `data` is longer than `maximumWriteValueLength(for:)`.
    public func writeValue(_ data: Data, for characteristic: GATTCharacteristic, type: WriteType) async throws {
        let characteristic = try current(characteristic)
        guard characteristic.properties.contains(type.requiredProperty) else {
            throw BluetoothError(
                .operationNotSupported,
                "\(characteristic.uuid) does not support \(type) writes \(characteristic.properties)")
        }
        try ATTLimits.checkWrite(length: data.count, mtu: mtu, type: type)
        let connection = self.connection
        let path = DBusObjectPath(trusted: characteristic.id)
        let timeout = callTimeout
        try await perform(.write, on: path) { answered in
            try connection.startCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "WriteValue", arguments: [.bytes(Array(data)), .properties(["type": .string(type.bluezType)])],
                timeout: timeout, whenAnswered: answered)
        }
    }

    /// Reads a descriptor's value.
    public func readValue(for descriptor: GATTDescriptor) async throws -> Data {
        try requireReady()
        let path = DBusObjectPath(trusted: descriptor.id)
        guard gattObject(path, BlueZNames.gattDescriptor) != nil else { throw Self.notFound(descriptor.id) }
        let connection = self.connection
        let timeout = callTimeout
        return try await perform(.read, on: path) { answered in
            try connection.startCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattDescriptor,
                method: "ReadValue", arguments: [.properties([:])], timeout: timeout, whenAnswered: answered)
        } reply: { reply in
            Data(reply.first?.asBytes ?? [])
        }
    }

    /// Writes a descriptor's value.
    public func writeValue(_ data: Data, for descriptor: GATTDescriptor) async throws {
        try requireReady()
        let path = DBusObjectPath(trusted: descriptor.id)
        guard gattObject(path, BlueZNames.gattDescriptor) != nil else { throw Self.notFound(descriptor.id) }
        try ATTLimits.checkWrite(length: data.count, mtu: mtu, type: .withResponse)
        let connection = self.connection
        let timeout = callTimeout
        try await perform(.write, on: path) { answered in
            try connection.startCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattDescriptor,
                method: "WriteValue", arguments: [.bytes(Array(data)), .properties([:])], timeout: timeout,
                whenAnswered: answered)
        }
    }

    // MARK: Operations

    func requireReady() throws(BluetoothError) {
        guard lifecycle.state == .ready else {
            throw BluetoothError(.notConnected, "\(identifier) is \(lifecycle.peripheralState)")
        }
    }

    /// The characteristic as currently in BlueZ's tree (fresh properties), or `attributeNotFound`.
    func current(_ characteristic: GATTCharacteristic) throws(BluetoothError) -> GATTCharacteristic {
        try requireReady()
        let path = DBusObjectPath(trusted: characteristic.id)
        guard let properties = gattObject(path, BlueZNames.gattCharacteristic) else {
            throw Self.notFound(characteristic.id)
        }
        return makeCharacteristic(path, properties, in: gatt)
    }

    static func notFound(_ id: GATTAttributeID) -> BluetoothError {
        BluetoothError(.attributeNotFound, "\(id) is not in the peripheral's GATT database")
    }

    /// Sends a BlueZ call for an operation, passing it the closure it is given as `whenAnswered`.
    typealias CallStarter = @Sendable (_ answered: @escaping @Sendable (DBusErrorName?) -> Void) throws -> DBusSentCall

    /// Runs the BlueZ call `start` sends for `attribute` (see `performOnce`), pairing and retrying
    /// once on `insufficientAuthentication` when allowed; `reply` reads the result from its reply.
    func perform<T: Sendable>(
        _ operation: BluetoothOperation, on attribute: DBusObjectPath, _ start: @escaping CallStarter,
        reply: @escaping @Sendable ([DBusValue]) throws -> T
    ) async throws -> T {
        try await retryingAfterPairing { try await performOnce(operation, on: attribute, start, reply: reply) }
    }

    /// ``perform(_:on:_:reply:)`` for a call whose reply carries nothing the caller needs.
    func perform(
        _ operation: BluetoothOperation, on attribute: DBusObjectPath, _ start: @escaping CallStarter
    ) async throws {
        try await perform(operation, on: attribute, start, reply: { _ in })
    }

    /// Runs the BlueZ call `start` sends for `attribute`: one operation per attribute at a time, `InProgress`
    /// from BlueZ retried briefly, and failed at once with the disconnect error when the link drops before
    /// BlueZ answered. An answer that came first stands: bluetoothd answers a request and then reports the
    /// link down (a peer refusing pairing; `make stress`, 2026-12-04), and the caller must get that answer
    /// ("ATT error: 0x0e"), not `peripheralDisconnected`. The answer is noted on this thread as it is
    /// dispatched (`whenAnswered`), while the task that carries it on runs later on the pool. An
    /// `InProgress` answer is not the answer: the call is repeated after a pause, and a link drop during
    /// that pause fails the operation at once (it used to wait out the pause and fail with BlueZ's own
    /// "Not connected").
    ///
    /// The call is sent here, on the peripheral's thread, so calls leave in the order the operations
    /// reached BlueZ; its reply is awaited by a child of the manager's scope (``CentralManager/close()``
    /// ends it). After the manager closed, the operation fails with `operationCancelled`.
    func performOnce<T: Sendable>(
        _ operation: BluetoothOperation, on attribute: DBusObjectPath, _ start: @escaping CallStarter,
        reply: @escaping @Sendable ([DBusValue]) throws -> T
    ) async throws -> T {
        await acquire(attribute)
        defer { release(attribute) }
        try requireReady()
        nextID += 1
        let id = nextID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let once = ResumeOnce(continuation)
                operations[id] = { error in once.resume(with: .failure(error)) }
                // On the D-Bus thread, which this actor is pinned to, as the answer is dispatched.
                let answered: @Sendable (DBusErrorName?) -> Void = { [weak self] error in
                    guard error != BlueZNames.inProgressError else { return }
                    self?.assumeIsolated { $0.operationFinished(id) }
                }
                let first = Result { try start(answered) }
                let clock = self.clock
                let awaiting = scope.spawn {
                    let result: Result<T, any Error>
                    do {
                        let values = try await Self.retryingInProgress(
                            first, clock: clock, until: { once.isResumed }, again: { try start(answered) })
                        result = .success(try reply(values))
                    } catch {
                        result = .failure(BluetoothError.from(error, during: operation))
                    }
                    once.resume(with: result)
                    await self.operationFinished(id)
                }
                if !awaiting {
                    (try? first.get())?.cancel()
                    once.resume(with: .failure(BluetoothError(.operationCancelled, "the central manager is closed")))
                    operationFinished(id)
                }
            }
        } onCancel: {
            // A hop from the cancelling thread that only fails the operation.
            Task { await self.failOperation(id, BluetoothError(.operationCancelled)) }
        }
    }

    /// The reply to `first`, the call sent again (`again`) while BlueZ answers `InProgress` (at most three
    /// times, 100, 200 and 300 ms apart), and not once `ended` (the operation was failed meanwhile: a link
    /// drop, a cancel).
    static func retryingInProgress(
        _ first: Result<DBusSentCall, any Error>, clock: any BridgeClock, until ended: @Sendable () -> Bool,
        again: @Sendable () throws -> DBusSentCall
    ) async throws -> [DBusValue] {
        var call = first
        var attempt = 0
        while true {
            do {
                return try await call.get().reply()
            } catch let error as DBusError where error.name == BlueZNames.inProgressError && attempt < 3 {
                attempt += 1
                // Real delay: backoff before repeating a call BlueZ answered InProgress (it has no event for 'done').
                try await clock.sleep(for: .milliseconds(100 * attempt))
                if ended() { throw error }
                call = Result { try again() }
            }
        }
    }

    func operationFinished(_ id: Int) { operations[id] = nil }

    private func failOperation(_ id: Int, _ error: BluetoothError) {
        operations.removeValue(forKey: id)?(error)
    }

    private func acquire(_ attribute: DBusObjectPath) async {
        if busyAttributes.insert(attribute).inserted { return }
        await withCheckedContinuation { attributeWaiters[attribute, default: []].append($0) }
    }

    private func release(_ attribute: DBusObjectPath) {
        if var waiters = attributeWaiters[attribute], !waiters.isEmpty {
            let next = waiters.removeFirst()
            attributeWaiters[attribute] = waiters.isEmpty ? nil : waiters
            next.resume()  // the attribute stays busy for the next operation
        } else {
            busyAttributes.remove(attribute)
        }
    }
}
