import Bluetooth

/// Derives the manager state (`ManagerState`) from what is known about BlueZ, as a pure state machine:
///
/// | known | state |
/// |---|---|
/// | nothing yet | `unknown` |
/// | no `org.bluez` on the bus, never seen | `unsupported` |
/// | `org.bluez` left the bus after being there (bluetoothd restart) | `resetting` |
/// | D-Bus denied access | `unauthorized` |
/// | BlueZ there, objects not loaded yet | `unknown` (`resetting` if it was resetting) |
/// | no such adapter, never seen | `unsupported` |
/// | adapter removed after being there | `resetting` |
/// | adapter `Powered` false | `poweredOff` |
/// | adapter `Powered` true | `poweredOn` |
///
/// A `GetManagedObjects` that fails while `org.bluez` keeps its owner (bluetoothd busy past the
/// call's timeout, as when a stuck controller holds its main loop) is tried again after a backoff
/// (``RetrySchedule``), until one answers or the owner changes: else the state would stay `unknown`
/// until bluetoothd happened to restart.
public struct AdapterStateTracker: Sendable {
    public enum Event: Sendable, Hashable {
        /// `org.bluez` has an owner on the bus (true) or none (false).
        case bluezPresent(Bool)
        /// `GetManagedObjects` answered: whether our adapter exists and its `Powered`.
        case objectsLoaded(adapterPresent: Bool, powered: Bool)
        /// `InterfacesAdded` for our adapter.
        case adapterAdded(powered: Bool)
        /// `InterfacesRemoved` for our adapter.
        case adapterRemoved
        /// `Adapter1.Powered` changed.
        case poweredChanged(Bool)
        /// A call was refused with `AccessDenied`.
        case accessDenied
        /// `GetManagedObjects` failed (not refused) while `org.bluez` still had its owner.
        case loadFailed
    }

    public enum Action: Sendable, Hashable {
        /// Publish the new state.
        case stateChanged(ManagerState)
        /// (Re)load the object tree: add match rules first, then call `GetManagedObjects`.
        case loadObjects
        /// Load the object tree again after `after` (on the manager's clock): the last load failed.
        case reloadObjects(after: Duration)
    }

    public private(set) var state: ManagerState = .unknown
    private var bluezSeen = false
    private var adapterSeen = false
    private var bluezPresent = false
    private var adapterPresent = false
    private var powered = false
    private var loaded = false
    private var denied = false
    /// Failed loads since the last one that answered (or since `org.bluez` changed owner).
    private var loadRetries = RetrySchedule()

    public init() {}

    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .bluezPresent(let present):
            let wasPresent = bluezPresent
            bluezPresent = present
            denied = false
            if present {
                if !wasPresent {
                    loaded = false
                    loadRetries.reset()
                    actions.append(.loadObjects)
                }
                bluezSeen = true
            } else {
                loaded = false
                adapterPresent = false
                powered = false
            }
        case .objectsLoaded(let present, let isPowered):
            loaded = true
            loadRetries.reset()
            adapterPresent = present
            powered = present && isPowered
            if present { adapterSeen = true }
        case .adapterAdded(let isPowered):
            adapterPresent = true
            adapterSeen = true
            powered = isPowered
        case .adapterRemoved:
            adapterPresent = false
            powered = false
        case .poweredChanged(let isPowered):
            if adapterPresent { powered = isPowered }
        case .accessDenied:
            denied = true
        case .loadFailed:
            if bluezPresent && !loaded && !denied {
                actions.append(.reloadObjects(after: loadRetries.next()))
            }
        }
        let next = derive()
        if next != state {
            state = next
            actions.insert(.stateChanged(next), at: 0)
        }
        return actions
    }

    private func derive() -> ManagerState {
        if denied { return .unauthorized }
        guard bluezPresent else { return bluezSeen ? .resetting : .unsupported }
        guard loaded else { return state == .resetting ? .resetting : .unknown }
        guard adapterPresent else { return adapterSeen ? .resetting : .unsupported }
        return powered ? .poweredOn : .poweredOff
    }
}
