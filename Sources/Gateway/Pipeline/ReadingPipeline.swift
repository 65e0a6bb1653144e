import Bluetooth
import ByteLayouts
import Configuration
import Decoders
import Foundation
import Logging
import Outbox
import Publisher
import Synchronization
import TaskScope
import Timekeeping

/// The path of every reading, from the value that arrived to the publisher: decode, name the
/// fields, merge into the device's state (``ReadingRouter``), hand the entries to the publisher.
///
/// Callable from any thread, synchronously: notifications run it on the thread that read them
/// (the `AcquireNotify` socket thread) with no task, stream or actor hop, which is most of what a
/// reading used to cost. Its state (router and namer) sits behind one lock, and entries are handed
/// to the publisher inside it, so readings of one device enter the outbox in the order they were
/// merged whichever thread delivered them.
///
/// What the gateway actor must know about readings (a device is alive, new fields to announce)
/// comes out as ``events``: at once with new fields, else at most every ``reportInterval`` per
/// device for notifications and reads, so the actor is not woken for every notification; for an
/// advertisement only with new fields (``AdvertisementIntake`` has told the gateway the device was
/// seen, and its RSSI, before it delivers the readings).
final class ReadingPipeline: Sendable {
    /// How a subscribed characteristic's values are decoded and named.
    struct Subscription: Sendable {
        let characteristic: BluetoothUUID
        let decoder: String?
        let layout: ByteLayout?
        let source: FieldNamer.Source
        /// The named command on the same characteristic, when the subscription names no decoder
        /// or layout: its values are decoded with the command's format into the command's name
        /// (`power`), which Home Assistant's control reads (``GatewayModel/stateCommand(characteristic:service:of:)``).
        let command: NamedCommand?
        /// The characteristic as raw topics name it (its short UUID), computed once.
        let rawName: String

        init(
            characteristic: BluetoothUUID, decoder: String?, layout: ByteLayout?, source: FieldNamer.Source,
            command: NamedCommand? = nil
        ) {
            self.characteristic = characteristic
            self.decoder = decoder
            self.layout = layout
            self.source = source
            self.command = decoder == nil && layout == nil ? command : nil
            rawName = characteristic.shortString
        }
    }

    /// For the gateway actor: `device` delivered a reading at `sampleTime`.
    struct Event: Sendable {
        let device: String
        let sampleTime: Date
        let rssi: Int?
        /// A notification or read (keeps the silence watchdog quiet), not an advertisement.
        let fromConnection: Bool
        /// Discovery messages for fields seen for the first time.
        let discovery: [DiscoveryMessage]
        /// Where the reading came from: the characteristic's short UUID, nil for an advertisement
        /// (recorded with new fields, see ``DiscoverySources``).
        let source: String?
    }

    /// The longest a device's activity may go unreported to the gateway while readings flow. The
    /// silence watchdog's shortest timeout is 1 s, so it never fires for a device that is reporting.
    static let reportInterval: Duration = .milliseconds(250)

    private struct State {
        var router: ReadingRouter
        var namer: FieldNamer
        var coalescer: StateCoalescer
        var throttle: ReadingThrottle<ContinuousClock.Instant>
        var accepting = true
        var reported: [String: ContinuousClock.Instant] = [:]
        /// Devices whose burst window is open, with the instant it closes, in the order they opened
        /// (the window has one length, so that is the order they close in).
        var flushes: [(device: String, due: ContinuousClock.Instant)] = []
        /// The flusher waits for a kick (no window open); the next window to open kicks it.
        var flusherIdle = true
    }

    private let state: Mutex<State>
    private let registry = DecoderRegistry.standard
    private let publisher: Publisher
    /// The report interval, the throttle's rate limits and the burst flushes
    /// (``StateCoalescer``) read it; injected so tests can drive them.
    private let clock: any BridgeClock
    private let logger = Logger(label: "ble")
    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    /// Wakes the flusher when a burst window opens while none is (``State/flusherIdle``).
    private let kick: AsyncStream<Void>.Continuation
    /// Where the task closing the windows runs; held, since by default it is the pipeline's own.
    private let scope: TaskScope

    /// `stateWindow`: readings of one device within it share one state publish (`mqtt.state_window`).
    /// `scope`: where the task that closes the windows runs (the gateway's, which its stop closes;
    /// by default one of the pipeline's own, ended with it).
    init(
        router: ReadingRouter, namer: FieldNamer, publisher: Publisher, stateWindow: Duration = .zero,
        throttle: ReadingThrottle<ContinuousClock.Instant> = ReadingThrottle(),
        clock: any BridgeClock = SystemClock(), scope: TaskScope = TaskScope()
    ) {
        state = Mutex(
            State(
                router: router, namer: namer, coalescer: StateCoalescer(window: stateWindow), throttle: throttle))
        self.publisher = publisher
        self.clock = clock
        self.scope = scope
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let kicks: AsyncStream<Void>
        (kicks, kick) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // One task closes every burst window (``flushDue()``), sleeping until the next one closes:
        // a task and a timer per window cost about a tenth of the gateway's CPU at 1,000
        // advertisements/s (docs/benchmarks.md, "Advertisements").
        scope.spawn { [weak self] in
            for await _ in kicks {
                // Real delay: until the oldest open burst window (`mqtt.state_window`) closes.
                // (Cancelled: the scope closed, and the windows left are flushed by `stopAccepting`.)
                while let due = self?.flushDue() {
                    do { try await clock.sleep(until: due, tolerance: nil) } catch { return }
                }
            }
        }
    }

    deinit {
        kick.finish()
    }

    /// A value notified or read from a connected device's characteristic, received at `sampleTime`.
    func received(_ bytes: [UInt8], device: String, subscription: Subscription, sampleTime: Date) {
        if let command = subscription.command, let value = command.format.decode(bytes) {
            deliver(
                device: device, fields: [DecodedField(name: command.name, value: DecodedValue(value))],
                named: subscription.source, raw: (subscription.rawName, bytes), rssi: nil, sampleTime: sampleTime,
                fromConnection: true)
            return
        }
        let reading =
            subscription.layout?.reading(bytes)
            ?? registry.decode(bytes, uuid: subscription.characteristic, decoder: subscription.decoder)
        if !reading.isSuccess {
            logger.debug(
                "undecodable value", [("device", device), ("characteristic", subscription.rawName)])
        }
        deliver(
            device: device, fields: reading.isSuccess ? reading.fields : [], named: subscription.source,
            raw: (subscription.rawName, bytes), rssi: nil, sampleTime: sampleTime,
            fromConnection: true)
    }

    /// Fields decoded elsewhere (an advertisement: `rssi` set, `fromConnection` false); `named` gives
    /// the subscription whose field names must stay unique within the device's state.
    func deliver(
        device: String, fields: [DecodedField], named source: FieldNamer.Source? = nil,
        raw: (characteristic: String, bytes: [UInt8])?, rssi: Int?, sampleTime: Date, fromConnection: Bool
    ) {
        let now = clock.now
        let event = state.withLock { state -> Event? in
            guard state.accepting, state.router.knows(device) else { return nil }
            var discovery: [DiscoveryMessage] = []
            // A reading `only_on_change` or `min_interval` holds back still says the device is alive.
            if state.throttle.admit(device: device, source: raw?.characteristic, fields: fields, now: now) {
                let named = source.map { state.namer.name(fields, device: device, source: $0) } ?? fields
                let output = state.router.route(
                    device: device, fields: named, raw: raw, rssi: rssi, sampleTime: sampleTime)
                var entries = output.entries
                // Without a burst window every state is published at once: the changed names
                // are not needed (building the set cost ~3 µs a reading, issue 20).
                if let stateEntry = entries.first, state.coalescer.window > .zero {
                    // The state publish waits for the burst to end; the raw topic entries go at once.
                    var changed = Set(named.map(\.name))
                    if rssi != nil { changed.insert("rssi") }
                    // A button press the previous reading carried and this one leaves out: that
                    // reading's state is published before this one replaces it.
                    changed.formUnion(state.router.state(of: device)?.clearedEvents ?? [])
                    switch state.coalescer.offer(stateEntry, device: device, fields: changed) {
                    case .publish: break
                    case .scheduleFlush:
                        entries.removeFirst()
                        state.flushes.append((device, now + state.coalescer.window))
                        if state.flusherIdle {
                            state.flusherIdle = false
                            kick.yield()
                        }
                    case .merged: entries.removeFirst()
                    case .publishPending(let pending): entries[0] = pending
                    }
                }
                publisher.offer(entries)
                discovery = output.discovery
            }
            let due = state.reported[device].map { now - $0 >= Self.reportInterval } ?? true
            // An advertisement's device was reported just before (the intake's `seen` records its
            // time and RSSI with the gateway): only its new fields are news. Reporting every one
            // cost the gateway actor a wake-up per advertisement.
            guard fromConnection ? due || !discovery.isEmpty : !discovery.isEmpty else { return nil }
            state.reported[device] = now
            return Event(
                device: device, sampleTime: sampleTime, rssi: rssi, fromConnection: fromConnection,
                discovery: discovery, source: raw?.characteristic)
        }
        if let event { continuation.yield(event) }
    }

    /// Windows that close within this long after a flush are closed together, at most this long
    /// late: a hundred sensors advertising in the same round open their windows microseconds apart,
    /// and a wake-up (and a hand-over to the outbox thread) for each cost more than their decoding.
    static let flushGranularity: Duration = .milliseconds(2)

    /// Publishes the merged state of every device whose burst window has closed, in one hand-over;
    /// returns when to look again (the next window's close, not sooner than ``flushGranularity``
    /// from now), or nil when none is open (the flusher then waits for a kick).
    private func flushDue() -> ContinuousClock.Instant? {
        state.withLock { state in
            let now = clock.now
            let closed = state.flushes.prefix { $0.due <= now }
            let entries = closed.compactMap { state.coalescer.flush(device: $0.device) }
            state.flushes.removeFirst(closed.count)
            if !entries.isEmpty { publisher.offer(entries) }
            guard let next = state.flushes.first else {
                state.flusherIdle = true
                return nil
            }
            return max(next.due, now + Self.flushGranularity)
        }
    }

    /// Runs `body` on the router (reload, addresses, discovery re-sends).
    func withRouter<T>(_ body: (inout ReadingRouter) -> T) -> T {
        state.withLock { body(&$0.router) }
    }

    /// A reloaded configuration's field naming and publishing policies.
    func replaceConfiguration(_ configuration: BridgeConfiguration) {
        let namer = FieldNamer(configuration: configuration)
        let policies = ReadingThrottle<ContinuousClock.Instant>.policies(configuration)
        state.withLock {
            $0.namer = namer
            $0.throttle.update(policies: policies)
        }
    }

    /// Stops taking readings (the gateway is stopping); later ones are ignored.
    /// States still waiting for their burst to end are published now.
    func stopAccepting() {
        state.withLock { state in
            state.accepting = false
            publisher.offer(state.coalescer.flushAll())
            state.flushes.removeAll()
        }
        continuation.finish()
        // No window opens any more: the task that closed them ends.
        kick.finish()
    }
}
