import DBus

/// What an adapter's `org.bluez.AdvertisementMonitorManager1` offers: BlueZ exposes the interface
/// only when bluetoothd runs with experimental features (`-E`, or `Experimental = true` in
/// main.conf); `SupportedMonitorTypes` lists `or_patterns` only when the kernel's management
/// interface can add pattern monitors (from about Linux 5.10); `SupportedFeatures` lists
/// `controller-patterns` when the controller filters in hardware (Microsoft vendor extension).
public enum AdvertisementMonitorSupport: Sendable, Equatable {
    /// No `AdvertisementMonitorManager1` on the adapter.
    case noManager
    /// The manager is there but cannot take or-pattern monitors; the types it names.
    case noOrPatterns(supportedTypes: [String])
    /// Or-pattern monitors can be registered; the features it names.
    case orPatterns(features: [String])

    /// From the manager's properties (nil when the adapter has no such interface).
    package init(manager properties: [String: DBusValue]?) {
        guard let properties else {
            self = .noManager
            return
        }
        let types = properties["SupportedMonitorTypes"]?.asStrings ?? []
        guard types.contains("or_patterns") else {
            self = .noOrPatterns(supportedTypes: types)
            return
        }
        self = .orPatterns(features: properties["SupportedFeatures"]?.asStrings ?? [])
    }

    /// What is missing, for the error at start; nil when nothing is.
    public var missing: String? {
        switch self {
        case .noManager:
            "the adapter has no org.bluez.AdvertisementMonitorManager1 "
                + "(bluetoothd offers it only with experimental features: -E, or Experimental = true in main.conf)"
        case .noOrPatterns(let types):
            "the adapter's AdvertisementMonitorManager1 does not support or_patterns (SupportedMonitorTypes: "
                + (types.isEmpty ? "none" : types.joined(separator: ", "))
                + "; the kernel must be able to add pattern monitors, from about Linux 5.10)"
        case .orPatterns: nil
        }
    }
}
