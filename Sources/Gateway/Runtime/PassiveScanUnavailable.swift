/// `bluetooth.scan.mode` `"passive"` cannot be honoured: the gateway refuses to start rather than
/// scan actively (docs/configuration.md). `code` names the reason; `description` what is missing.
package struct PassiveScanUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// Bluetooth (the bus, bluetoothd or the adapter) was not there to ask.
        case adapterUnavailable = "adapter_unavailable"
        /// No `AdvertisementMonitorManager1`, or one without `or_patterns`.
        case monitorUnsupported = "monitor_unsupported"
        /// bluetoothd 5.69 or 5.70, whose advertisement monitors report nothing the gateway
        /// listens for (``PassiveScanVersionPolicy``).
        case bluetoothdUnsupported = "bluetoothd_unsupported"
        /// Nothing configured advertises data an or-pattern can match.
        case noPatterns = "no_patterns"
        /// bluetoothd refused the registration, released a monitor before activating it, or did
        /// not activate them in time.
        case monitorRejected = "monitor_rejected"
    }

    package let code: Code
    package let detail: String

    package var description: String {
        "bluetooth.scan.mode \"passive\" cannot be used (\(code.rawValue)): \(detail); "
            + "set bluetooth.scan.mode to \"active\""
    }
}
