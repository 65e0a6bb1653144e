import Bluetooth

/// One BlueZ discovery session shared by every scanner of the process, as a pure state machine.
///
/// Scanners come and go (`scannerAdded` / `scannerRemoved`); the arbiter reconciles what BlueZ does with what
/// they want, one D-Bus call at a time, so there are never two overlapping `StartDiscovery` sessions (a second
/// one from the same client answers `InProgress`; overlapping scans are a known source of connect failures):
/// - the first scanner sets the merged filter and starts discovery; later scanners only widen the filter;
/// - the last scanner leaving stops discovery;
/// - adapter power off / BlueZ restart drops the session but keeps the scanners; when the adapter is back,
///   discovery starts again (scanning resumes, unlike bluez/bluez#569);
/// - discovery stopping behind our back (`Discovering` false) restarts it.
public struct DiscoveryArbiter<ScannerID: Hashable & Sendable>: Sendable {
    public enum Event: Sendable {
        case scannerAdded(ScannerID, DiscoveryFilter)
        case scannerRemoved(ScannerID)
        /// The call of the last action returned successfully.
        case callSucceeded
        /// The call of the last action failed.
        case callFailed(BluetoothError)
        /// The adapter became usable (powered on and present) or unusable.
        case adapterAvailable(Bool)
        /// `Adapter1.Discovering` changed.
        case discoveringChanged(Bool)
    }

    public enum Action: Sendable, Hashable {
        /// Call `SetDiscoveryFilter` with this filter.
        case setFilter(DiscoveryFilter)
        /// Call `StartDiscovery`.
        case startDiscovery
        /// Call `StopDiscovery`.
        case stopDiscovery
        /// Starting failed for good: end these scanners' streams with the error.
        case failScanners([ScannerID], BluetoothError)
    }

    private enum Call: Sendable, Hashable {
        case setFilter(DiscoveryFilter)
        case start
        case stop
    }

    public private(set) var scanners: [ScannerID: DiscoveryFilter] = [:]
    /// True while our session is running in BlueZ.
    public private(set) var isDiscovering = false
    public private(set) var isAdapterAvailable = false
    private var appliedFilter: DiscoveryFilter?
    private var inFlight: Call?

    public init() {}

    /// The filter BlueZ should have.
    public var mergedFilter: DiscoveryFilter { DiscoveryFilter.merged(Array(scanners.values)) }

    /// True while a call is outstanding.
    public var isBusy: Bool { inFlight != nil }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .scannerAdded(let id, let filter):
            scanners[id] = filter
        case .scannerRemoved(let id):
            scanners[id] = nil
        case .callSucceeded:
            switch inFlight {
            case .setFilter(let filter): appliedFilter = filter
            case .start: isDiscovering = true
            case .stop:
                isDiscovering = false
                appliedFilter = nil
            case nil: break
            }
            inFlight = nil
        case .callFailed(let error):
            let call = inFlight
            inFlight = nil
            if let actions = callFailed(call, error) { return actions }
        case .adapterAvailable(let available):
            isAdapterAvailable = available
            if !available {
                // BlueZ dropped the session and its filter; a call in flight will fail and be ignored.
                isDiscovering = false
                appliedFilter = nil
                inFlight = nil
            }
        case .discoveringChanged(let discovering):
            if !discovering && inFlight != .start {
                isDiscovering = false
            }
        }
        return reconcile()
    }

    /// Returns actions to fail the scanners when the failure is final, or nil to reconcile again.
    private mutating func callFailed(_ call: Call?, _ error: BluetoothError) -> [Action]? {
        switch (call, error.code) {
        case (.start, .inProgress), (.start, .alreadyExists):
            // Our client already has a session (e.g. a stale one): treat it as running.
            isDiscovering = true
            return nil
        case (.stop, _):
            // "No discovery started" and friends: it is stopped either way.
            isDiscovering = false
            appliedFilter = nil
            return nil
        case (_, .notPoweredOn), (_, .resetting):
            // The adapter went away under us; wait for adapterAvailable(true).
            isAdapterAvailable = false
            isDiscovering = false
            appliedFilter = nil
            return []
        case (.start, _), (.setFilter, _):
            let failed = Array(scanners.keys)
            scanners.removeAll()
            return [.failScanners(failed, error)] + reconcile()
        case (nil, _):
            return nil
        }
    }

    private mutating func reconcile() -> [Action] {
        guard inFlight == nil, isAdapterAvailable else { return [] }
        if scanners.isEmpty {
            guard isDiscovering else { return [] }
            inFlight = .stop
            return [.stopDiscovery]
        }
        let wanted = mergedFilter
        if appliedFilter != wanted {
            inFlight = .setFilter(wanted)
            return [.setFilter(wanted)]
        }
        if !isDiscovering {
            inFlight = .start
            return [.startDiscovery]
        }
        return []
    }
}
