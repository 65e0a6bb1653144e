/// The adapter's discovery sessions and power, with the rules of bluetoothd's `src/adapter.c` (5.66).
///
/// Pure: methods return what changed; the caller emits signals and starts or stops the scan.
package struct AdapterState: Sendable, Equatable {
    /// What a call changed.
    package enum Effect: Sendable, Equatable {
        /// `Discovering` changed; when it became false the caller invalidates RSSI/TxPower of the devices
        /// found and removes temporary non-connectable ones (`discovery_cleanup`).
        case discoveringChanged(Bool)
        /// `Powered` changed; when false the caller drops every connection.
        case poweredChanged(Bool)
        /// The merged filter changed while discovering.
        case filterChanged
    }

    package private(set) var powered: Bool
    /// Clients with an active discovery session, and their filter (nil: no filter).
    package private(set) var sessions: [String: DiscoveryFilter?] = [:]
    /// Filters set before StartDiscovery.
    package private(set) var presetFilters: [String: DiscoveryFilter] = [:]

    package init(powered: Bool) { self.powered = powered }

    package var discovering: Bool { !sessions.isEmpty }

    /// The filters of every active session (nil entries: sessions without a filter, which match everything).
    package var activeFilters: [DiscoveryFilter?] { Array(sessions.values) }

    /// True when some session set a filter: then RSSI changes are reported without the 8 dBm delta
    /// threshold and, with DuplicateData, every advertisement re-emits ManufacturerData/ServiceData.
    package var filtered: Bool { sessions.values.contains { $0 != nil } }
    package var duplicateData: Bool { sessions.values.contains { $0?.duplicateData ?? false } }

    package mutating func startDiscovery(sender: String) throws(BlueZError) -> [Effect] {
        guard powered else { throw BlueZError.notReady }
        if sessions[sender] != nil { throw BlueZError.busy }
        let wasDiscovering = discovering
        sessions[sender] = .some(presetFilters.removeValue(forKey: sender))
        return wasDiscovering ? [.filterChanged] : [.discoveringChanged(true)]
    }

    package mutating func stopDiscovery(sender: String) throws(BlueZError) -> [Effect] {
        guard powered else { throw BlueZError.notReady }
        guard sessions[sender] != nil else { throw BlueZError.failed("No discovery started") }
        return endSession(sender)
    }

    package mutating func setDiscoveryFilter(sender: String, _ filter: DiscoveryFilter?) throws(BlueZError) -> [Effect]
    {
        guard powered else { throw BlueZError.notReady }
        if sessions[sender] != nil {
            sessions[sender] = .some(filter)
            return [.filterChanged]
        }
        if let filter { presetFilters[sender] = filter } else { presetFilters[sender] = nil }
        return []
    }

    /// A client left the bus: its session and preset filter go (`discovery_disconnect`).
    package mutating func clientVanished(_ sender: String) -> [Effect] {
        presetFilters[sender] = nil
        guard sessions[sender] != nil else { return [] }
        return endSession(sender)
    }

    private mutating func endSession(_ sender: String) -> [Effect] {
        sessions[sender] = nil
        return discovering ? [.filterChanged] : [.discoveringChanged(false)]
    }

    package mutating func setPowered(_ on: Bool) -> [Effect] {
        guard on != powered else { return [] }
        powered = on
        guard !on else { return [.poweredChanged(true)] }
        // Powering off ends every discovery session (clients must StartDiscovery again).
        let wasDiscovering = discovering
        sessions = [:]
        return wasDiscovering ? [.discoveringChanged(false), .poweredChanged(false)] : [.poweredChanged(false)]
    }

    /// Whether an advertisement from a device passes at least one active session's filter.
    package func reports(_ check: (DiscoveryFilter) -> Bool) -> Bool {
        sessions.values.contains { filter in filter.map(check) ?? true }
    }
}
