import Bluetooth
import DBus

/// The advertisement monitor applications registered with the simulated
/// `org.bluez.AdvertisementMonitorManager1`, as bluetoothd 5.66 keeps them (src/adv_monitor.c):
/// one application per sender and root path, its `org.bluez.AdvertisementMonitor1` objects below
/// the root, each with its or-patterns. Pure: the bus calls are the caller's.
struct MonitorRegistry: Sendable {
    /// One monitor object of an application.
    struct Monitor: Sendable, Equatable {
        var patterns: [AdvertisementPattern]
        var active = false
        /// Devices the controller follows for this monitor (offloaded monitoring only).
        var tracking: Set<String> = []
    }

    struct Application: Sendable, Equatable {
        var owner: String
        var root: String
        var monitors: [String: Monitor] = [:]
    }

    /// A monitor of an application: where `DeviceFound`/`DeviceLost` go.
    struct Target: Sendable, Hashable {
        var owner: String
        var path: String
    }

    private(set) var applications: [Application] = []

    /// `RegisterMonitor`: a root must be an absolute path, once per sender
    /// (`org.bluez.Error.InvalidArguments`, `org.bluez.Error.AlreadyExists`).
    mutating func register(owner: String, root: String) throws(BlueZError) {
        guard root.hasPrefix("/") else { throw BlueZError.invalidArguments }
        guard !applications.contains(where: { $0.owner == owner && $0.root == root }) else {
            throw BlueZError.alreadyExists
        }
        applications.append(Application(owner: owner, root: root))
    }

    /// `UnregisterMonitor`: the application's monitors, to be released
    /// (`org.bluez.Error.DoesNotExist` for a root this sender did not register).
    mutating func unregister(owner: String, root: String) throws(BlueZError) -> [Target] {
        guard root.hasPrefix("/") else { throw BlueZError.invalidArguments }
        guard let index = applications.firstIndex(where: { $0.owner == owner && $0.root == root }) else {
            throw BlueZError.doesNotExist
        }
        let application = applications.remove(at: index)
        return application.monitors.keys.sorted().map { Target(owner: owner, path: $0) }
    }

    /// The sender left the bus: its applications go, without `Release` (nobody to call).
    mutating func ownerVanished(_ owner: String) {
        applications.removeAll { $0.owner == owner }
    }

    /// What becomes of a monitor object the application exports.
    enum Outcome: Sendable, Equatable {
        /// Valid: bluetoothd calls `Activate` once the kernel took its patterns.
        case activate
        /// Invalid content: bluetoothd calls `Release` and forgets it.
        case release
        /// Not a monitor of this application (outside its root, or known already).
        case ignore
    }

    /// A monitor object appeared under an application's root (from its `GetManagedObjects` or an
    /// `InterfacesAdded`) with these `AdvertisementMonitor1` properties.
    mutating func monitorAdded(owner: String, root: String, path: String, properties: [String: DBusValue]) -> Outcome {
        guard let index = applications.firstIndex(where: { $0.owner == owner && $0.root == root }),
            path.hasPrefix(root), applications[index].monitors[path] == nil
        else { return .ignore }
        guard let patterns = Self.patterns(properties) else { return .release }
        applications[index].monitors[path] = Monitor(patterns: patterns, active: true)
        return .activate
    }

    /// The monitor object went (`InterfacesRemoved`): it was active and is released.
    mutating func monitorRemoved(owner: String, path: String) -> Bool {
        for index in applications.indices where applications[index].owner == owner {
            if applications[index].monitors.removeValue(forKey: path) != nil { return true }
        }
        return false
    }

    var isMonitoring: Bool { applications.contains { !$0.monitors.isEmpty } }

    /// The active monitors whose patterns match an advertisement's structures, compared as
    /// `matching` says (bluetoothd 5.66 or 5.71 and later).
    func matching(_ structures: [ADStructure], _ matching: AdvertisementPattern.Matching = .wholeStructure) -> [Target]
    {
        var targets: [Target] = []
        for application in applications {
            for (path, monitor) in application.monitors.sorted(by: { $0.key < $1.key })
            where monitor.active && AdvertisementPattern.anyMatches(monitor.patterns, structures, matching) {
                targets.append(Target(owner: application.owner, path: path))
            }
        }
        return targets
    }

    /// Offloaded monitoring: the controller starts following `device` for `target`; true the
    /// first time (one `DeviceFound`).
    mutating func startTracking(_ device: String, for target: Target) -> Bool {
        guard let index = applications.firstIndex(where: { $0.owner == target.owner }),
            applications[index].monitors[target.path] != nil
        else { return false }
        return applications[index].monitors[target.path]!.tracking.insert(device).inserted
    }

    /// Offloaded monitoring: `device` went out of range; the monitors that followed it (one
    /// `DeviceLost` each).
    mutating func stopTracking(_ device: String) -> [Target] {
        var targets: [Target] = []
        for index in applications.indices {
            for path in applications[index].monitors.keys.sorted()
            where applications[index].monitors[path]!.tracking.remove(device) != nil {
                targets.append(Target(owner: applications[index].owner, path: path))
            }
        }
        return targets
    }

    /// The most patterns one monitor of bluetoothd 5.66 can have: it sizes the kernel command in a
    /// `uint8_t` (1 + 34 bytes per pattern), so with 8 the length wraps and the kernel refuses the
    /// command. Measured on kernel 6.1 (Tests/VM/guest/scenario-passive-monitor.sh): 7 patterns
    /// activated; 8 gave `Failed to Add Adv Patterns Monitor with status 0x0d` and a `Release` in
    /// 6 of 7 runs, and once bluetoothd aborted on its overrun heap (not modelled).
    static let maximumPatterns = 7

    /// Reads a monitor's properties as `monitor_process` does: `Type` must be `or_patterns`; the
    /// RSSI thresholds and timeouts, when given, must have their types and ranges (-127…20 dBm,
    /// high ≥ low, 1…300 s, sampling period ≤ 255, or the unset values 127 / 0 / 256); `Patterns`
    /// must hold at least one valid pattern, and at most ``maximumPatterns``. Nil when bluetoothd
    /// would release the monitor.
    static func patterns(_ properties: [String: DBusValue]) -> [AdvertisementPattern]? {
        guard properties["Type"]?.unwrappedVariant.asString == "or_patterns", rssiValid(properties),
            case .array(_, let entries)? = properties["Patterns"]?.unwrappedVariant, !entries.isEmpty,
            entries.count <= maximumPatterns
        else { return nil }
        var patterns: [AdvertisementPattern] = []
        for entry in entries {
            guard case .structure(let fields) = entry, fields.count == 3, case .byte(let start) = fields[0],
                case .byte(let type) = fields[1], let content = fields[2].asBytes,
                let pattern = AdvertisementPattern(startPosition: start, adType: type, content: content)
            else { return nil }
            patterns.append(pattern)
        }
        return patterns
    }

    private static func rssiValid(_ properties: [String: DBusValue]) -> Bool {
        func int16(_ name: String, unset: Int16) -> Int16?? {
            guard let value = properties[name]?.unwrappedVariant else { return .some(unset) }
            if case .int16(let number) = value { return .some(number) }
            return .none
        }
        func uint16(_ name: String, unset: UInt16) -> UInt16?? {
            guard let value = properties[name]?.unwrappedVariant else { return .some(unset) }
            if case .uint16(let number) = value { return .some(number) }
            return .none
        }
        guard case .some(var high?) = int16("RSSIHighThreshold", unset: 127),
            case .some(var low?) = int16("RSSILowThreshold", unset: 127),
            case .some(var highTimeout?) = uint16("RSSIHighTimeout", unset: 0),
            case .some(var lowTimeout?) = uint16("RSSILowTimeout", unset: 0),
            case .some(let period?) = uint16("RSSISamplingPeriod", unset: 256)
        else { return false }
        if high == 127, low == 127, highTimeout == 0, lowTimeout == 0, period == 256 { return true }
        // bluetoothd fills in what was left unset, then checks the ranges.
        if low == 127 { low = -127 }
        if high == 127 { high = low }
        if lowTimeout == 0 { lowTimeout = 5 }
        if highTimeout == 0 { highTimeout = 10 }
        return (-127...20).contains(high) && (-127...20).contains(low) && high >= low
            && (1...300).contains(highTimeout) && (1...300).contains(lowTimeout) && (period == 256 || period <= 255)
    }
}
