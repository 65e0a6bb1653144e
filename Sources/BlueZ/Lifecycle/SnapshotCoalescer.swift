/// Shares one `GetManagedObjects` among the peripherals that want bluetoothd's tree at about the same
/// time, as a pure state machine.
///
/// Each connect ends with a snapshot of the whole object tree (``CentralManager``'s GATT resync), and the
/// snapshot is only good for a peripheral when it was taken after that peripheral's services resolved. When
/// the adapter comes back from a power cycle or bluetoothd restarts, every configured device reconnects at
/// once; with one call each, 20 devices asked for 20 copies of a tree that holds all 20 of them, each reply
/// decoded in full (work and transient memory growing with the square of the device count). Here:
/// - with no call in flight, a request issues one (numbered) and is answered by it;
/// - a request arriving while a call is in flight waits for the *next* call (the one in flight may have been
///   sent before its services resolved), which is issued when the one in flight ends, and is shared by
///   every request that arrived meanwhile.
/// So at most one call is in flight and one is promised, whatever the number of devices.
package struct SnapshotCoalescer: Sendable, Hashable {
    package enum Decision: Sendable, Hashable {
        /// Issue call `number` now; its result answers this request.
        case issue(UInt64)
        /// Wait for the result of call `number`, which is issued when the call in flight ends.
        case wait(UInt64)
    }

    /// The call in flight, if any.
    package private(set) var inFlight: UInt64?
    /// Whether a request waits for the call after the one in flight.
    package private(set) var nextPromised = false
    private var lastIssued: UInt64 = 0

    package init() {}

    /// A peripheral wants a snapshot taken from now on.
    package mutating func request() -> Decision {
        guard let current = inFlight else {
            lastIssued += 1
            inFlight = lastIssued
            return .issue(lastIssued)
        }
        nextPromised = true
        return .wait(current + 1)
    }

    /// Call `number` returned (successfully or not) and its waiters have their result. Returns the number of the
    /// call to issue now for the requests that arrived while it was in flight, if any.
    package mutating func finished(_ number: UInt64) -> UInt64? {
        guard number == inFlight else { return nil }
        inFlight = nil
        guard nextPromised else { return nil }
        nextPromised = false
        lastIssued += 1
        inFlight = lastIssued
        return lastIssued
    }
}
