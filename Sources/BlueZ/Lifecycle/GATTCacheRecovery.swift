/// What to do when a peripheral's services resolved without something the caller needs: a plain state
/// machine, one per peripheral, no I/O.
///
/// bluetoothd keeps a copy of each known peer's GATT database. On a connection it compares the peer's
/// Database Hash with its copy and, when they match, skips discovery ("DB Hash match: skipping discovery")
/// and exports the copy. A copy made while the link was cut during a database update can lack services the
/// peer has; its hash still matches, so every later connection resolves without them. Reconnecting does not
/// cure that; forgetting the device (`Adapter1.RemoveDevice`) does, since the next connection then discovers
/// the whole database. Forgetting a bonded device would also throw away its keys (the user paired it, the
/// peer may refuse a new pairing), so a bonded device is never forgotten silently.
///
/// The steps, after `GetManagedObjects` (the truth once `ServicesResolved` is true) showed a need missing:
/// 1. up to `reconnects` times: disconnect and connect again (a peer that was still changing its
///    database may announce the change with Service Changed on the next connection);
/// 2. unbonded: forget the device, scan and connect again (full discovery);
/// 3. then give up with a failure that names the fix: for a bonded device, removing the bond and pairing
///    again; after a fresh discovery, the peer really lacks it (a configuration mistake).
/// A connection that finds everything resets the machine.
public struct GATTCacheRecovery: Sendable, Hashable {
    public struct Configuration: Sendable, Hashable {
        /// Reconnects before the device is forgotten (or, bonded, before giving up).
        public var reconnects: Int = 1

        public init(reconnects: Int = 1) { self.reconnects = max(0, reconnects) }
    }

    public enum Decision: Sendable, Hashable {
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

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Services resolved and something needed is missing; `bonded` is `Device1.Bonded` (or `Paired`) now.
    public mutating func servicesMissing(bonded: Bool) -> Decision {
        if forgotten { return .giveUp(.missingAfterRediscovery) }
        if reconnectsUsed < configuration.reconnects {
            reconnectsUsed += 1
            return .reconnect
        }
        if bonded { return .giveUp(.staleBondedCache) }
        forgotten = true
        return .forgetDevice
    }

    /// Services resolved with everything needed: the next miss starts from the beginning.
    public mutating func servicesComplete() {
        reconnectsUsed = 0
        forgotten = false
    }
}
