import Bluetooth
import DBus
import Foundation
import Logging
import Timekeeping

/// A remote LE peripheral (`CBPeripheral`) backed by a BlueZ `org.bluez.Device1` object.
///
/// An actor: safe to use from many tasks at once. Operations on one attribute are serialised (BlueZ answers
/// `InProgress` to a second concurrent read of the same characteristic); operations on different attributes run
/// concurrently. Every GATT operation fails with `notConnected` when the peripheral is not connected and with
/// `peripheralDisconnected` when the link drops while it is pending.
///
/// Obtain peripherals from `CentralManager.scan(…)` or `retrievePeripherals(withIdentifiers:)`; connect with
/// `CentralManager.connect(_:timeout:)`.
///
/// Pinned, with its manager, to the D-Bus connection's thread: the manager hands it BlueZ's changes
/// with plain calls as the signals are dispatched (see ``CentralManager``).
public actor Peripheral {
    /// The peripheral's address (BlueZ identifies LE devices by address).
    public nonisolated let identifier: BluetoothAddress
    nonisolated let path: DBusObjectPath
    nonisolated let connection: DBusConnection
    /// The D-Bus connection's thread, shared with the ``CentralManager`` (see its comment).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { connection.serialExecutor }
    private let onDisconnect: @Sendable (DisconnectEvent) -> Void
    private let callTimeout: Duration
    /// The manager's injected clock: connect timeouts, retry delays, `waitForCharacteristic`'s timeout.
    private let clock: any BridgeClock
    /// Pairs the peripheral when an operation needs it (`CentralManager.Options.pairOnInsufficientAuthentication`).
    let authenticationHandler: (@Sendable (Peripheral, BluetoothError) async throws -> Void)?

    private var device: [String: DBusValue] = [:]
    private var gatt: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
    /// The last connection through `CentralManager.connect` resolved to exactly the GATT objects bluetoothd
    /// exported before it started: its cached copy of the peer's database stood ("DB Hash match: skipping
    /// discovery") and nothing was discovered, so a service missing now stays missing until the peer changes
    /// its database or BlueZ forgets the device (``GATTCacheRecovery``). False when the tree changed during
    /// the connection, when nothing was exported before it, or when `GetManagedObjects` failed.
    public private(set) var gattCacheReused = false
    private var lifecycle: ConnectionLifecycle
    private var connectWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var operations: [Int: @Sendable (BluetoothError) -> Void] = [:]
    private var nextID = 0
    private var timeoutTask: Task<Void, Never>?
    private var resolveTimerTask: Task<Void, Never>?
    private var subscriptions: [DBusObjectPath: Subscription] = [:]
    private var busyAttributes: Set<DBusObjectPath> = []
    private var attributeWaiters: [DBusObjectPath: [CheckedContinuation<Void, Never>]] = [:]
    private var acquiredMTU: Int?
    /// `disconnect()` calls, woken once the link is down and no attempt is pending.
    private var settledWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    /// `waitForCharacteristic` calls, woken when the GATT tree grows.
    private var gattWaiters: [Int: GATTWaiter] = [:]

    private struct GATTWaiter {
        let uuid: BluetoothUUID
        let service: BluetoothUUID?
        let once: ResumeOnce<Bool>
    }

    private struct Subscription {
        let channel: NotificationChannel
        var reader: NotifySocketPoller.Registration?
        var enabling: Task<Void, any Error>?
    }

    init(
        identifier: BluetoothAddress, path: DBusObjectPath, connection: DBusConnection,
        lifecycle: ConnectionLifecycle.Configuration, callTimeout: Duration, clock: any BridgeClock = SystemClock(),
        onDisconnect: @escaping @Sendable (DisconnectEvent) -> Void,
        authenticationHandler: (@Sendable (Peripheral, BluetoothError) async throws -> Void)? = nil
    ) {
        self.identifier = identifier
        self.path = path
        self.connection = connection
        self.lifecycle = ConnectionLifecycle(configuration: lifecycle)
        self.callTimeout = callTimeout
        self.clock = clock
        self.onDisconnect = onDisconnect
        self.authenticationHandler = authenticationHandler
    }

    // MARK: State

    /// `disconnected`, `connecting`, `connected` (services resolved) or `disconnecting`.
    public var state: PeripheralState { lifecycle.peripheralState }

    /// The name BlueZ knows (advertised or read from the device), else its alias.
    public var name: String? { device["Name"]?.asString ?? device["Alias"]?.asString }

    /// The last RSSI BlueZ reported (while discovering), in dBm.
    public var rssi: Int? { DeviceProperties.rssi(device) }

    /// What the peripheral advertised, as BlueZ last reported it.
    public var advertisementData: AdvertisementData { DeviceProperties.advertisement(device) }

    /// Whether BlueZ holds a bond with the peripheral.
    public var isPaired: Bool { device["Paired"]?.asBool ?? false }

    /// Whether BlueZ stored the keys, so the bond survives reconnects and restarts (`Device1.Bonded`).
    public var isBonded: Bool { device["Bonded"]?.asBool ?? false }

    /// Whether the device is marked `Trusted` in BlueZ.
    public var isTrusted: Bool { device["Trusted"]?.asBool ?? false }

    /// The negotiated ATT MTU (23 until known).
    public var mtu: Int {
        let characteristicMTUs = gatt.values.compactMap { $0[BlueZNames.gattCharacteristic]?["MTU"]?.asUInt16 }
        return max(ATTLimits.defaultMTU, acquiredMTU ?? 0, Int(characteristicMTUs.max() ?? 0))
    }

    /// The longest value one write of `type` may carry (`CBPeripheral.maximumWriteValueLength(for:)`).
    public func maximumWriteValueLength(for type: WriteType) -> Int {
        ATTLimits.maximumWriteValueLength(mtu: mtu, type: type)
    }

    /// The resolved GATT database (empty until connected with services resolved).
    public var services: [GATTService] {
        guard lifecycle.servicesResolved else { return [] }
        return buildServices()
    }

    // MARK: Discovery over BlueZ's resolved tree

    /// The services, all or those with the given UUIDs (`discoverServices(_:)`); needs a connection.
    public func discoverServices(_ uuids: [BluetoothUUID]? = nil) throws(BluetoothError) -> [GATTService] {
        try requireReady()
        let all = buildServices()
        guard let uuids else { return all }
        return all.filter { uuids.contains($0.uuid) }
    }

    /// The services included by `service` (`discoverIncludedServices(_:for:)`).
    public func discoverIncludedServices(_ uuids: [BluetoothUUID]? = nil, for service: GATTService)
        throws(BluetoothError) -> [GATTService]
    {
        let all = try discoverServices()
        guard let current = all.first(where: { $0.id == service.id }) else { throw Self.notFound(service.id) }
        let included = all.filter { current.includedServiceIDs.contains($0.id) }
        guard let uuids else { return included }
        return included.filter { uuids.contains($0.uuid) }
    }

    /// The characteristics of `service` (`discoverCharacteristics(_:for:)`).
    public func discoverCharacteristics(_ uuids: [BluetoothUUID]? = nil, for service: GATTService)
        throws(BluetoothError) -> [GATTCharacteristic]
    {
        guard let current = try discoverServices().first(where: { $0.id == service.id }) else {
            throw Self.notFound(service.id)
        }
        guard let uuids else { return current.characteristics }
        return current.characteristics.filter { uuids.contains($0.uuid) }
    }

    /// The descriptors of `characteristic` (`discoverDescriptors(for:)`).
    public func discoverDescriptors(for characteristic: GATTCharacteristic) throws(BluetoothError) -> [GATTDescriptor] {
        try current(characteristic).descriptors
    }

    /// The first characteristic with `uuid` (in the service with `service` when given).
    public func characteristic(_ uuid: BluetoothUUID, service: BluetoothUUID? = nil) throws(BluetoothError)
        -> GATTCharacteristic
    {
        for candidate in try discoverServices() where service == nil || candidate.uuid == service {
            if let found = candidate.characteristic(uuid) { return found }
        }
        throw BluetoothError(.attributeNotFound, "no characteristic \(uuid) on \(identifier)")
    }

    /// The characteristic `uuid` (in `service` when given), waiting up to `timeout` for it to appear;
    /// nil when it did not. A peripheral whose GATT application registers after the link came up
    /// announces its services later: it indicates Service Changed, bluetoothd discovers again and
    /// adds the objects (`InterfacesAdded` under the device), while `ServicesResolved` stays true.
    /// Throws when the peripheral is not connected or the link drops meanwhile.
    public func waitForCharacteristic(
        _ uuid: BluetoothUUID, service: BluetoothUUID? = nil, timeout: Duration
    ) async throws -> GATTCharacteristic? {
        try requireReady()
        if let found = try? characteristic(uuid, service: service) { return found }
        nextID += 1
        let id = nextID
        let appeared = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                let once = ResumeOnce(continuation)
                gattWaiters[id] = GATTWaiter(uuid: uuid, service: service, once: once)
                operations[id] = { error in once.resume(with: .failure(error)) }
                // Not cancelled when the wait ends: ending an ended wait does nothing.
                Deadline.after(timeout, clock: clock) { await self.endGATTWait(id, .success(false)) }
            }
        } onCancel: {
            Task { await self.endGATTWait(id, .failure(BluetoothError(.operationCancelled))) }
        }
        return appeared ? try? characteristic(uuid, service: service) : nil
    }

    private func endGATTWait(_ id: Int, _ result: Result<Bool, any Error>) {
        operations[id] = nil
        gattWaiters.removeValue(forKey: id)?.once.resume(with: result)
    }

    /// Wakes the `waitForCharacteristic` calls whose characteristic the tree now has.
    private func wakeGATTWaiters() {
        for (id, waiter) in gattWaiters where (try? characteristic(waiter.uuid, service: waiter.service)) != nil {
            endGATTWait(id, .success(true))
        }
    }

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
            let reply = try await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "ReadValue", arguments: [.properties([:])], timeout: timeout, whenAnswered: answered)
            return Data(reply.first?.asBytes ?? [])
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
            _ = try await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "WriteValue", arguments: [.bytes(Array(data)), .properties(["type": .string(type.bluezType)])],
                timeout: timeout, whenAnswered: answered)
        }
    }

    /// Reads a descriptor's value.
    public func readValue(for descriptor: GATTDescriptor) async throws -> Data {
        try requireReady()
        let path = DBusObjectPath(trusted: descriptor.id)
        guard gatt[path]?[BlueZNames.gattDescriptor] != nil else { throw Self.notFound(descriptor.id) }
        let connection = self.connection
        let timeout = callTimeout
        return try await perform(.read, on: path) { answered in
            let reply = try await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattDescriptor,
                method: "ReadValue", arguments: [.properties([:])], timeout: timeout, whenAnswered: answered)
            return Data(reply.first?.asBytes ?? [])
        }
    }

    /// Writes a descriptor's value.
    public func writeValue(_ data: Data, for descriptor: GATTDescriptor) async throws {
        try requireReady()
        let path = DBusObjectPath(trusted: descriptor.id)
        guard gatt[path]?[BlueZNames.gattDescriptor] != nil else { throw Self.notFound(descriptor.id) }
        try ATTLimits.checkWrite(length: data.count, mtu: mtu, type: .withResponse)
        let connection = self.connection
        let timeout = callTimeout
        try await perform(.write, on: path) { answered in
            _ = try await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattDescriptor,
                method: "WriteValue", arguments: [.bytes(Array(data)), .properties([:])], timeout: timeout,
                whenAnswered: answered)
        }
    }

    // MARK: Notifications

    /// Values the characteristic notifies or indicates, as a stream. Enables notifications before returning
    /// (`AcquireNotify` where BlueZ offers it: a socket read by the process's one notify thread; else `StartNotify` and
    /// `PropertiesChanged`), shares them between all listeners, and disables them when the last listener stops.
    /// The stream ends with `peripheralDisconnected` when the link drops: subscribe again after reconnecting.
    public func notifications(for characteristic: GATTCharacteristic) async throws -> AsyncThrowingStream<
        Data, any Error
    > {
        try await retryingAfterPairing { try await subscribe(to: characteristic) }
    }

    /// Delivers the characteristic's values to `onValue` on the thread that receives them (the
    /// `AcquireNotify` socket thread, or the D-Bus thread, as the `PropertiesChanged` signal is
    /// dispatched, for `StartNotify`: indications), in order, with no task, stream or actor hop: for hot paths that do little and hand the value on. `onEnd` runs once
    /// when the notifications end by themselves (the peripheral disconnected; the error says why),
    /// never after ``NotificationListener/cancel()``. Both must return quickly: they hold up every
    /// other notification of the process. Enabling works, fails and is shared exactly as for
    /// ``notifications(for:)``; notifications stop when the last listener of the characteristic leaves.
    public func notifications(
        for characteristic: GATTCharacteristic, onValue: @escaping @Sendable (Data) -> Void,
        onEnd: @escaping @Sendable ((any Error)?) -> Void = { _ in }
    ) async throws -> NotificationListener {
        try await retryingAfterPairing {
            let (path, channel, id) = try await listen(
                to: characteristic, with: .handler(onValue: onValue, onEnd: onEnd))
            return NotificationListener { [weak self] in
                // At once, not in the task: values that arrive after cancel() returned must not reach
                // the handler (a re-subscription would otherwise see them twice).
                _ = channel.remove(id)
                Task { await self?.listenerEnded(path, channel: channel, id: id) }
            }
        }
    }

    private func subscribe(to characteristic: GATTCharacteristic) async throws -> AsyncThrowingStream<Data, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Data.self, bufferingPolicy: .bufferingNewest(4096))
        let (path, channel, id) = try await listen(to: characteristic, with: .stream(continuation))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.listenerEnded(path, channel: channel, id: id) }
        }
        return stream
    }

    /// Enables notifications (once per characteristic, shared) and adds `listener` to its channel.
    private func listen(to characteristic: GATTCharacteristic, with listener: NotificationChannel.Listener)
        async throws -> (DBusObjectPath, NotificationChannel, Int)
    {
        let characteristic = try current(characteristic)
        guard characteristic.properties.canNotify else {
            throw BluetoothError(
                .operationNotSupported,
                "\(characteristic.uuid) can neither notify nor indicate \(characteristic.properties)")
        }
        let path = DBusObjectPath(trusted: characteristic.id)
        let subscription: Subscription
        if let existing = subscriptions[path] {
            subscription = existing
        } else {
            let channel = NotificationChannel()
            let properties = characteristic.properties
            let enabling = Task { try await self.enable(path, channel: channel, properties: properties) }
            subscription = Subscription(channel: channel, reader: nil, enabling: enabling)
            subscriptions[path] = subscription
        }
        do {
            try await subscription.enabling?.value
        } catch {
            if subscriptions[path]?.channel === subscription.channel { subscriptions[path] = nil }
            throw BluetoothError.from(error, during: .notify)
        }
        guard let id = subscription.channel.add(listener) else {
            throw BluetoothError(.peripheralDisconnected, "the peripheral disconnected while enabling notifications")
        }
        return (path, subscription.channel, id)
    }

    /// Whether notifications are currently enabled on the characteristic by this process.
    public func isNotifying(_ characteristic: GATTCharacteristic) -> Bool {
        let path = DBusObjectPath(trusted: characteristic.id)
        guard let subscription = subscriptions[path] else { return false }
        if subscription.reader != nil { return true }
        return gatt[path]?[BlueZNames.gattCharacteristic]?["Notifying"]?.asBool ?? false
    }

    private func enable(_ path: DBusObjectPath, channel: NotificationChannel, properties: CharacteristicProperties)
        async throws
    {
        try requireReady()
        if properties.contains(.notify) {
            do {
                let reply = try await connection.call(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                    method: "AcquireNotify", arguments: [.properties([:])], timeout: callTimeout)
                if let descriptor = reply.first?.asFileDescriptor {
                    let fd = try descriptor.duplicate()
                    if let mtu = reply.dropFirst().first?.asUInt16 { acquiredMTU = max(acquiredMTU ?? 0, Int(mtu)) }
                    let reader = NotifySocketPoller.shared.add(
                        fd: fd, onValue: { channel.yield($0) },
                        onEnd: { [weak self] in Task { await self?.acquiredSocketEnded(path, channel: channel) } })
                    if subscriptions[path]?.channel === channel {
                        subscriptions[path]?.reader = reader
                    } else {
                        reader.stop()  // every listener left while BlueZ was answering
                    }
                    return
                }
            } catch {
                let mapped = BluetoothError.from(error, during: .notify)
                switch mapped.code {
                // The peer's own ATT error (its CCCD write failed; 0x0e after a refused pairing) would fail
                // StartNotify the same way, on a link bluetoothd is dropping: that error is the answer.
                case .notConnected, .peripheralDisconnected, .resetting, .notPoweredOn, .attributeError: throw mapped
                default: break  // fall back to StartNotify (indications, NotifyAcquired by someone else, …)
                }
            }
        }
        do {
            _ = try await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "StartNotify", timeout: callTimeout)
        } catch {
            throw BluetoothError.from(error, during: .notify)
        }
    }

    private func listenerEnded(_ path: DBusObjectPath, channel: NotificationChannel, id: Int) async {
        guard channel.remove(id) == 0, let subscription = subscriptions[path], subscription.channel === channel else {
            return
        }
        subscriptions[path] = nil
        if let reader = subscription.reader {
            reader.stop()  // closing our end makes BlueZ disable notifications
        } else if lifecycle.state == .ready {
            _ = try? await connection.call(
                destination: BlueZNames.service, path: path, interface: BlueZNames.gattCharacteristic,
                method: "StopNotify", timeout: callTimeout)
        }
    }

    private func acquiredSocketEnded(_ path: DBusObjectPath, channel: NotificationChannel) async {
        // BlueZ closes the socket as the link drops, just before it sends Connected=false; the signal can reach
        // this actor later (signals and replies take separate paths here). BlueZ's answer to a Get comes after
        // that signal on the bus: when it says the link is down, the signal is on its way and ends the stream
        // with the real reason (`failPendingOperations`). Otherwise the socket ended on its own.
        if lifecycle.state == .ready, await linkReportedDown() { return }
        guard let subscription = subscriptions[path], subscription.channel === channel else { return }
        subscriptions[path] = nil
        channel.finish(
            throwing: lifecycle.state == .ready
                ? BluetoothError(.failed, "BlueZ closed the notification socket")
                : BluetoothError(.peripheralDisconnected))
    }

    /// Whether BlueZ says `Connected` is false now (nil answer: unknown, treated as up).
    private func linkReportedDown() async -> Bool {
        let reply = try? await connection.call(
            destination: BlueZNames.service, path: path, interface: BlueZNames.properties, method: "Get",
            arguments: [.string(BlueZNames.device), .string("Connected")], timeout: callTimeout)
        return reply?.first?.asBool == false
    }

    // MARK: Operations

    private func requireReady() throws(BluetoothError) {
        guard lifecycle.state == .ready else {
            throw BluetoothError(.notConnected, "\(identifier) is \(lifecycle.peripheralState)")
        }
    }

    /// The characteristic as currently in BlueZ's tree (fresh properties), or `attributeNotFound`.
    private func current(_ characteristic: GATTCharacteristic) throws(BluetoothError) -> GATTCharacteristic {
        try requireReady()
        let path = DBusObjectPath(trusted: characteristic.id)
        guard let properties = gatt[path]?[BlueZNames.gattCharacteristic] else {
            throw Self.notFound(characteristic.id)
        }
        return makeCharacteristic(path, properties)
    }

    private static func notFound(_ id: GATTAttributeID) -> BluetoothError {
        BluetoothError(.attributeNotFound, "\(id) is not in the peripheral's GATT database")
    }

    /// Runs `body` (a BlueZ call) for `attribute` (see `performOnce`), pairing and retrying once on
    /// `insufficientAuthentication` when allowed. `body` passes the closure it is given to the call's
    /// `whenAnswered`.
    private func perform<T: Sendable>(
        _ operation: BluetoothOperation, on attribute: DBusObjectPath,
        _ body: @escaping @Sendable (_ answered: @escaping @Sendable (DBusErrorName?) -> Void) async throws -> T
    ) async throws -> T {
        try await retryingAfterPairing { try await performOnce(operation, on: attribute, body) }
    }

    /// Runs `body` (a BlueZ call) for `attribute`: one operation per attribute at a time, `InProgress` from BlueZ
    /// retried briefly, and failed at once with the disconnect error when the link drops before BlueZ answered.
    /// An answer that came first stands: bluetoothd answers a request and then reports the link down (a
    /// peer refusing pairing; `make stress`, 2026-12-04), and the caller must get that answer ("ATT error:
    /// 0x0e"), not `peripheralDisconnected`. The answer is noted on this thread as it is dispatched
    /// (`whenAnswered`), while the task that carries it on runs later on the pool. An `InProgress` answer
    /// is not the answer: the call is repeated after a pause, and a link drop during that pause fails the
    /// operation at once (it used to wait out the pause and fail with BlueZ's own "Not connected").
    private func performOnce<T: Sendable>(
        _ operation: BluetoothOperation, on attribute: DBusObjectPath,
        _ body: @escaping @Sendable (_ answered: @escaping @Sendable (DBusErrorName?) -> Void) async throws -> T
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
                Task {
                    let result: Result<T, any Error>
                    do {
                        result = .success(
                            try await Self.retryingInProgress(
                                operation, clock: clock, until: { once.isResumed }, { try await body(answered) }))
                    } catch {
                        result = .failure(BluetoothError.from(error, during: operation))
                    }
                    once.resume(with: result)
                    self.operationFinished(id)
                }
            }
        } onCancel: {
            Task { await self.failOperation(id, BluetoothError(.operationCancelled)) }
        }
    }

    /// Repeats `body` while BlueZ answers `InProgress` (at most three times, 100, 200 and 300 ms apart), and
    /// not once `ended` (the operation was failed meanwhile: a link drop, a cancel).
    private static func retryingInProgress<T: Sendable>(
        _ operation: BluetoothOperation, clock: any BridgeClock, until ended: @Sendable () -> Bool,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        var attempt = 0
        while true {
            do {
                return try await body()
            } catch let error as DBusError where error.name == BlueZNames.inProgressError && attempt < 3 {
                attempt += 1
                // Real delay: backoff before repeating a call BlueZ answered InProgress (it has no event for 'done').
                try await clock.sleep(for: .milliseconds(100 * attempt))
                if ended() { throw error }
            }
        }
    }

    private func operationFinished(_ id: Int) { operations[id] = nil }

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

    // MARK: Connection (driven by CentralManager)

    func connect(timeout: Duration) async throws {
        nextID += 1
        let id = nextID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                connectWaiters[id] = continuation
                handle(.connectRequested(timeout: timeout))
            }
        } onCancel: {
            Task { await self.cancelConnectWaiter(id) }
        }
    }

    private func cancelConnectWaiter(_ id: Int) {
        connectWaiters.removeValue(forKey: id)?.resume(throwing: BluetoothError(.operationCancelled))
    }

    func cancelConnection() {
        handle(.cancelRequested)
    }

    /// Disconnects, or abandons a pending connect, and returns once BlueZ has reported the link down
    /// and nothing is pending (or when the calling task is cancelled). A process that exits right
    /// after `cancelConnection()` can leave its `Disconnect` unsent, or the device connected by a
    /// `Connect` BlueZ completes later, to nobody: a connected device stops advertising and the
    /// next start never sees it.
    func disconnect() async {
        handle(.cancelRequested)
        guard !isSettled else { return }
        nextID += 1
        let id = nextID
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if isSettled || Task.isCancelled {
                    continuation.resume()
                } else {
                    settledWaiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.resumeSettledWaiter(id) }
        }
    }

    private func resumeSettledWaiter(_ id: Int) {
        settledWaiters.removeValue(forKey: id)?.resume()
    }

    /// No link and no attempt: what `disconnect()` waits for.
    private var isSettled: Bool { lifecycle.state == .disconnected && !lifecycle.isLinkUp }

    /// Feeds one event to the lifecycle and performs its actions. With `BLEBRIDGE_LOG=debug` every
    /// step is logged (event, new state, actions): the trail to read when a connect times out.
    func handle(_ event: ConnectionLifecycle.Event) {
        let actions = lifecycle.handle(event)
        Self.logger.debug(
            "lifecycle",
            [
                ("device", identifier.description), ("event", "\(event)"), ("state", "\(lifecycle.state)"),
                ("actions", actions.map { "\($0)" }.joined(separator: ", ")),
            ])
        for action in actions { perform(action) }
        if isSettled, !settledWaiters.isEmpty {
            let waiters = settledWaiters
            settledWaiters.removeAll()
            for waiter in waiters.values { waiter.resume() }
        }
    }

    private static let logger = Logger(label: "connection")

    private func perform(_ action: ConnectionLifecycle.Action) {
        switch action {
        case .callConnect(let attempt):
            let connection = self.connection
            let path = self.path
            // Our own deadline governs; the D-Bus timeout is only a backstop.
            let timeout = max(callTimeout, .seconds(60))
            Task {
                do {
                    _ = try await connection.call(
                        destination: BlueZNames.service, path: path, interface: BlueZNames.device, method: "Connect",
                        timeout: timeout)
                    await self.handle(.connectSucceeded(attempt: attempt, servicesCached: self.hasCachedServices))
                } catch {
                    self.handle(.connectFailed(attempt: attempt, BluetoothError.from(error, during: .connect)))
                }
            }
        case .callDisconnect:
            let curing = lifecycle.state == .curingStaleInProgress || lifecycle.state == .recoveringStalledResolve
            let attempt = lifecycle.attempt
            let connection = self.connection
            let path = self.path
            let timeout = callTimeout
            Task {
                _ = try? await connection.call(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.device, method: "Disconnect",
                    timeout: timeout)
                self.handle(curing ? .cureFinished(attempt: attempt) : .disconnectFinished)
            }
        case .startTimeout(let attempt, let duration):
            timeoutTask?.cancel()
            // The connect attempt's timeout (a stale one is ignored by the lifecycle: `attempt`).
            timeoutTask = Deadline.after(duration, clock: clock) { await self.handle(.timeoutFired(attempt: attempt)) }
        case .cancelTimeout:
            timeoutTask?.cancel()
            timeoutTask = nil
            resolveTimerTask?.cancel()
            resolveTimerTask = nil
        case .startResolveTimer(let attempt, let round, let duration):
            resolveTimerTask?.cancel()
            Self.logger.debug(
                "waiting for ServicesResolved of a cached device",
                [("device", identifier.description), ("limit", "\(duration)")])
            resolveTimerTask = Deadline.after(duration, clock: clock) {
                await self.resolveTimerFired(attempt: attempt, round: round, after: duration)
            }
        case .scheduleRetry(let attempt, let delay):
            let clock = self.clock
            Task {
                // Real delay: the lifecycle's retry delay (after InProgress or an aborted link).
                try? await clock.sleep(for: delay)
                self.handle(.retryDue(attempt: attempt))
            }
        case .completeConnect(let error):
            let waiters = connectWaiters
            connectWaiters.removeAll()
            for waiter in waiters.values {
                if let error { waiter.resume(throwing: error) } else { waiter.resume() }
            }
        case .failPendingOperations(let error):
            let failing = operations
            operations.removeAll()
            gattWaiters.removeAll()
            for fail in failing.values { fail(error) }
            let ending = subscriptions
            subscriptions.removeAll()
            for subscription in ending.values {
                let channel = subscription.channel
                if let reader = subscription.reader {
                    // The channel ends once the reader delivered what its socket still held: the
                    // last notifications before a link drop are not lost.
                    reader.stop { channel.finish(throwing: error) }
                } else {
                    channel.finish(throwing: error)
                }
            }
            acquiredMTU = nil
        case .emitDisconnected(let reason):
            onDisconnect(DisconnectEvent(peripheral: self, reason: reason))
        }
    }

    private func resolveTimerFired(attempt: UInt64, round: Int, after duration: Duration) {
        handle(.resolveTimerFired(attempt: attempt, round: round))
        guard lifecycle.state == .recoveringStalledResolve else { return }
        Self.logger.notice(
            "the link is up but bluetoothd did not resolve the cached services; reconnecting",
            [("device", identifier.description), ("after", "\(duration)")])
    }

    /// Whether bluetoothd exports GATT services for the device before it resolved them: its cached database.
    private var hasCachedServices: Bool {
        gatt.values.contains { $0[BlueZNames.gattService] != nil }
    }

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

    // MARK: Tree

    private func buildServices() -> [GATTService] {
        var characteristicsByService: [DBusObjectPath: [GATTCharacteristic]] = [:]
        for (path, interfaces) in gatt {
            if let properties = interfaces[BlueZNames.gattCharacteristic],
                let owner = properties["Service"]?.asObjectPath
            {
                characteristicsByService[owner, default: []].append(makeCharacteristic(path, properties))
            }
        }
        var services: [GATTService] = []
        for (path, interfaces) in gatt {
            guard let properties = interfaces[BlueZNames.gattService],
                let uuid = properties["UUID"]?.asString.flatMap(BluetoothUUID.init)
            else { continue }
            services.append(
                GATTService(
                    id: GATTAttributeID(path.rawValue), uuid: uuid, isPrimary: properties["Primary"]?.asBool ?? true,
                    characteristics: (characteristicsByService[path] ?? []).sorted { $0.id < $1.id },
                    includedServiceIDs: (properties["Includes"]?.asObjectPaths ?? []).map {
                        GATTAttributeID($0.rawValue)
                    }, handle: Self.handle(path)))
        }
        return services.sorted { $0.id < $1.id }
    }

    private func makeCharacteristic(_ path: DBusObjectPath, _ properties: [String: DBusValue]) -> GATTCharacteristic {
        var characteristic = GATTCharacteristic(
            id: GATTAttributeID(path.rawValue),
            uuid: properties["UUID"]?.asString.flatMap(BluetoothUUID.init) ?? BluetoothUUID(UInt16(0)),
            properties: CharacteristicProperties(bluezFlags: properties["Flags"]?.asStrings ?? []),
            serviceID: GATTAttributeID(properties["Service"]?.asObjectPath?.rawValue ?? ""), handle: Self.handle(path))
        characteristic.descriptors = gatt.compactMap { descriptorPath, interfaces in
            guard let descriptor = interfaces[BlueZNames.gattDescriptor],
                descriptor["Characteristic"]?.asObjectPath == path,
                let uuid = descriptor["UUID"]?.asString.flatMap(BluetoothUUID.init)
            else { return nil }
            return GATTDescriptor(
                id: GATTAttributeID(descriptorPath.rawValue), uuid: uuid, characteristicID: characteristic.id,
                handle: Self.handle(descriptorPath))
        }.sorted { $0.id < $1.id }
        return characteristic
    }

    /// BlueZ names GATT objects after their handle: `service000c`, `char000d`, `desc000f`.
    private static func handle(_ path: DBusObjectPath) -> UInt16? {
        guard let last = path.rawValue.split(separator: "/").last, last.count >= 4 else { return nil }
        return UInt16(last.suffix(4), radix: 16)
    }
}

extension DBusObjectPath {
    /// A path taken from BlueZ (an attribute id built from one), so already valid.
    init(trusted id: GATTAttributeID) {
        self = DBusObjectPath(validating: id.rawValue) ?? .root
    }
}
