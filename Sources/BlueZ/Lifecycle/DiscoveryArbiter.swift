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
/// - discovery stopping behind our back (`Discovering` false) restarts it;
/// - `StartDiscovery` answered `InProgress` while the adapter does not say `Discovering`, or not
///   answered in time, is tried again after a pause (``RetrySchedule``): bluetoothd answers
///   `InProgress` also when the controller refused to start (`discovery_complete` in `adapter.c`,
///   e.g. the kernel still stopping the last discovery), and then drops our session, so nothing
///   runs. The retry stops whatever may be ours first, then starts afresh;
/// - each call is numbered (``lastCall``) and its result names it: a result of a call that is no longer
///   in flight (the adapter went away meanwhile and a new call was made when it came back) is ignored, so
///   a late `NotReady` from before a power cycle cannot stop the scan started after it.
public struct DiscoveryArbiter<ScannerID: Hashable & Sendable>: Sendable {
    public enum Event: Sendable {
        case scannerAdded(ScannerID, DiscoveryFilter)
        case scannerRemoved(ScannerID)
        /// The call numbered so (``lastCall`` when its action was returned) returned successfully.
        case callSucceeded(Int)
        /// The call numbered so failed.
        case callFailed(Int, BluetoothError)
        /// The adapter became usable (powered on and present) or unusable.
        case adapterAvailable(Bool)
        /// `Adapter1.Discovering` changed (or was loaded).
        case discoveringChanged(Bool)
        /// The pause asked for by ``Action/retryLater(after:)`` passed.
        case retryDue
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
        /// Starting failed for now (`error`): report ``Event/retryDue`` after `after`.
        case retryLater(after: Duration, error: BluetoothError)
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
    /// `Adapter1.Discovering` as last reported: whether any session (ours or another client's) runs.
    private var adapterDiscovering = false
    /// A retry is waiting for ``Event/retryDue``; nothing is started meanwhile.
    private var retryPending = false
    /// The retry stops what may be our session before starting one.
    private var stopBeforeStart = false
    /// Starts that failed for now since the last one that succeeded.
    private var startRetries = RetrySchedule()
    private var appliedFilter: DiscoveryFilter?
    /// The call in flight and its number.
    private var pending: (number: Int, call: Call)?
    private var inFlight: Call? { pending?.call }
    /// The number of the most recent call an action asked for; its result must name it.
    public private(set) var lastCall = 0

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
        case .callSucceeded(let number):
            guard number == pending?.number else { return reconcile() }
            switch inFlight {
            case .setFilter(let filter): appliedFilter = filter
            case .start:
                isDiscovering = true
                startRetries.reset()
            case .stop:
                isDiscovering = false
                appliedFilter = nil
            case nil: break
            }
            pending = nil
        case .callFailed(let number, let error):
            guard number == pending?.number, let call = inFlight else { return reconcile() }
            pending = nil
            if let actions = callFailed(call, error) { return actions }
        case .adapterAvailable(let available):
            isAdapterAvailable = available
            if !available {
                // BlueZ dropped the session and its filter; a call in flight will fail and be ignored.
                isDiscovering = false
                appliedFilter = nil
                pending = nil
                adapterDiscovering = false
                stopBeforeStart = false
                // A retry's pause is for the session that adapter refused; a new one starts at once.
                retryPending = false
                startRetries.reset()
            }
        case .discoveringChanged(let discovering):
            adapterDiscovering = discovering
            if !discovering && inFlight != .start {
                isDiscovering = false
            }
        case .retryDue:
            retryPending = false
        }
        return reconcile()
    }

    /// Returns actions to fail the scanners when the failure is final, or nil to reconcile again.
    private mutating func callFailed(_ call: Call, _ error: BluetoothError) -> [Action]? {
        switch (call, error.code) {
        case (.start, .inProgress) where adapterDiscovering, (.start, .alreadyExists):
            // Our client already has a session (e.g. a stale one): treat it as running. (Were it
            // another client's and ours gone, its end says `Discovering` false, which restarts ours.)
            isDiscovering = true
            return nil
        case (.start, .inProgress), (.start, .timeout):
            // Nothing runs, or what runs is unknown: after a pause, stop what may be ours and start.
            isDiscovering = true
            stopBeforeStart = true
            retryPending = true
            return [.retryLater(after: startRetries.next(), error: error)]
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
        }
    }

    /// Records `call` as in flight under a new number.
    private mutating func issue(_ call: Call) {
        lastCall += 1
        pending = (lastCall, call)
    }

    private mutating func reconcile() -> [Action] {
        guard inFlight == nil, isAdapterAvailable, !retryPending else { return [] }
        if stopBeforeStart {
            stopBeforeStart = false
            guard isDiscovering else { return reconcile() }
            issue(.stop)
            return [.stopDiscovery]
        }
        if scanners.isEmpty {
            guard isDiscovering else { return [] }
            issue(.stop)
            return [.stopDiscovery]
        }
        let wanted = mergedFilter
        if appliedFilter != wanted {
            issue(.setFilter(wanted))
            return [.setFilter(wanted)]
        }
        if !isDiscovering {
            issue(.start)
            return [.startDiscovery]
        }
        return []
    }
}
