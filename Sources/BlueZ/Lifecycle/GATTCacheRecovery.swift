/// What to do when a peripheral's services resolved without something the caller needs: a plain state
/// machine, one per peripheral, no I/O; time is passed in.
///
/// bluetoothd keeps a copy of each known peer's GATT database. On a connection it compares the peer's
/// Database Hash with its copy and, when they match, skips discovery ("DB Hash match: skipping discovery")
/// and exports the copy. A copy made while the link was cut during a database update can lack services the
/// peer has; its hash still matches, so every later connection resolves without them. Reconnecting does not
/// cure that; forgetting the device (`Adapter1.RemoveDevice`) does, since the next connection then discovers
/// the whole database. Forgetting a bonded device would also throw away its keys (the user paired it, the
/// peer may refuse a new pairing), so a bonded device is never forgotten silently.
///
/// A need can also be missing for a while on a healthy connection: a peripheral whose GATT application
/// registers after the link came up announces its services with Service Changed, and bluetoothd adds them
/// later. What tells the two apart is `GetManagedObjects` at `ServicesResolved` (``Evidence/cacheReused``):
/// when the connection left the device's GATT objects exactly as bluetoothd exported them before it, BlueZ
/// discovered nothing (its cached copy stood), and neither waiting nor reconnecting can change that answer
/// unless the peer changes its database; when the tree changed during the connection, discovery ran and
/// more may follow.
///
/// The steps, after `GetManagedObjects` showed a need missing:
/// 0. the tree came from discovery and the device served the need before: wait for it until
///    `lateTimeout` from now (once per recovery);
/// 1. the tree is bluetoothd's cached copy, unchanged: forget an unbonded device at once; for a bonded
///    one, give up at once (on real bluetoothd 5.66 a reconnect only resolved the same copy again);
/// 2. up to `reconnects` times: disconnect and connect again (a peer that was still changing its
///    database may announce the change with Service Changed on the next connection);
/// 3. unbonded: forget the device, scan and connect again (full discovery);
/// 4. then give up with a failure that names the fix: for a bonded device, removing the bond and pairing
///    again; after a fresh discovery, the peer really lacks it (a configuration mistake).
/// A connection that finds everything resets the machine.
public struct GATTCacheRecovery: Sendable, Hashable {
    public typealias Instant = ContinuousClock.Instant

    public struct Configuration: Sendable, Hashable {
        /// Reconnects before the device is forgotten (or, bonded, before giving up).
        public var reconnects: Int
        /// How long a connection whose tree came from discovery waits for a need the device served before.
        public var lateTimeout: Duration

        public init(reconnects: Int = 1, lateTimeout: Duration = .seconds(15)) {
            self.reconnects = max(0, reconnects)
            self.lateTimeout = max(.zero, lateTimeout)
        }
    }

    /// What the caller knows about the connection whose resolved services lack a need.
    public struct Evidence: Sendable, Hashable {
        /// `Device1.Bonded` (or `Paired`) now.
        public var bonded: Bool
        /// The device's GATT objects after `ServicesResolved` (`GetManagedObjects`) are exactly those bluetoothd
        /// exported before the connection started: its cached copy stood, nothing was discovered.
        public var cacheReused: Bool
        /// The device served a missing need on an earlier connection (so it may be late, not absent).
        public var servedBefore: Bool

        public init(bonded: Bool, cacheReused: Bool, servedBefore: Bool) {
            self.bonded = bonded
            self.cacheReused = cacheReused
            self.servedBefore = servedBefore
        }
    }

    public enum Decision: Sendable, Hashable {
        /// Keep the connection and wait for the need to appear until the instant; then report again.
        case awaitLate(until: Instant)
        /// Disconnect and connect again.
        case reconnect
        /// `Adapter1.RemoveDevice`, then discover and connect again.
        case forgetDevice
        /// Stop recovering; report the failure (connections that follow report it again without
        /// reconnect or removal rounds until one finds everything).
        case giveUp(Failure)
    }

    public enum Failure: Sendable, Hashable {
        /// Bonded: bluetoothd's cached database stays stale; the user must remove the bond and pair again.
        case staleBondedCache
        /// Still missing after bluetoothd discovered the database afresh: the peer does not have it.
        case missingAfterRediscovery
    }

    public let configuration: Configuration
    /// Reconnects used since the last complete resolution.
    public private(set) var reconnectsUsed = 0
    /// The device was forgotten since the last complete resolution.
    public private(set) var forgotten = false
    /// A late wait was granted since the last complete resolution.
    public private(set) var waitedForLate = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Nothing decided since the last complete resolution.
    public var isIdle: Bool { reconnectsUsed == 0 && !forgotten && !waitedForLate }

    /// Services resolved (or a late wait ended) and something needed is missing.
    public mutating func servicesMissing(_ evidence: Evidence, at now: Instant) -> Decision {
        if forgotten { return .giveUp(.missingAfterRediscovery) }
        if isIdle, !evidence.cacheReused, evidence.servedBefore, configuration.lateTimeout > .zero {
            waitedForLate = true
            return .awaitLate(until: now + configuration.lateTimeout)
        }
        if evidence.cacheReused {
            if evidence.bonded { return .giveUp(.staleBondedCache) }
            forgotten = true
            return .forgetDevice
        }
        if reconnectsUsed < configuration.reconnects {
            reconnectsUsed += 1
            return .reconnect
        }
        if evidence.bonded { return .giveUp(.staleBondedCache) }
        forgotten = true
        return .forgetDevice
    }

    /// Services resolved with everything needed: the next miss starts from the beginning.
    public mutating func servicesComplete() {
        reconnectsUsed = 0
        forgotten = false
        waitedForLate = false
    }
}
