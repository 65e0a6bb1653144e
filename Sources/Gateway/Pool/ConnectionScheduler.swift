/// The connection pool as a plain state machine: it decides which device to connect, poll,
/// serve or release, and returns actions for the gateway to perform. No I/O; time is passed in.
///
/// Rules (docs/mqtt.md, "Connection pool"):
/// - at most `maxConnections` devices connecting or connected; one connect at a time;
/// - priority: pending commands, then `keep_connected` devices, then due polls; ties go to the
///   device that has waited longest, so every device gets its turn;
/// - `keep_connected` devices never take the last slot when on-demand devices exist, so polls
///   and commands for them can always rotate through;
/// - on-demand devices are released as soon as their polls and commands are done;
/// - failed connects and lost connections are retried after `backoff(attempt)` (the central's
///   `ReconnectPolicy`); the adapter powering on (again, or a restarted bluetoothd's) clears
///   every backoff, since failures while Bluetooth was away say nothing about the device; a connected device silent for longer than its `silenceTimeout` is
///   disconnected and reconnected (watchdog);
/// - optionally, discovery is paused while a connect is in progress;
/// - `coordinated` (shared-broker mode, docs/multi-gateway.md): a device is connected only while
///   this gateway owns it (``Event/owned(_:_:)``); it starts on standby, and losing the ownership
///   disconnects it (``DisconnectReason/released``) and fails its queued commands.
package struct ConnectionScheduler: Sendable {
    package typealias Instant = ContinuousClock.Instant

    package enum Mode: String, Sendable, Hashable {
        case keepConnected = "keep_connected"
        case onDemand = "connect_on_demand"
        case passive
    }

    package struct DeviceSpec: Sendable, Hashable {
        package var id: String
        package var mode: Mode
        /// The shortest `read` interval of the device's subscriptions; nil when nothing is polled.
        package var pollInterval: Duration?
        /// The shortest `silence_timeout` of its notify subscriptions; nil = no watchdog.
        package var silenceTimeout: Duration?

        package init(id: String, mode: Mode, pollInterval: Duration? = nil, silenceTimeout: Duration? = nil) {
            self.id = id
            self.mode = mode
            self.pollInterval = pollInterval
            self.silenceTimeout = silenceTimeout
        }
    }

    package enum DisconnectReason: String, Sendable, Hashable {
        /// An on-demand device whose work is done.
        case idle
        /// The silence watchdog fired.
        case silent
        /// The device left the configuration.
        case removed
        /// Another gateway owns the device now (shared-broker mode).
        case released
    }

    package enum Action: Sendable, Hashable {
        case connect(String)
        case disconnect(String, DisconnectReason)
        /// Read the device's polled characteristics, then report `.pollFinished`.
        case poll(String)
        /// Execute the device's queued commands, then report `.commandsFinished`.
        case runCommands(String)
        /// Give up on the device's queued commands (`device_unavailable`).
        case failCommands(String)
        case pauseDiscovery
        case resumeDiscovery
    }

    package enum Event: Sendable, Hashable {
        /// Time passed (call at `nextDeadline()` or whenever convenient).
        case tick
        /// The device is known to BlueZ (seen in a scan or restored); it may be connected.
        case discovered(String)
        case connected(String)
        case connectFailed(String)
        /// BlueZ has no object for the device (gone with a bluetoothd restart or a removal): not a failed
        /// attempt, so no backoff; it is connected once ``discovered(_:)`` again.
        case unseen(String)
        case disconnected(String)
        case pollFinished(String)
        case commandQueued(String)
        case commandsFinished(String)
        /// A notification or advertisement arrived (feeds the silence watchdog).
        case activity(String)
        case adapterPowered(Bool)
        case reconfigure([DeviceSpec])
        /// `coordinated` only: this gateway owns the device (true) and may connect it, or stands by.
        case owned(String, Bool)
    }

    enum Phase: Sendable, Hashable {
        case idle
        case connecting
        case connected
        case disconnecting
    }

    struct Record: Sendable, Hashable {
        var spec: DeviceSpec
        var phase: Phase = .idle
        var known = false
        var nextPoll: Instant?
        var pendingCommands = 0
        var busy = false
        var attempts = 0
        var retryAt: Instant?
        var lastActivity: Instant?
        var waitingSince: Instant?
        /// This gateway may connect the device (always, unless `coordinated`).
        var owned = true
    }

    package let maxConnections: Int
    package let pauseDiscoveryWhileConnecting: Bool
    /// Connect attempts for a device with queued commands before they are failed.
    package let commandConnectAttempts: Int
    /// Devices are connected only while owned (``Event/owned(_:_:)``); new devices start on standby.
    package let coordinated: Bool
    private let backoff: @Sendable (Int) -> Duration
    private(set) var records: [String: Record] = [:]
    private var order: [String] = []
    private var adapterPowered = true
    private var discoveryPaused = false
    /// When ``handle(_:at:)`` last planned (``nextDeadline()``).
    private var plannedAt: Instant?

    package init(
        maxConnections: Int = 5, pauseDiscoveryWhileConnecting: Bool = false, commandConnectAttempts: Int = 3,
        coordinated: Bool = false, devices: [DeviceSpec], now: Instant,
        backoff: @escaping @Sendable (Int) -> Duration
    ) {
        self.maxConnections = max(1, maxConnections)
        self.coordinated = coordinated
        self.pauseDiscoveryWhileConnecting = pauseDiscoveryWhileConnecting
        self.commandConnectAttempts = max(1, commandConnectAttempts)
        self.backoff = backoff
        install(devices, now: now)
    }

    private mutating func install(_ devices: [DeviceSpec], now: Instant) {
        order = devices.map(\.id)
        for spec in devices {
            if var record = records[spec.id] {
                if record.spec.pollInterval != spec.pollInterval {
                    record.nextPoll = spec.pollInterval.map { _ in now }
                }
                record.spec = spec
                records[spec.id] = record
            } else {
                records[spec.id] = Record(
                    spec: spec, nextPoll: spec.pollInterval.map { _ in now }, owned: !coordinated)
            }
        }
    }

    // MARK: Queries

    package var connectedDevices: [String] { order.filter { records[$0]?.phase == .connected } }
    package var connectingDevice: String? { order.first { records[$0]?.phase == .connecting } }
    package var slotsInUse: Int { records.values.filter { $0.phase != .idle }.count }
    package func isConnected(_ id: String) -> Bool { records[id]?.phase == .connected }
    /// Whether this gateway may connect the device (always, unless `coordinated`).
    package func isOwned(_ id: String) -> Bool { records[id]?.owned ?? false }

    /// The earliest time at which a `.tick` may produce actions: after the last plan. A deadline
    /// that plan already saw pass and did not act on (the adapter off, another device connecting,
    /// the slots full, the device unseen) waits for the event that unblocks it, which plans again;
    /// returned, it made the gateway's wake-up timer fire at once, over and over, for as long as the
    /// block lasted (a busy loop; 2026-12-05, gateways left with their bus gone).
    package func nextDeadline() -> Instant? {
        var deadline: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            if let plannedAt, instant <= plannedAt { return }
            deadline = deadline.map { min($0, instant) } ?? instant
        }
        for record in records.values where record.spec.mode != .passive {
            switch record.phase {
            case .idle:
                if wantsConnection(record) != nil { consider(record.retryAt) }
                if record.spec.mode == .onDemand, record.owned { consider(record.nextPoll) }
            case .connected:
                if !record.busy { consider(record.nextPoll) }
                if let timeout = record.spec.silenceTimeout, let last = record.lastActivity { consider(last + timeout) }
            case .connecting, .disconnecting: break
            }
        }
        return deadline
    }

    // MARK: Events

    package mutating func handle(_ event: Event, at now: Instant) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .tick: break
        case .discovered(let id):
            records[id]?.known = true
        case .connected(let id) where records[id]?.owned == false:
            // Released while it was connecting: let it go now.
            records[id]?.phase = .disconnecting
            actions.append(.disconnect(id, .released))
        case .connected(let id):
            guard var record = records[id] else { break }
            record.phase = .connected
            record.attempts = 0
            record.retryAt = nil
            record.known = true
            record.lastActivity = now
            record.waitingSince = nil
            records[id] = record
        case .connectFailed(let id):
            guard var record = records[id] else { break }
            record.phase = .idle
            record.attempts += 1
            record.retryAt = now + backoff(record.attempts)
            if record.pendingCommands > 0, record.attempts >= commandConnectAttempts {
                record.pendingCommands = 0
                actions.append(.failCommands(id))
            }
            records[id] = record
        case .unseen(let id):
            guard var record = records[id] else { break }
            record.phase = .idle
            record.known = false
            records[id] = record
        case .disconnected(let id):
            guard var record = records[id] else { break }
            let wasUnexpected = record.phase == .connected || record.phase == .connecting
            record.phase = .idle
            record.busy = false
            if wasUnexpected, record.spec.mode == .keepConnected {
                record.attempts += 1
                record.retryAt = now + backoff(record.attempts)
            }
            records[id] = record
        case .pollFinished(let id):
            guard var record = records[id] else { break }
            record.busy = false
            if let interval = record.spec.pollInterval { record.nextPoll = now + interval }
            records[id] = record
        case .commandQueued(let id):
            guard var record = records[id] else { break }
            record.pendingCommands += 1
            if record.waitingSince == nil { record.waitingSince = now }
            records[id] = record
        case .commandsFinished(let id):
            // Commands queued while the batch ran are still pending: the plan runs them next.
            records[id]?.busy = false
        case .activity(let id):
            // Hot path (every notification): only moves the watchdog's deadline forward, which
            // never creates work, so no planning.
            records[id]?.lastActivity = now
            records[id]?.known = true
            return actions
        case .adapterPowered(let powered):
            adapterPowered = powered
            if powered {
                // The adapter (or bluetoothd) is back: a fresh start, not one more failure in a
                // row, so no device waits out a backoff earned while Bluetooth was away.
                for id in order {
                    records[id]?.attempts = 0
                    records[id]?.retryAt = nil
                }
            } else {
                for id in order where records[id]?.phase != .idle {
                    records[id]?.phase = .idle
                    records[id]?.busy = false
                }
                if discoveryPaused {
                    discoveryPaused = false
                }
            }
        case .reconfigure(let devices):
            let keep = Set(devices.map(\.id))
            for id in order where !keep.contains(id) {
                if let record = records[id], record.phase == .connected || record.phase == .connecting {
                    actions.append(.disconnect(id, .removed))
                }
                if records[id]?.pendingCommands ?? 0 > 0 { actions.append(.failCommands(id)) }
                records[id] = nil
            }
            install(devices, now: now)
        case .owned(let id, let owned):
            guard coordinated, var record = records[id], record.owned != owned else { break }
            record.owned = owned
            if !owned {
                if record.phase == .connected {
                    record.phase = .disconnecting
                    actions.append(.disconnect(id, .released))
                }
                record.retryAt = nil
                record.attempts = 0
                if record.pendingCommands > 0 {
                    record.pendingCommands = 0
                    record.waitingSince = nil
                    actions.append(.failCommands(id))
                }
            }
            records[id] = record
        }
        plannedAt = now
        actions += plan(now)
        return actions
    }

    // MARK: Planning

    /// Priority of a device that wants a connection (lower first), nil when it does not.
    private func wantsConnection(_ record: Record) -> Int? {
        guard record.spec.mode != .passive, record.owned else { return nil }
        if record.pendingCommands > 0 { return 0 }
        if record.spec.mode == .keepConnected { return 1 }
        return nil
    }

    private func wantsPoll(_ record: Record, _ now: Instant) -> Bool {
        guard let next = record.nextPoll else { return false }
        return next <= now
    }

    private mutating func plan(_ now: Instant) -> [Action] {
        var actions: [Action] = []
        guard adapterPowered else { return actions }
        // Work for connected devices, watchdog, release of idle on-demand devices.
        for id in order {
            guard var record = records[id], record.phase == .connected else { continue }
            if let timeout = record.spec.silenceTimeout, let last = record.lastActivity, now - last > timeout,
                !record.busy
            {
                record.phase = .disconnecting
                records[id] = record
                actions.append(.disconnect(id, .silent))
                continue
            }
            guard !record.busy else { continue }
            if record.pendingCommands > 0 {
                record.busy = true
                record.waitingSince = nil
                record.pendingCommands = 0  // the batch takes every queued command
                actions.append(.runCommands(id))
            } else if wantsPoll(record, now) {
                record.busy = true
                actions.append(.poll(id))
            } else if record.spec.mode == .onDemand {
                record.phase = .disconnecting
                actions.append(.disconnect(id, .idle))
            }
            records[id] = record
        }
        // One connect at a time.
        if connectingDevice != nil { return actions }
        if discoveryPaused {
            discoveryPaused = false
            actions.append(.resumeDiscovery)
        }
        let inUse = slotsInUse
        guard inUse < maxConnections else { return actions }
        let hasOnDemand = records.values.contains { $0.spec.mode == .onDemand }
        let keepInUse = records.values.filter { $0.spec.mode == .keepConnected && $0.phase != .idle }.count
        let keepLimit = hasOnDemand ? maxConnections - 1 : maxConnections
        var candidates: [(priority: Int, since: Instant, index: Int, id: String)] = []
        for (index, id) in order.enumerated() {
            guard let record = records[id], record.phase == .idle, record.known else { continue }
            var priority = wantsConnection(record)
            if priority == nil, record.spec.mode == .onDemand, record.owned, wantsPoll(record, now) { priority = 2 }
            guard let priority else { continue }
            if priority > 0, let retry = record.retryAt, retry > now { continue }
            if priority == 1, keepInUse >= keepLimit { continue }
            let since = record.waitingSince ?? record.nextPoll ?? record.retryAt ?? now
            candidates.append((priority, since, index, id))
        }
        guard
            let chosen = candidates.min(by: {
                ($0.priority, $0.since, $0.index) < ($1.priority, $1.since, $1.index)
            })
        else { return actions }
        records[chosen.id]?.phase = .connecting
        if pauseDiscoveryWhileConnecting {
            discoveryPaused = true
            actions.append(.pauseDiscovery)
        }
        actions.append(.connect(chosen.id))
        return actions
    }
}
