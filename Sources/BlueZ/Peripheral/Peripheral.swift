import Bluetooth
import DBus
import Foundation
import Logging
import TaskScope
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
    /// The manager's copy of BlueZ's objects, which this peripheral reads its device and GATT objects from.
    nonisolated let tree: BlueZObjectTree
    /// The manager's ``TaskScope``: the peripheral's BlueZ calls await their replies, and its timers
    /// run, as children of it, so ``CentralManager/close()`` ends them.
    nonisolated let scope: TaskScope
    /// The thread that reads this peripheral's `AcquireNotify` sockets (the manager's option).
    nonisolated let notifyPoller: NotifySocketPoller
    /// The D-Bus connection's thread, shared with the ``CentralManager`` (see its comment).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { connection.serialExecutor }
    let onDisconnect: @Sendable (DisconnectEvent) -> Void
    let callTimeout: Duration
    /// The manager's injected clock: connect timeouts, retry delays, `waitForCharacteristic`'s timeout.
    let clock: any BridgeClock
    /// Pairs the peripheral when an operation needs it (`CentralManager.Options.pairOnInsufficientAuthentication`).
    let authenticationHandler: (@Sendable (Peripheral, BluetoothError) async throws -> Void)?

    /// What BlueZ last said of the device when it dropped the object: the peripheral is then
    /// detached from the manager's tree (nothing updates it, and it has no GATT objects).
    var detachedDevice: [String: DBusValue]?
    /// The last connection through `CentralManager.connect` resolved to exactly the GATT objects bluetoothd
    /// exported before it started: its cached copy of the peer's database stood ("DB Hash match: skipping
    /// discovery") and nothing was discovered, so a service missing now stays missing until the peer changes
    /// its database or BlueZ forgets the device (``GATTCacheRecovery``). False when the tree changed during
    /// the connection, when nothing was exported before it, or when `GetManagedObjects` failed.
    public internal(set) var gattCacheReused = false
    var lifecycle: ConnectionLifecycle
    var connectWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    var operations: [Int: @Sendable (BluetoothError) -> Void] = [:]
    var nextID = 0
    var timeoutTask: ScopedTask?
    var resolveTimerTask: ScopedTask?
    var subscriptions: [DBusObjectPath: Subscription] = [:]
    var busyAttributes: Set<DBusObjectPath> = []
    var attributeWaiters: [DBusObjectPath: [CheckedContinuation<Void, Never>]] = [:]
    var acquiredMTU: Int?
    /// `disconnect()` calls, woken once the link is down and no attempt is pending.
    var settledWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    /// `waitForCharacteristic` calls, woken when the GATT tree grows.
    var gattWaiters: [Int: GATTWaiter] = [:]

    /// How many `waitForCharacteristic` calls are waiting (tests wait for one to be in place).
    package var pendingCharacteristicWaits: Int { gattWaiters.count }

    struct GATTWaiter {
        let uuid: BluetoothUUID
        let service: BluetoothUUID?
        let once: ResumeOnce<Bool>
    }

    struct Subscription {
        let channel: NotificationChannel
        var reader: NotifySocketPoller.Registration?
        var enabling: Task<Void, any Error>?
        /// A BlueZ call of the enabling was sent and its answer has not been dispatched yet.
        var awaitingAnswer = false
        /// Listeners waiting for the enabling (``Peripheral/awaitEnabling(_:_:)``), by operation id: a link
        /// drop fails them at once while ``awaitingAnswer``; an answer that came first stands.
        var waiters: [Int: @Sendable (BluetoothError) -> Void] = [:]
    }

    init(
        identifier: BluetoothAddress, path: DBusObjectPath, connection: DBusConnection, tree: BlueZObjectTree,
        scope: TaskScope, notifyPoller: NotifySocketPoller = .shared,
        lifecycle: ConnectionLifecycle.Configuration, callTimeout: Duration, clock: any BridgeClock = SystemClock(),
        onDisconnect: @escaping @Sendable (DisconnectEvent) -> Void,
        authenticationHandler: (@Sendable (Peripheral, BluetoothError) async throws -> Void)? = nil
    ) {
        self.identifier = identifier
        self.path = path
        self.connection = connection
        self.tree = tree
        self.scope = scope
        self.notifyPoller = notifyPoller
        self.lifecycle = ConnectionLifecycle(configuration: lifecycle)
        self.callTimeout = callTimeout
        self.clock = clock
        self.onDisconnect = onDisconnect
        self.authenticationHandler = authenticationHandler
    }

    // MARK: BlueZ's objects

    /// The device's `Device1` properties as BlueZ reports them now.
    var device: [String: DBusValue] {
        if let detachedDevice { return detachedDevice }
        return tree.read { $0.properties(path, BlueZNames.device) } ?? [:]
    }

    /// The objects below the device (its GATT services, characteristics and descriptors).
    var gatt: [DBusObjectPath: [String: [String: DBusValue]]] {
        guard detachedDevice == nil else { return [:] }
        return tree.read { $0.descendants(of: path) }
    }

    /// One interface's properties of one object below the device.
    func gattObject(_ objectPath: DBusObjectPath, _ interface: String) -> [String: DBusValue]? {
        guard detachedDevice == nil, objectPath.isDescendant(of: path, orEqual: false) else { return nil }
        return tree.read { $0.properties(objectPath, interface) }
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
                // Not cancelled when the wait ends: ending an ended wait does nothing. Once the
                // manager is closed there is no timer: the wait ends at once.
                let timer = scope.spawnTimer(at: clock.now + timeout, clock: clock) {
                    await self.endGATTWait(id, .success(false))
                }
                if timer == nil { endGATTWait(id, .success(false)) }
            }
        } onCancel: {
            // A hop from the cancelling thread that only ends the wait (also after the manager closed).
            Task { await self.endGATTWait(id, .failure(BluetoothError(.operationCancelled))) }
        }
        return appeared ? try? characteristic(uuid, service: service) : nil
    }

    private func endGATTWait(_ id: Int, _ result: Result<Bool, any Error>) {
        operations[id] = nil
        gattWaiters.removeValue(forKey: id)?.once.resume(with: result)
    }

    /// Wakes the `waitForCharacteristic` calls whose characteristic the tree now has.
    func wakeGATTWaiters() {
        for (id, waiter) in gattWaiters where (try? characteristic(waiter.uuid, service: waiter.service)) != nil {
            endGATTWait(id, .success(true))
        }
    }

    // MARK: Tree

    private func buildServices() -> [GATTService] {
        let gatt = self.gatt
        var characteristicsByService: [DBusObjectPath: [GATTCharacteristic]] = [:]
        for (path, interfaces) in gatt {
            if let properties = interfaces[BlueZNames.gattCharacteristic],
                let owner = properties["Service"]?.asObjectPath
            {
                characteristicsByService[owner, default: []].append(makeCharacteristic(path, properties, in: gatt))
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

    /// The characteristic at `path`, with its descriptors from `gatt` (the objects below the device).
    func makeCharacteristic(
        _ path: DBusObjectPath, _ properties: [String: DBusValue],
        in gatt: [DBusObjectPath: [String: [String: DBusValue]]]
    ) -> GATTCharacteristic {
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
    static func handle(_ path: DBusObjectPath) -> UInt16? {
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
