/// The adapter's `Pairable` and `Discoverable` modes and their timeouts, with the rules of
/// bluetoothd 5.66 (`src/adapter.c` property setters, `src/agent.c` default agents).
///
/// Pure: setters return the names of the properties that changed; the caller emits them and runs
/// the timers ``discoverableDeadline`` and ``pairableDeadline`` ask for.
package struct AdapterModes: Sendable, Equatable {
    package private(set) var pairable = false
    package private(set) var discoverable = false
    /// Seconds until `Discoverable` turns off again (0: never). bluetoothd's default is 180.
    package private(set) var discoverableTimeout: UInt32 = 180
    /// Seconds until `Pairable` turns off again (0: never).
    package private(set) var pairableTimeout: UInt32 = 0

    package init() {}

    /// `Set Discoverable`: with a timeout, only while powered (`Failed` "Not Powered").
    package mutating func setDiscoverable(_ on: Bool, powered: Bool) throws(BlueZError) -> [String] {
        if discoverableTimeout > 0, !powered { throw BlueZError.failed("Not Powered") }
        guard on != discoverable else { return [] }
        discoverable = on
        return ["Discoverable"]
    }

    package mutating func setPairable(_ on: Bool) -> [String] {
        guard on != pairable else { return [] }
        pairable = on
        return ["Pairable"]
    }

    /// `Set DiscoverableTimeout`: always signalled, even when unchanged (bluetoothd emits it unconditionally).
    package mutating func setDiscoverableTimeout(_ seconds: UInt32) -> [String] {
        discoverableTimeout = seconds
        return ["DiscoverableTimeout"]
    }

    package mutating func setPairableTimeout(_ seconds: UInt32) -> [String] {
        pairableTimeout = seconds
        return ["PairableTimeout"]
    }

    /// A default agent appeared or went (`set_io_cap` → `adapter_set_io_capability`): without
    /// `AlwaysPairable`, the adapter is bondable exactly while there is one.
    package mutating func defaultAgentChanged(present: Bool) -> [String] {
        setPairable(present)
    }

    /// When `Discoverable` must turn off again, if it must.
    package var discoverableDeadline: Duration? {
        discoverable && discoverableTimeout > 0 ? .seconds(Int(discoverableTimeout)) : nil
    }

    package var pairableDeadline: Duration? {
        pairable && pairableTimeout > 0 ? .seconds(Int(pairableTimeout)) : nil
    }
}
