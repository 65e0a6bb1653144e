import BlueZ
import Configuration
import Decoders

/// What bluetoothd's version means for `scan.mode` `"passive"` (docs/configuration.md, "What each
/// version gives"). Pure: the version comes from ``BluetoothdVersionProbe`` (nil when it could not
/// be told).
///
/// - 5.69 and 5.70 compare patterns only with the AD structures they do not parse out (service
///   data, manufacturer data, names and UUID lists are): nothing the gateway listens for is ever
///   reported, so the gateway refuses to start (`bluetoothd_unsupported`, exit 78).
/// - 5.71 and later compare a service-data pattern with the bytes after the UUID: the formats
///   without markers (``PassivePatternPlan/notSeenSince571``) are named in a warning.
/// - Before 5.69 (5.66 measured) every pattern works: no such warning.
/// - Unknown: as 5.71 and later, the warning saying that the version could not be told.
package enum PassiveScanVersionPolicy {
    /// What to do before registering the monitors.
    enum Verdict: Sendable, Equatable {
        /// Stop at start (exit 78).
        case refuse(PassiveScanUnavailable)
        /// Register the monitors; `warning` is the message for each format bluetoothd 5.71 and
        /// later do not report, nil when this bluetoothd reports them.
        case proceed(warning: String?)
    }

    /// The first version whose software filter parses service data, manufacturer data, names and
    /// UUID lists out of what patterns are compared with (BlueZ commit bc2ab4ba3).
    static let firstParsing = BluetoothdVersion(major: 5, minor: 69)
    /// The first version that compares service data and manufacturer data again, service data
    /// from the byte after the UUID (BlueZ commit b0656c2cf).
    static let firstAfterUUID = BluetoothdVersion(major: 5, minor: 71)

    /// The start of the warning, as docs/configuration.md names it.
    static let warningPrefix = "not seen in passive scanning by bluetoothd 5.71 and later"

    static func verdict(version: BluetoothdVersion?) -> Verdict {
        guard let version else {
            return .proceed(
                warning: warningPrefix
                    + " (Debian 13, Raspberry Pi OS trixie; this bluetoothd's version could not be determined)")
        }
        if version >= firstAfterUUID { return .proceed(warning: warningPrefix + " (this one is \(version))") }
        if version >= firstParsing {
            return .refuse(
                PassiveScanUnavailable(
                    code: .bluetoothdUnsupported,
                    detail: "bluetoothd \(version) never reports service data, manufacturer data, names or service "
                        + "UUID lists to advertisement monitors (5.69 and 5.70 filter them out); upgrade bluez to 5.71 "
                        + "or later (or 5.68 or earlier)"))
        }
        return .proceed(warning: nil)
    }

    /// What `check-config` says, without a bus to ask bluetoothd's version: in passive mode the
    /// formats bluetoothd 5.71 and later do not report, and that 5.69 and 5.70 are refused.
    package static func checkConfigNotes(
        _ configuration: BridgeConfiguration,
        decoders: [any AdvertisementDecoder] = DecoderRegistry.builtInAdvertisements
    ) -> [String] {
        guard configuration.bluetooth.scan.mode == .passive else { return [] }
        let plan = PassivePatternPlan(configuration: configuration, decoders: decoders)
        var notes = plan.notSeenSince571.map { "\(warningPrefix): \($0)" }
        notes.append(
            "bluetoothd 5.69 and 5.70 report nothing to advertisement monitors: blebridge run refuses \"passive\" "
                + "there (bluetoothd_unsupported), and checks bluetoothd's version at start")
        return notes
    }
}
