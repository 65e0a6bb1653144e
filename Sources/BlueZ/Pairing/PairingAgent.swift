import Bluetooth
import DBus
import Logging
import TaskScope

/// The `org.bluez.Agent1` this process exports (BlueZ 5.66 `doc/agent-api.txt`): it answers bluetoothd's
/// pairing questions from a ``PairingPolicy`` and is registered through `org.bluez.AgentManager1`.
///
/// `CentralManager` owns one and registers it on the first `pair` (or `registerAgent()`); it unregisters on
/// `close()`. Questions about a device being paired by `CentralManager.pair` use that call's policy; others
/// (pairing the peer starts, or other processes' pairings while this is the default agent) use the default
/// policy. Answers use BlueZ's error names: `org.bluez.Error.Rejected` when the policy declines or cannot
/// answer, `org.bluez.Error.Canceled` when bluetoothd calls `Cancel` or the provider was cancelled.
public actor PairingAgent {
    public nonisolated let path: DBusObjectPath
    nonisolated let connection: DBusConnection
    /// The D-Bus connection's thread, shared with the ``CentralManager`` (see its comment).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { connection.serialExecutor }
    private let logger = Logger(label: "pairing")
    /// Where the pairing calls and the answers to bluetoothd's questions run: the central manager's
    /// scope (its `close()` cancels and awaits them), or the agent's own.
    private nonisolated let scope: TaskScope
    private var defaultPolicy: PairingPolicy
    private var sessions: [DBusObjectPath: Session] = [:]
    private var exported = false
    /// BlueZ holds this agent as its default agent (the one a security raise of bluetoothd's ATT layer asks).
    public private(set) var isDefault = false
    private var requests: [Int: PendingRequest] = [:]
    private var nextID = 0
    /// Registration changes run one at a time (concurrent `pair` calls would otherwise both `RegisterAgent`).
    private var registrationBusy = false
    private var registrationWaiters: [CheckedContinuation<Void, Never>] = []

    /// The capability BlueZ holds for the agent, nil while not registered.
    public private(set) var registeredCapability: AgentCapability?
    /// The registration last completed (kept across a bluetoothd restart, cleared by `unregister`), restored
    /// when `org.bluez.AgentManager1` comes back.
    private var wanted: (capability: AgentCapability, asDefault: Bool)?

    private struct Session {
        let id: Int
        let policy: PairingPolicy
        let call: ScopedValue<Result<Void, any Error>>
    }

    private struct PendingRequest {
        let reply: ResumeOnce<[DBusValue]>
        let task: ScopedTask
    }

    static let rejected = DBusErrorName("org.bluez.Error.Rejected")
    static let canceled = DBusErrorName("org.bluez.Error.Canceled")
    static let managerPath: DBusObjectPath = "/org/bluez"

    public init(connection: DBusConnection, path: DBusObjectPath = "/io/blebridge/agent", policy: PairingPolicy) {
        self.init(connection: connection, path: path, policy: policy, scope: TaskScope())
    }

    /// An agent whose tasks run in `scope` (a ``CentralManager``'s).
    init(connection: DBusConnection, path: DBusObjectPath, policy: PairingPolicy, scope: TaskScope) {
        self.connection = connection
        self.path = path
        self.defaultPolicy = policy
        self.scope = scope
    }

    // MARK: Registration

    /// Exports the agent (once) and registers it with `capability`; an agent registered with another capability
    /// is unregistered first (BlueZ keeps one agent per client). With `asDefault`, also `RequestDefaultAgent`, so
    /// pairings the peripheral starts reach it too.
    public func register(capability: AgentCapability, asDefault: Bool) async throws {
        try await exclusively { try await registerNow(capability: capability, asDefault: asDefault) }
    }

    private func registerNow(capability: AgentCapability, asDefault: Bool) async throws {
        if !exported {
            try await connection.export(path: path, interfaces: [interface()])
            exported = true
        }
        if registeredCapability != capability {
            if registeredCapability != nil { await callManager("UnregisterAgent", [.objectPath(path)]) }
            registeredCapability = nil
            isDefault = false
            do {
                _ = try await connection.call(
                    destination: BlueZNames.service, path: Self.managerPath, interface: BlueZNames.agentManager,
                    method: "RegisterAgent", arguments: [.objectPath(path), .string(capability.rawValue)])
            } catch {
                throw BluetoothError.from(error, during: .pair)
            }
            registeredCapability = capability
            logger.info("pairing agent registered", [("path", path.rawValue), ("capability", capability.rawValue)])
        }
        if asDefault, !isDefault {
            do {
                _ = try await connection.call(
                    destination: BlueZNames.service, path: Self.managerPath, interface: BlueZNames.agentManager,
                    method: "RequestDefaultAgent", arguments: [.objectPath(path)])
            } catch {
                throw BluetoothError.from(error, during: .pair)
            }
            isDefault = true
        }
        wanted = (capability, isDefault)
    }

    /// Unregisters the agent from BlueZ, cancels pending questions and removes the exported object.
    public func unregister() async {
        try? await exclusively { await unregisterNow() }
    }

    private func unregisterNow() async {
        wanted = nil
        if registeredCapability != nil { await callManager("UnregisterAgent", [.objectPath(path)]) }
        registeredCapability = nil
        isDefault = false
        cancelRequests()
        if exported {
            try? await connection.unexport(path: path)
            exported = false
        }
    }

    /// The policy for questions about devices no `pair` call is running for.
    public func setDefaultPolicy(_ policy: PairingPolicy) { defaultPolicy = policy }

    /// bluetoothd left the bus: its registrations are gone until ``agentManagerAppeared()`` restores them.
    func bluezVanished() {
        registeredCapability = nil
        isDefault = false
        cancelRequests()
    }

    /// `org.bluez.AgentManager1` is (again) on the bus, e.g. after a bluetoothd restart: registers the agent
    /// again as it was (capability, default agent), so pairings the peer starts keep reaching it. Nothing
    /// happens when it was never registered, was unregistered, or is still registered.
    func agentManagerAppeared() async {
        try? await exclusively {
            guard let wanted, registeredCapability == nil else { return }
            do {
                try await registerNow(capability: wanted.capability, asDefault: wanted.asDefault)
                logger.info("pairing agent registered again after bluetoothd came back", [("path", path.rawValue)])
            } catch {
                logger.warning(
                    "pairing agent could not be registered again; the next pair retries",
                    [("path", path.rawValue), ("error", "\(error)")])
            }
        }
    }

    private func exclusively(_ body: () async throws -> Void) async throws {
        if registrationBusy {
            await withCheckedContinuation { registrationWaiters.append($0) }  // handed over by the previous holder
        } else {
            registrationBusy = true
        }
        defer {
            if registrationWaiters.isEmpty {
                registrationBusy = false
            } else {
                registrationWaiters.removeFirst().resume()
            }
        }
        try await body()
    }

    private func callManager(_ method: String, _ arguments: [DBusValue]) async {
        _ = try? await connection.call(
            destination: BlueZNames.service, path: Self.managerPath, interface: BlueZNames.agentManager,
            method: method, arguments: arguments, timeout: .seconds(5))
    }

    // MARK: Pairing sessions

    /// Runs `body` (the `Device1.Pair` call) with `policy` answering questions about `device`. A second call for
    /// the same device while one runs joins it instead of starting another (BlueZ would answer `InProgress`).
    func session(
        for device: DBusObjectPath, policy: PairingPolicy, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        if let running = sessions[device] {
            // A joiner that is cancelled stops waiting; the call goes on for its owner.
            guard let result = await running.call.value else { throw BluetoothError(.operationCancelled) }
            try result.get()
            return
        }
        nextID += 1
        let id = nextID
        let started = scope.spawnValue { () -> Result<Void, any Error> in
            do {
                try await body()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        guard let call = started else { throw BluetoothError(.operationCancelled, "the central manager is closed") }
        sessions[device] = Session(id: id, policy: policy, call: call)
        defer { if sessions[device]?.id == id { sessions[device] = nil } }
        // The owner waits for the call's end even when cancelled (it cancels the call), so the
        // session stays until then and a new `pair` cannot send a second `Pair` beside it.
        let result = await withTaskCancellationHandler {
            await call.outcome
        } onCancel: {
            call.cancel()
        }
        guard let result else { throw BluetoothError(.operationCancelled) }
        try result.get()
    }

    private func policy(for device: DBusObjectPath) -> PairingPolicy {
        sessions[device]?.policy ?? defaultPolicy
    }

    // MARK: org.bluez.Agent1

    private nonisolated func interface() -> DBusInterface {
        func method(
            _ name: String, _ inSignature: DBusSignature, _ outSignature: DBusSignature = .empty,
            _ handler: @escaping @Sendable (PairingAgent, DBusMethodCall) async throws -> [DBusValue]
        ) -> DBusMethod {
            DBusMethod(name: name, inSignature: inSignature, outSignature: outSignature) { [weak self] call in
                guard let self else { throw DBusError(name: Self.rejected, message: "Agent closed") }
                return try await handler(self, call)
            }
        }
        return DBusInterface(
            name: BlueZNames.agent,
            methods: [
                method("Release", .empty) { agent, _ in
                    await agent.released()
                    return []
                },
                method("RequestPinCode", "o", "s") { agent, call in try await agent.requestPinCode(call) },
                method("DisplayPinCode", "os") { agent, call in try await agent.displayPinCode(call) },
                method("RequestPasskey", "o", "u") { agent, call in try await agent.requestPasskey(call) },
                method("DisplayPasskey", "ouq") { agent, call in await agent.displayPasskey(call) },
                method("RequestConfirmation", "ou") { agent, call in try await agent.requestConfirmation(call) },
                method("RequestAuthorization", "o") { agent, call in try await agent.requestAuthorization(call) },
                method("AuthorizeService", "os") { agent, call in try await agent.authorizeService(call) },
                method("Cancel", .empty) { agent, _ in
                    await agent.cancelRequests()
                    return []
                },
            ], properties: [])
    }

    /// bluetoothd unregistered the agent (it is no longer registered; no need to call UnregisterAgent).
    private func released() {
        registeredCapability = nil
        isDefault = false
        cancelRequests()
    }

    /// The device a question is about, and the policy that answers it.
    private func subject(_ call: DBusMethodCall) throws -> (BluetoothAddress, DBusObjectPath, PairingPolicy) {
        guard let device = call.arguments.first?.asObjectPath,
            let address = BlueZPaths.address(fromDevicePath: device.rawValue)
        else {
            throw DBusError(name: Self.rejected, message: "Not a device")
        }
        return (address, device, policy(for: device))
    }

    private func requestPinCode(_ call: DBusMethodCall) throws -> [DBusValue] {
        // LE pairing never uses legacy PIN codes; BR/EDR devices that need one are not supported.
        let (address, _, _) = try subject(call)
        logger.notice("PIN code requested; rejected (LE only)", [("device", address.description)])
        throw DBusError(name: Self.rejected, message: "PIN codes are not supported")
    }

    private func displayPinCode(_ call: DBusMethodCall) throws -> [DBusValue] {
        let (address, _, policy) = try subject(call)
        guard let display = policy.display, let pin = call.arguments.last?.asString else {
            throw DBusError(name: Self.rejected, message: "Cannot display a PIN code")
        }
        display(address, .pinCode(pin))
        return []
    }

    private func requestPasskey(_ call: DBusMethodCall) async throws -> [DBusValue] {
        let (address, _, policy) = try subject(call)
        guard let provider = policy.passkeyProvider else {
            throw DBusError(name: Self.rejected, message: "No passkey provider")
        }
        return try await answer {
            guard let passkey = try await provider(address) else {
                throw DBusError(name: Self.rejected, message: "Passkey declined")
            }
            guard passkey <= 999_999 else { throw DBusError(name: Self.rejected, message: "Passkey out of range") }
            return [.uint32(passkey)]
        }
    }

    private func displayPasskey(_ call: DBusMethodCall) -> [DBusValue] {
        // No errors are defined for DisplayPasskey: show it if we can, reply empty either way.
        guard let (address, _, policy) = try? subject(call), call.arguments.count == 3,
            let passkey = call.arguments[1].asUInt32, let entered = call.arguments[2].asUInt16
        else { return [] }
        policy.display?(address, .passkey(passkey, entered: entered))
        return []
    }

    private func requestConfirmation(_ call: DBusMethodCall) async throws -> [DBusValue] {
        let (address, _, policy) = try subject(call)
        let passkey = call.arguments.last?.asUInt32
        return try await confirm(address, passkey, policy)
    }

    private func requestAuthorization(_ call: DBusMethodCall) async throws -> [DBusValue] {
        let (address, _, policy) = try subject(call)
        return try await confirm(address, nil, policy)
    }

    private func confirm(_ address: BluetoothAddress, _ passkey: UInt32?, _ policy: PairingPolicy) async throws
        -> [DBusValue]
    {
        let confirmation = policy.confirmation
        return try await answer {
            guard await confirmation(address, passkey) else {
                throw DBusError(name: Self.rejected, message: "Pairing not confirmed")
            }
            return []
        }
    }

    private func authorizeService(_ call: DBusMethodCall) throws -> [DBusValue] {
        let (address, _, policy) = try subject(call)
        guard policy.authorizesServices else {
            logger.notice(
                "service authorisation rejected",
                [("device", address.description), ("uuid", call.arguments.last?.asString ?? "")])
            throw DBusError(name: Self.rejected, message: "Service not authorized")
        }
        return []
    }

    /// Runs a question's answer so that `Cancel` can end it at once with `org.bluez.Error.Canceled`, even when
    /// the caller's provider ignores cancellation.
    private func answer(_ work: @escaping @Sendable () async throws -> [DBusValue]) async throws -> [DBusValue] {
        nextID += 1
        let id = nextID
        return try await withCheckedThrowingContinuation { continuation in
            let reply = ResumeOnce(continuation)
            let started = scope.spawnCancellable { [weak self] in
                do {
                    reply.resume(with: .success(try await work()))
                } catch let error as DBusError {
                    reply.resume(with: .failure(error))
                } catch is CancellationError {
                    reply.resume(with: .failure(DBusError(name: Self.canceled, message: "Canceled")))
                } catch {
                    reply.resume(with: .failure(DBusError(name: Self.rejected, message: "\(error)")))
                }
                await self?.requestFinished(id)
            }
            guard let task = started else {
                // The central manager is closed: nothing runs any more.
                reply.resume(with: .failure(DBusError(name: Self.canceled, message: "Canceled")))
                return
            }
            requests[id] = PendingRequest(reply: reply, task: task)
        }
    }

    private func requestFinished(_ id: Int) { requests[id] = nil }

    /// `Cancel`: bluetoothd gave up on the pending question(s) (timeout, pairing cancelled).
    private func cancelRequests() {
        let pending = requests
        requests.removeAll()
        for request in pending.values {
            request.task.cancel()
            request.reply.resume(with: .failure(DBusError(name: Self.canceled, message: "Canceled")))
        }
    }
}
