internal import CDBus
import EventLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Everything the connection thread owns: the libdbus connection, its watches and timeouts,
/// pending calls, signal subscriptions and exported objects.
///
/// Confined to the connection thread: only `ConnectionLoop`'s event loop creates it and calls it
/// (from commands, watch handlers and timers, and from the libdbus callbacks those run).
final class LoopState {
    let loop: ConnectionLoop
    var connection: OpaquePointer?
    var uniqueName = ""
    private(set) var finished = false

    /// libdbus's watches by descriptor, and each watch's descriptor.
    var watches: [Int32: DescriptorWatches] = [:]
    var watchDescriptors: [OpaquePointer: Int32] = [:]
    /// libdbus's timeouts, and the loop's timer of each enabled one.
    var knownTimeouts: Set<OpaquePointer> = []
    var timers: [OpaquePointer: EventLoopTimer] = [:]
    var pendingCalls: [ObjectIdentifier: PendingCall] = [:]
    var subscriptions: [Subscription] = []
    var nextSubscriptionID: UInt64 = 1
    var trackedNames: [String: OwnerCell] = [:]
    var objects: [DBusObjectPath: [DBusInterface]] = [:]
    var objectManagers: Set<DBusObjectPath> = []
    /// Run before each `GetManagedObjects` reply of the object manager at the path (a test's fault).
    var objectManagerGates: [DBusObjectPath: @Sendable () async throws -> Void] = [:]
    /// How each exported path (object or object manager) answers a wrong argument signature.
    var signatureMismatch: [DBusObjectPath: DBusSignatureMismatch] = [:]
    let recentStrings = RecentStrings()
    var roundSubscriptions: [Subscription] = []
    var signalOrder = SignalOrder()

    init(loop: ConnectionLoop) {
        self.loop = loop
    }

    /// Opens a private connection to `address` and says Hello.
    func connect(address: String) throws(DBusError) -> String {
        _ = dbus_threads_init_default()
        let connection = try LibDBusError.check("connecting to \(address)") { error in
            dbus_connection_open_private(address, error)
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        dbus_connection_set_max_message_size(connection, 128 * 1024 * 1024)
        dbus_connection_set_max_received_size(connection, 256 * 1024 * 1024)
        do throws(DBusError) {
            _ = try LibDBusError.check("registering with the bus at \(address)") { error in
                dbus_bus_register(connection, error) != 0 ? true : nil
            }
        } catch {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw error
        }
        self.connection = connection
        uniqueName = dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? ""
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            connection, addWatchCallback, removeWatchCallback, toggleWatchCallback, me, nil)
        dbus_connection_set_timeout_functions(
            connection, addTimeoutCallback, removeTimeoutCallback, toggleTimeoutCallback, me, nil)
        // No wake-up function: libdbus calls it for every received message, but only this
        // thread calls libdbus, and the loop dispatches after every command batch, watch and
        // timeout it handles, so there is nothing to wake.
        dbus_connection_add_filter(connection, filterMessage, me, nil)
        return uniqueName
    }

    /// Dispatches what libdbus has read (after every command batch, watch and timeout).
    func dispatchAll() {
        guard let connection else { return }
        while !finished, dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
            _ = dbus_connection_dispatch(connection)
        }
        flushDeliveries()
    }

    // MARK: Watches

    /// libdbus's watches on one descriptor, served by one watch of the loop (epoll takes a
    /// descriptor once; libdbus keeps a reading and a writing watch on its socket).
    struct DescriptorWatches {
        var watches: [OpaquePointer] = []
        var loopWatch: FDWatch?
        var interest: Readiness = []
    }

    func addWatch(_ watch: OpaquePointer) {
        let fd = dbus_watch_get_unix_fd(watch)
        watchDescriptors[watch] = fd
        watches[fd, default: DescriptorWatches()].watches.append(watch)
        refreshWatches(on: fd)
    }

    func removeWatch(_ watch: OpaquePointer) {
        guard let fd = watchDescriptors.removeValue(forKey: watch) else { return }
        watches[fd]?.watches.removeAll { $0 == watch }
        refreshWatches(on: fd)
    }

    func toggleWatch(_ watch: OpaquePointer) {
        guard let fd = watchDescriptors[watch] else { return }
        refreshWatches(on: fd)
    }

    /// Makes the loop's watch of `fd` ask for what the enabled libdbus watches on it want.
    private func refreshWatches(on fd: Int32) {
        guard var entry = watches[fd] else { return }
        var interest: Readiness = []
        for watch in entry.watches where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { interest.insert(.readable) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { interest.insert(.writable) }
        }
        if interest.isEmpty {
            entry.loopWatch?.cancel()
            entry.loopWatch = nil
        } else if let loopWatch = entry.loopWatch {
            if interest != entry.interest { loopWatch.setInterest(interest) }
        } else {
            entry.loopWatch = loop.eventLoop.watch(fd: fd, interest: interest) { [weak loop] readiness in
                loop?.handleWatch(fd: fd, readiness)
            }
        }
        entry.interest = interest
        watches[fd] = entry.watches.isEmpty ? nil : entry
    }

    /// The descriptor is ready: each enabled libdbus watch on it handles what it asked for (and
    /// a hang-up or an error).
    func handleWatch(fd: Int32, _ readiness: Readiness) {
        guard let entry = watches[fd] else { return }
        var ready: UInt32 = 0
        if readiness.contains(.readable) { ready |= DBUS_WATCH_READABLE.rawValue }
        if readiness.contains(.writable) { ready |= DBUS_WATCH_WRITABLE.rawValue }
        if readiness.contains(.hangUp) { ready |= DBUS_WATCH_HANGUP.rawValue }
        if readiness.contains(.error) { ready |= DBUS_WATCH_ERROR.rawValue }
        for watch in entry.watches {
            // A watch handled before this one may have removed or disabled it.
            guard watchDescriptors[watch] != nil, dbus_watch_get_enabled(watch) != 0 else { continue }
            let wanted = dbus_watch_get_flags(watch) | DBUS_WATCH_HANGUP.rawValue | DBUS_WATCH_ERROR.rawValue
            if ready & wanted != 0 { _ = dbus_watch_handle(watch, ready & wanted) }
        }
    }

    // MARK: Timeouts

    func addTimeout(_ timeout: OpaquePointer) {
        knownTimeouts.insert(timeout)
        arm(timeout)
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        knownTimeouts.remove(timeout)
        timers.removeValue(forKey: timeout)?.cancel()
    }

    /// (Re)starts the timeout's timer from now when it is enabled (libdbus's timeouts repeat).
    func arm(_ timeout: OpaquePointer) {
        timers.removeValue(forKey: timeout)?.cancel()
        guard knownTimeouts.contains(timeout), dbus_timeout_get_enabled(timeout) != 0 else { return }
        let key = Int(bitPattern: timeout)
        timers[timeout] = loop.eventLoop.schedule(after: .milliseconds(Int(dbus_timeout_get_interval(timeout)))) {
            [weak loop] in loop?.fireTimeout(key)
        }
    }

    func fireTimeout(_ timeout: OpaquePointer) {
        guard knownTimeouts.contains(timeout) else { return }
        arm(timeout)
        _ = dbus_timeout_handle(timeout)
    }

    // MARK: Sending

    /// Sends without waiting for a reply.
    func send(_ message: Message) {
        guard let connection else { return }
        _ = dbus_connection_send(connection, message.raw, nil)
    }

    func requireConnection() throws(DBusError) -> OpaquePointer {
        guard let connection, !finished else { throw DBusError.connectionClosed }
        return connection
    }

    // MARK: Shutdown

    /// Closes the connection: pending calls fail with `reason`, signal streams finish.
    func shutDown(reason: DBusError) {
        guard !finished else { return }
        flushDeliveries()
        finished = true
        let calls = pendingCalls.values
        pendingCalls.removeAll()
        for call in calls { call.fail(reason) }
        let ended = subscriptions
        subscriptions.removeAll()
        for subscription in ended { subscription.finish() }
        for cell in trackedNames.values { cell.markReady() }
        trackedNames.removeAll()
        objects.removeAll()
        objectManagers.removeAll()
        objectManagerGates.removeAll()
        // The loop's watches go before libdbus closes the socket (a watch is cancelled before
        // its descriptor is closed); libdbus's own remove callbacks then find nothing.
        for entry in watches.values { entry.loopWatch?.cancel() }
        for timer in timers.values { timer.cancel() }
        watches.removeAll()
        watchDescriptors.removeAll()
        knownTimeouts.removeAll()
        timers.removeAll()
        if let connection {
            dbus_connection_remove_filter(connection, filterMessage, Unmanaged.passUnretained(self).toOpaque())
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
        }
        connection = nil
    }
}

// MARK: - libdbus callbacks (all run on the connection thread)

private func state(_ data: UnsafeMutableRawPointer?) -> LoopState {
    Unmanaged<LoopState>.fromOpaque(data!).takeUnretainedValue()
}

private let addWatchCallback: DBusAddWatchFunction = { watch, data in
    state(data).addWatch(watch!)
    return 1
}

private let removeWatchCallback: DBusRemoveWatchFunction = { watch, data in
    state(data).removeWatch(watch!)
}

private let toggleWatchCallback: DBusWatchToggledFunction = { watch, data in
    state(data).toggleWatch(watch!)
}

private let addTimeoutCallback: DBusAddTimeoutFunction = { timeout, data in
    state(data).addTimeout(timeout!)
    return 1
}

private let removeTimeoutCallback: DBusRemoveTimeoutFunction = { timeout, data in
    state(data).removeTimeout(timeout!)
}

private let toggleTimeoutCallback: DBusTimeoutToggledFunction = { timeout, data in
    state(data).arm(timeout!)
}

private let filterMessage: DBusHandleMessageFunction = { _, message, data in
    state(data).handle(message!)
}
