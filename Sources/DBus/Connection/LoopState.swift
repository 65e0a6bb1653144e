internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// Everything the connection thread owns: the libdbus connection, its watches and timeouts,
/// pending calls, signal subscriptions and exported objects.
///
/// Confined to the connection thread: only `ConnectionLoop`'s thread creates it and calls it
/// (directly, from libdbus callbacks, or through submitted commands).
final class LoopState {
    let loop: ConnectionLoop
    var connection: OpaquePointer?
    var uniqueName = ""
    private(set) var finished = false

    var watches: [OpaquePointer] = []
    var timeouts: [TimeoutEntry] = []
    var pendingCalls: [ObjectIdentifier: PendingCall] = [:]
    var subscriptions: [Subscription] = []
    var nextSubscriptionID: UInt64 = 1
    var trackedNames: [String: OwnerCell] = [:]
    var objects: [DBusObjectPath: [DBusInterface]] = [:]
    var objectManagers: Set<DBusObjectPath> = []
    /// How each exported path (object or object manager) answers a wrong argument signature.
    var signatureMismatch: [DBusObjectPath: DBusSignatureMismatch] = [:]
    let recentStrings = RecentStrings()
    var roundSubscriptions: [Subscription] = []
    var signalOrder = SignalOrder()

    struct TimeoutEntry {
        let timeout: OpaquePointer
        var deadline: Int64?  // monotonic milliseconds
    }

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
        dbus_connection_set_watch_functions(connection, addWatch, removeWatch, toggleWatch, me, nil)
        dbus_connection_set_timeout_functions(connection, addTimeout, removeTimeout, toggleTimeout, me, nil)
        // No wake-up function: libdbus calls it for every received message, but only this
        // thread calls libdbus, and the loop dispatches and rebuilds its poll set after every
        // command and every watch it handles, so there is nothing to wake.
        dbus_connection_add_filter(connection, filterMessage, me, nil)
        return uniqueName
    }

    /// The poll loop; returns after `shutDown`.
    func run() {
        var descriptors: [pollfd] = []
        var polledWatches: [OpaquePointer] = []
        while !finished {
            runCommands()
            dispatchAll()
            if finished { break }

            descriptors.removeAll(keepingCapacity: true)
            polledWatches.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: loop.wakeFD, events: Int16(POLLIN), revents: 0))
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
                if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
                descriptors.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polledWatches.append(watch)
            }
            let result = poll(&descriptors, nfds_t(descriptors.count), pollTimeout())
            if result < 0 {
                if errno == EINTR { continue }
                shutDown(reason: DBusError(.ioError, "poll failed: errno \(errno)"))
                break
            }
            if descriptors[0].revents != 0 {
                var value: UInt64 = 0
                _ = read(loop.wakeFD, &value, 8)
            }
            for (index, watch) in polledWatches.enumerated() {
                let revents = descriptors[index + 1].revents
                guard revents != 0, watches.contains(watch) else { continue }
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
                if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
                if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
                if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
                _ = dbus_watch_handle(watch, flags)
            }
            handleExpiredTimeouts()
        }
    }

    private func runCommands() {
        let commands = loop.takeCommands()
        for command in commands { command(self) }
    }

    private func dispatchAll() {
        guard let connection else { return }
        while !finished, dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
            _ = dbus_connection_dispatch(connection)
        }
        flushDeliveries()
    }

    // MARK: Timeouts

    static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    func rearm(_ timeout: OpaquePointer) {
        guard let index = timeouts.firstIndex(where: { $0.timeout == timeout }) else { return }
        timeouts[index].deadline =
            dbus_timeout_get_enabled(timeout) != 0 ? Self.now() + Int64(dbus_timeout_get_interval(timeout)) : nil
    }

    private func pollTimeout() -> Int32 {
        var earliest: Int64?
        for entry in timeouts {
            if let deadline = entry.deadline { earliest = min(earliest ?? deadline, deadline) }
        }
        guard let earliest else { return -1 }
        return Int32(clamping: max(0, earliest - Self.now()))
    }

    private func handleExpiredTimeouts() {
        guard !timeouts.isEmpty else { return }
        let now = Self.now()
        guard timeouts.contains(where: { ($0.deadline ?? .max) <= now }) else { return }
        let expired = timeouts.filter { ($0.deadline ?? .max) <= now }.map(\.timeout)
        for timeout in expired {
            guard timeouts.contains(where: { $0.timeout == timeout }) else { continue }
            rearm(timeout)
            _ = dbus_timeout_handle(timeout)
        }
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
        if let connection {
            dbus_connection_remove_filter(connection, filterMessage, Unmanaged.passUnretained(self).toOpaque())
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
        }
        connection = nil
        watches.removeAll()
        timeouts.removeAll()
    }
}

// MARK: - libdbus callbacks (all run on the connection thread)

private func state(_ data: UnsafeMutableRawPointer?) -> LoopState {
    Unmanaged<LoopState>.fromOpaque(data!).takeUnretainedValue()
}

private let addWatch: DBusAddWatchFunction = { watch, data in
    state(data).watches.append(watch!)
    return 1
}

private let removeWatch: DBusRemoveWatchFunction = { watch, data in
    state(data).watches.removeAll { $0 == watch }
}

private let toggleWatch: DBusWatchToggledFunction = { _, _ in
    // The watch list is rebuilt from the enabled flags before every poll.
}

private let addTimeout: DBusAddTimeoutFunction = { timeout, data in
    let loop = state(data)
    loop.timeouts.append(LoopState.TimeoutEntry(timeout: timeout!, deadline: nil))
    loop.rearm(timeout!)
    return 1
}

private let removeTimeout: DBusRemoveTimeoutFunction = { timeout, data in
    state(data).timeouts.removeAll { $0.timeout == timeout }
}

private let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
    state(data).rearm(timeout!)
}

private let filterMessage: DBusHandleMessageFunction = { _, message, data in
    state(data).handle(message!)
}
