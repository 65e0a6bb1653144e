import EventLoop
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to a D-Bus message bus: the system bus, the session bus or any bus address.
///
/// A thread (an ``EventLoop``) owns the underlying libdbus connection and runs its dispatch loop;
/// no call here blocks Swift's cooperative pool. The thread is the connection's own, or one its
/// owner keeps for several connections (``init(address:on:)``). Methods may be used from any
/// number of tasks at once. The connection closes when `close()` is called or the last reference
/// goes away; pending calls then fail with `org.freedesktop.DBus.Error.Disconnected` and signal
/// streams finish.
public final class DBusConnection: Sendable {
    let loop: ConnectionLoop

    /// The unique name the bus assigned (`:1.42`).
    package let uniqueName: String

    /// Connects to `address` (`unix:path=/run/dbus/system_bus_socket`, `unix:abstract=…`, …) and
    /// registers with the bus (`Hello`), on a thread of its own.
    public convenience init(address: String) async throws {
        try await self.init(address: address, on: nil)
    }

    /// Connects to `address` on `thread` (from ``makeThread()``; a thread of its own when nil).
    /// A client that opens a new connection after each loss keeps one thread for all of them, so
    /// an actor pinned to it (``serialExecutor``) stays pinned across the reconnects. The
    /// connection's watches and timers leave the thread when it closes.
    package init(address: String, on thread: EventLoop?) async throws {
        let loop = try ConnectionLoop(on: thread)
        self.uniqueName = try await loop.start(address: address)
        self.loop = loop
    }

    deinit { loop.submit { $0.shutDown(reason: DBusError.connectionClosed) } }

    /// A thread for connections (`blebridge.dbus`, with the stack decoding nested values needs),
    /// to pass to ``init(address:on:)``. It runs until released.
    package static func makeThread() throws(DBusError) -> EventLoop {
        try ConnectionLoop.makeThread()
    }

    /// The system bus; honours `DBUS_SYSTEM_BUS_ADDRESS`.
    public static func system() async throws -> DBusConnection {
        try await system(on: nil)
    }

    /// The system bus, on `thread` (``init(address:on:)``).
    package static func system(on thread: EventLoop?) async throws -> DBusConnection {
        let address =
            environment("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/var/run/dbus/system_bus_socket"
        return try await DBusConnection(address: address, on: thread)
    }

    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
    public static func session() async throws -> DBusConnection {
        try await session(on: nil)
    }

    /// The session bus, on `thread` (``init(address:on:)``).
    package static func session(on thread: EventLoop?) async throws -> DBusConnection {
        guard let address = environment("DBUS_SESSION_BUS_ADDRESS") else {
            throw DBusError(.badAddress, "DBUS_SESSION_BUS_ADDRESS is not set")
        }
        return try await DBusConnection(address: address, on: thread)
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let string = String(cString: value)
        return string.isEmpty ? nil : string
    }

    /// Closes the connection. Safe to call more than once.
    package func close() {
        loop.submit { $0.shutDown(reason: DBusError.connectionClosed) }
    }

    /// False once the connection was closed or lost.
    package var isConnected: Bool { !loop.isClosed }

    // MARK: Calls

    /// Calls a method and returns the reply's arguments.
    ///
    /// Throws the peer's `DBusError` (`org.bluez.Error.InProgress`, …),
    /// `org.freedesktop.DBus.Error.NoReply` after `timeout`, `ServiceUnknown` when nobody owns
    /// `destination`, `Disconnected` when the connection closes, and `CancellationError` when the
    /// calling task is cancelled.
    ///
    /// `whenAnswered` runs on the connection's thread as the call's outcome is dispatched (the
    /// reply, an error, the time-out), in bus order with the signals: before any signal that
    /// arrived after the reply, and before the caller resumes. It is given the error's name (nil for
    /// a reply). A caller that also fails its call on a signal (a `Peripheral` on a link drop)
    /// learns there that the answer came first, and which answer it was.
    package func call(
        destination: String, path: DBusObjectPath, interface: String, method: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25),
        whenAnswered: (@Sendable (_ error: DBusErrorName?) -> Void)? = nil
    ) async throws -> [DBusValue] {
        try Task.checkCancellation()  // a cancelled task's call is not sent
        return try await startCall(
            destination: destination, path: path, interface: interface, method: method, arguments: arguments,
            timeout: timeout, whenAnswered: whenAnswered
        ).reply()
    }

    /// Calls a method without waiting for (or asking for) a reply.
    package func callWithoutReply(
        destination: String, path: DBusObjectPath, interface: String, method: String, arguments: [DBusValue] = []
    ) throws {
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, method: method)
        try message.append(arguments)
        message.setNoReply()
        guard loop.submit({ $0.send(message) }) else { throw DBusError.connectionClosed }
    }

    /// Sends `message` and waits for its reply (a method return or an error message).
    func send(
        _ message: Message, timeout: Duration, whenAnswered: (@Sendable (_ error: DBusErrorName?) -> Void)? = nil
    ) async throws -> Message {
        try Task.checkCancellation()  // a cancelled task's call is not sent
        return try await DBusSentCall(message, timeout: timeout, loop: loop, whenAnswered: whenAnswered).replyMessage()
    }

    /// Sends a method call now, in the order of the caller's calls, and returns it; its reply is
    /// awaited with ``DBusSentCall/reply()``, possibly by another task. What ``call(destination:path:interface:method:arguments:timeout:whenAnswered:)``
    /// does in two steps.
    package func startCall(
        destination: String, path: DBusObjectPath, interface: String, method: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25),
        whenAnswered: (@Sendable (_ error: DBusErrorName?) -> Void)? = nil
    ) throws -> DBusSentCall {
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, method: method)
        try message.append(arguments)
        return DBusSentCall(message, timeout: timeout, loop: loop, whenAnswered: whenAnswered)
    }

    // MARK: Signals

    /// Emits a signal (to everyone listening, or only to `destination`).
    package func emitSignal(
        path: DBusObjectPath, interface: String, name: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws {
        let message = try Message.signal(path: path, interface: interface, name: name)
        if let destination { try message.setDestination(destination) }
        try message.append(arguments)
        guard loop.submit({ $0.send(message) }) else { throw DBusError.connectionClosed }
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` (`sa{sv}as`).
    package func emitPropertiesChanged(
        path: DBusObjectPath, interface: String, changed: KeyValuePairs<String, DBusValue>,
        invalidated: [String] = []
    ) throws {
        try emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged",
            arguments: [.string(interface), .properties(changed), .strings(invalidated)])
    }

    /// Emits `PropertiesChanged` with the changed properties sorted by name.
    package func emitPropertiesChanged(
        path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String] = []
    ) throws {
        try emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged",
            arguments: [.string(interface), .properties(changed), .strings(invalidated)])
    }

    /// Signals matching `rule`, as a stream. The match rule is active on the bus when this
    /// returns, and is removed when the stream ends (the consumer stops iterating or the task is
    /// cancelled). Signals are decoded once on the connection thread and yielded directly.
    package func signals(
        matching rule: DBusMatchRule,
        bufferingPolicy: AsyncStream<DBusSignal>.Continuation.BufferingPolicy = .unbounded
    ) async throws -> AsyncStream<DBusSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: bufferingPolicy)
        let id = try await subscribe(
            rule,
            deliver: { signals in
                for signal in signals { continuation.yield(signal) }
            }, finish: { continuation.finish() })
        let loop = self.loop
        continuation.onTermination = { _ in loop.submit { $0.removeSubscription(id, finishStream: false) } }
        return stream
    }

    /// Like `signals(matching:)`, but yields the matching signals in batches: all those that
    /// arrived together (one read from the bus), in order. For high-rate consumers (GATT
    /// notifications): one wake-up and one stream operation per batch instead of per signal.
    package func signalBatches(
        matching rule: DBusMatchRule,
        bufferingPolicy: AsyncStream<[DBusSignal]>.Continuation.BufferingPolicy = .unbounded
    ) async throws -> AsyncStream<[DBusSignal]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [DBusSignal].self, bufferingPolicy: bufferingPolicy)
        let id = try await subscribe(rule, deliver: { continuation.yield($0) }, finish: { continuation.finish() })
        let loop = self.loop
        continuation.onTermination = { _ in loop.submit { $0.removeSubscription(id, finishStream: false) } }
        return stream
    }

    /// Owner changes of `name` (all names when nil): e.g. `org.bluez` vanishing when bluetoothd
    /// restarts and coming back.
    package func nameOwnerChanges(
        _ name: String? = nil,
        bufferingPolicy: AsyncStream<DBusNameOwnerChange>.Continuation.BufferingPolicy = .unbounded
    ) async throws -> AsyncStream<DBusNameOwnerChange> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: DBusNameOwnerChange.self, bufferingPolicy: bufferingPolicy)
        let id = try await subscribe(
            Self.nameOwnerRule(name),
            deliver: { signals in
                for change in signals.compactMap(DBusNameOwnerChange.init(signal:)) { continuation.yield(change) }
            }, finish: { continuation.finish() })
        let loop = self.loop
        continuation.onTermination = { _ in loop.submit { $0.removeSubscription(id, finishStream: false) } }
        return stream
    }

    private static func nameOwnerRule(_ name: String?) -> DBusMatchRule {
        DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            path: "/org/freedesktop/DBus", arg0: name)
    }

    // MARK: On the connection's thread

    /// The executor of the connection's thread, for an actor that pins itself to it
    /// (`nonisolated var unownedExecutor: UnownedSerialExecutor { connection.serialExecutor }`): its
    /// code then runs on this thread, between the thread's own work, and the closures of
    /// ``signalHandler(matching:_:)`` may enter it with `assumeIsolated`, with no hop. Such an
    /// actor must keep the connection (which keeps the thread), or the thread it was opened on, and
    /// must never block: everything on the connection waits while it runs, replies to its own
    /// calls included. The thread outlives the connection's closing, until the connection (and
    /// whoever else holds the thread) releases it.
    package var serialExecutor: UnownedSerialExecutor { loop.eventLoop.asUnownedSerialExecutor() }

    /// Calls `handler` on the connection's thread with the signals matching `rule` that arrived
    /// together (one read from the bus), in order, as soon as they are dispatched: no task, stream
    /// or hop. The match rule is active on the bus when this returns. `handler` holds up every
    /// other message of the connection: keep it short, never block in it.
    package func signalHandler(matching rule: DBusMatchRule, _ handler: @escaping @Sendable ([DBusSignal]) -> Void)
        async throws -> DBusSignalHandler
    {
        let id = try await subscribe(rule, deliver: handler, finish: {})
        return DBusSignalHandler(loop: loop, id: id)
    }

    /// ``nameOwnerChanges(_:bufferingPolicy:)`` as a handler on the connection's thread
    /// (``signalHandler(matching:_:)``).
    package func nameOwnerChangeHandler(
        _ name: String? = nil, _ handler: @escaping @Sendable (DBusNameOwnerChange) -> Void
    ) async throws -> DBusSignalHandler {
        try await signalHandler(matching: Self.nameOwnerRule(name)) { signals in
            for change in signals.compactMap(DBusNameOwnerChange.init(signal:)) { handler(change) }
        }
    }

    /// Registers a subscription and installs its rule on the bus; the caller removes it by id.
    private func subscribe(
        _ rule: DBusMatchRule, deliver: @escaping @Sendable ([DBusSignal]) -> Void,
        finish: @escaping @Sendable () -> Void
    ) async throws -> UInt64 {
        let loop = self.loop
        let id = try await loop.perform { state throws(DBusError) in
            try state.addSubscription(rule: rule, deliver: deliver, finish: finish).0.id
        }
        // Wait until the owner of a well-known sender is known, so no signal is filtered wrongly.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let accepted = loop.submit { state in
                guard let subscription = state.subscriptions.first(where: { $0.id == id }) else {
                    continuation.resume(throwing: DBusError.connectionClosed)
                    return
                }
                if let cell = subscription.ownerCell {
                    cell.whenReady { continuation.resume() }
                } else {
                    continuation.resume()
                }
            }
            if !accepted { continuation.resume(throwing: DBusError.connectionClosed) }
        }
        do {
            _ = try await callBus("AddMatch", [.string(rule.string)])
        } catch {
            loop.submit { $0.removeSubscription(id, finishStream: true) }
            throw error
        }
        return id
    }

    // MARK: Names

    func callBus(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: method, arguments: arguments)
    }

    /// Asks the bus for a well-known name.
    @discardableResult
    package func requestName(_ name: String, flags: DBusRequestNameFlags = [.doNotQueue]) async throws
        -> DBusRequestNameReply
    {
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags.rawValue)])
        guard let code = reply.first?.asUInt32, let result = DBusRequestNameReply(rawValue: code) else {
            throw DBusError(.inconsistentMessage, "unexpected RequestName reply \(reply)")
        }
        return result
    }

    /// Gives a well-known name back.
    @discardableResult
    package func releaseName(_ name: String) async throws -> DBusReleaseNameReply {
        let reply = try await callBus("ReleaseName", [.string(name)])
        guard let code = reply.first?.asUInt32, let result = DBusReleaseNameReply(rawValue: code) else {
            throw DBusError(.inconsistentMessage, "unexpected ReleaseName reply \(reply)")
        }
        return result
    }

    /// The unique name owning `name`, or nil when nobody owns it.
    package func nameOwner(_ name: String) async throws -> String? {
        do {
            return try await callBus("GetNameOwner", [.string(name)]).first?.asString
        } catch let error as DBusError where error.name == .nameHasNoOwner {
            return nil
        }
    }

    /// The process id of the connection owning `name` (`GetConnectionUnixProcessID`), as the bus
    /// daemon sees it (its PID namespace, which may not be the caller's). Throws when nobody owns
    /// the name or the bus cannot tell.
    package func connectionUnixProcessID(_ name: String) async throws -> UInt32 {
        let reply = try await callBus("GetConnectionUnixProcessID", [.string(name)])
        guard let pid = reply.first?.asUInt32 else {
            throw DBusError(.inconsistentMessage, "unexpected GetConnectionUnixProcessID reply \(reply)")
        }
        return pid
    }

    // MARK: Server side

    /// Exports `interfaces` at `path` (adding to interfaces already there). Object managers above
    /// the path emit `InterfacesAdded` with the current property values. Calls are served as
    /// soon as this returns. `signatureMismatch` says how calls on this object with a wrong
    /// argument signature are answered (one way per path; BlueZ's is `.unknownMethod`).
    package func export(
        path: DBusObjectPath, interfaces: [DBusInterface], signatureMismatch: DBusSignatureMismatch = .invalidArgs
    ) async throws {
        var properties: [DBusValue] = []
        for interface in interfaces {
            properties.append(
                (try? await ServerReplies.propertyDictionary(interface, skippingFailures: true))
                    ?? .dictionary(keySignature: "s", valueSignature: "v", []))
        }
        let values = properties
        try await loop.perform { state throws(DBusError) in
            try state.export(
                path: path, interfaces: interfaces, properties: values, signatureMismatch: signatureMismatch)
        }
    }

    package func export(_ object: DBusExportedObject) async throws {
        try await export(path: object.path, interfaces: object.interfaces, signatureMismatch: object.signatureMismatch)
    }

    /// Removes the named interfaces (all when nil) from `path`; object managers above it emit
    /// `InterfacesRemoved`.
    package func unexport(path: DBusObjectPath, interfaces: [String]? = nil) async throws {
        try await loop.perform { state throws(DBusError) in
            try state.unexport(path: path, names: interfaces)
        }
    }

    /// Serves `org.freedesktop.DBus.ObjectManager` at `path` for every object below it
    /// (BlueZ has one at `/`). `signatureMismatch` as for `export(path:interfaces:signatureMismatch:)`.
    /// `beforeReply`, when given, runs before each `GetManagedObjects` is answered, off the
    /// connection's thread; an error it throws is sent instead of the objects (a simulated daemon's faults).
    package func addObjectManager(
        at path: DBusObjectPath = .root, signatureMismatch: DBusSignatureMismatch = .invalidArgs,
        beforeReply: (@Sendable () async throws -> Void)? = nil
    ) async throws {
        try await loop.perform { state throws(DBusError) in
            _ = try state.requireConnection()
            try state.setSignatureMismatch(signatureMismatch, at: path)
            state.objectManagers.insert(path)
            state.objectManagerGates[path] = beforeReply
        }
    }
}
