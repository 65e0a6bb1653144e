import Foundation
import JSON

/// What the gateway knows about its Bluetooth side: for `bridge/health` (`bluetooth`), the Home
/// Assistant "Bluetooth" problem sensor, systemd's `STATUS=` and the log line that says what to fix.
/// A pure value: ``BLELink`` fills it in from the bus, BlueZ's name owner and the adapter's state.
package struct BluetoothHealth: Sendable, Hashable {
    /// Why Bluetooth cannot be used right now.
    package enum Problem: String, Sendable, Hashable, CaseIterable {
        /// The D-Bus bus (system bus or `--bus`) cannot be reached.
        case busUnavailable = "bus_unavailable"
        /// The bus refuses this user access to BlueZ (D-Bus policy), or never answers for it.
        case accessDenied = "access_denied"
        /// Nobody owns `org.bluez`: bluetoothd is not running.
        case bluezNotRunning = "bluez_not_running"
        /// bluetoothd owns `org.bluez` but did not answer for its objects (`GetManagedObjects` timed
        /// out or failed); the gateway keeps asking.
        case bluezNotResponding = "bluez_not_responding"
        /// bluetoothd runs, but the configured adapter does not exist.
        case adapterMissing = "adapter_missing"
        /// The adapter exists and is powered off (or blocked by rfkill).
        case adapterPoweredOff = "adapter_powered_off"
        /// `bluetooth.scan.mode` `"passive"` ran, and the adapter no longer shows
        /// `AdvertisementMonitorManager1` (bluetoothd restarted without `-E`); at start the same
        /// stops the gateway (exit 78, ``PassiveScanUnavailable``).
        case monitorUnsupported = "monitor_unsupported"
        /// Not known yet (the gateway is still asking BlueZ).
        case starting
    }

    /// The configured adapter (`hci0`).
    package var adapter: String
    /// Whether BlueZ exports the adapter.
    package var adapterPresent: Bool
    /// Whether the adapter is powered on.
    package var powered: Bool
    /// The unique bus name owning `org.bluez` (bluetoothd), nil when none does.
    package var bluezOwner: String?
    /// The last error met talking to the bus or BlueZ (kept after recovery, for the record).
    package var lastError: String?
    /// Why Bluetooth is unusable; nil when it is usable.
    package var problem: Problem?
    /// The user the gateway runs as (named in the advice when the bus refuses it); nil if unknown.
    package var user: String?

    package init(
        adapter: String, adapterPresent: Bool = false, powered: Bool = false, bluezOwner: String? = nil,
        lastError: String? = nil, problem: Problem? = .starting, user: String? = nil
    ) {
        self.adapter = adapter
        self.adapterPresent = adapterPresent
        self.powered = powered
        self.bluezOwner = bluezOwner
        self.lastError = lastError
        self.problem = problem
        self.user = user
    }

    /// The kind of the last error: its D-Bus error name or code, the text before the first ": ".
    /// The rest may differ on every attempt (dbus-daemon names the refused connection's unique name),
    /// so a change of the problem or of this, not of the full text, is worth a log line.
    package var lastErrorKind: String? {
        lastError.map { text in text.range(of: ": ").map { String(text[..<$0.lowerBound]) } ?? text }
    }

    /// Whether scanning and connecting are possible.
    package var isAvailable: Bool { problem == nil }

    /// What to do about the problem, in words an operator can act on; nil when Bluetooth is usable.
    package var advice: String? {
        switch problem {
        case nil, .starting?:
            nil
        case .busUnavailable?:
            "the D-Bus system bus cannot be reached: is dbus running, and is --bus / bluetooth.bus right?"
        case .accessDenied?:
            Self.accessAdvice(user: user)
        case .bluezNotRunning?:
            "bluetoothd is not running: systemctl enable --now bluetooth.service"
        case .bluezNotResponding?:
            "bluetoothd runs but does not answer for its objects (GetManagedObjects): it is stuck, often on "
                + "its controller; see journalctl -u bluetooth and dmesg. The gateway asks again by itself (at most "
                + "15 s apart); if it persists, systemctl restart bluetooth.service (and check the dongle or UART)"
        case .adapterMissing?:
            "bluetoothd has no adapter \(adapter): check bluetoothctl list, the dongle or UART, and bluetooth.adapter"
        case .adapterPoweredOff?:
            "adapter \(adapter) is powered off: rfkill unblock bluetooth, then bluetoothctl power on "
                + "(AutoEnable=true in /etc/bluetooth/main.conf powers it at boot)"
        case .monitorUnsupported?:
            "bluetoothd offers no org.bluez.AdvertisementMonitorManager1 on \(adapter), which "
                + "bluetooth.scan.mode \"passive\" needs: run bluetoothd with -E (--experimental) or set "
                + "Experimental = true in [General] of /etc/bluetooth/main.conf, then restart bluetooth.service; "
                + "passive scanning resumes by itself when it is back"
        }
    }

    /// What to fix when the bus refuses `user` access to org.bluez. BlueZ's policy allows root and
    /// the 'bluetooth' group (Debian's and Raspberry Pi OS's bluetooth.conf also everyone), so a
    /// refusal comes from a missing group or a local `<deny>` rule. dbus-daemon applies a policy
    /// file after a reload to new connections, which the gateway's retries open; a process's groups
    /// only change when it is restarted.
    static func accessAdvice(user: String?) -> String {
        let who = user.map { "user '\($0)'" } ?? "this user"
        return "the D-Bus policy refuses \(who) access to org.bluez. Either (1) \(who) is not in "
            + "the 'bluetooth' group, which BlueZ's bluetooth.conf allows: add it (the packaged unit sets "
            + "SupplementaryGroups=bluetooth) and restart the gateway; or (2) a rule in /etc/dbus-1/system.d/ or "
            + "/usr/share/dbus-1/system.d/ denies it (<deny send_destination=\"org.bluez\"/> in a <policy> for this "
            + "user or one of its groups): remove it and run 'systemctl reload dbus'; the gateway retries by itself "
            + "(its retries are at most 8 s apart)"
    }

    /// The Bluetooth part of systemd's `STATUS=` line (``ServiceStatus``): short, with the problem's
    /// name as in `bridge/health`; the log line carries the full ``advice``.
    package var statusText: String {
        switch problem {
        case nil: "Bluetooth ready (\(adapter))"
        case .starting?: "Bluetooth starting (\(adapter))"
        case let problem?: "Bluetooth unavailable (\(problem.rawValue)): \(Self.hint(problem, adapter: adapter))"
        }
    }

    static func hint(_ problem: Problem, adapter: String) -> String {
        switch problem {
        case .busUnavailable: "D-Bus bus unreachable, retrying"
        case .accessDenied: "the D-Bus policy denies this user org.bluez (group bluetooth? a deny rule?), retrying"
        case .bluezNotRunning: "bluetoothd not running"
        case .bluezNotResponding: "bluetoothd not answering, retrying"
        case .adapterMissing: "no adapter \(adapter)"
        case .adapterPoweredOff: "\(adapter) powered off or rfkill-blocked"
        case .monitorUnsupported: "no advertisement monitors for passive scanning (bluetoothd without -E)"
        case .starting: "starting"
        }
    }

    /// The `bluetooth` member of `bridge/health`.
    package var json: JSONValue {
        .object([
            JSONMember("available", .bool(isAvailable)),
            JSONMember("problem", problem.map { .string($0.rawValue) } ?? .null),
            JSONMember("adapter", .string(adapter)),
            JSONMember("adapter_present", .bool(adapterPresent)),
            JSONMember("powered", .bool(powered)),
            JSONMember("bluez_owner", bluezOwner.map { .string($0) } ?? .null),
            JSONMember("last_error", lastError.map { .string($0) } ?? .null),
        ])
    }
}
