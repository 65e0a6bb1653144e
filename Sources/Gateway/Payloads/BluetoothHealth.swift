import Foundation
import JSON

/// What the gateway knows about its Bluetooth side: for `bridge/health` (`bluetooth`), the Home
/// Assistant "Bluetooth" problem sensor, systemd's `STATUS=` and the log line that says what to fix.
/// A pure value: ``BLELink`` fills it in from the bus, BlueZ's name owner and the adapter's state.
public struct BluetoothHealth: Sendable, Hashable {
    /// Why Bluetooth cannot be used right now.
    public enum Problem: String, Sendable, Hashable, CaseIterable {
        /// The D-Bus bus (system bus or `--bus`) cannot be reached.
        case busUnavailable = "bus_unavailable"
        /// The bus refuses this user access to BlueZ (D-Bus policy), or never answers for it.
        case accessDenied = "access_denied"
        /// Nobody owns `org.bluez`: bluetoothd is not running.
        case bluezNotRunning = "bluez_not_running"
        /// bluetoothd runs, but the configured adapter does not exist.
        case adapterMissing = "adapter_missing"
        /// The adapter exists and is powered off (or blocked by rfkill).
        case adapterPoweredOff = "adapter_powered_off"
        /// Not known yet (the gateway is still asking BlueZ).
        case starting
    }

    /// The configured adapter (`hci0`).
    public var adapter: String
    /// Whether BlueZ exports the adapter.
    public var adapterPresent: Bool
    /// Whether the adapter is powered on.
    public var powered: Bool
    /// The unique bus name owning `org.bluez` (bluetoothd), nil when none does.
    public var bluezOwner: String?
    /// The last error met talking to the bus or BlueZ (kept after recovery, for the record).
    public var lastError: String?
    /// Why Bluetooth is unusable; nil when it is usable.
    public var problem: Problem?

    public init(
        adapter: String, adapterPresent: Bool = false, powered: Bool = false, bluezOwner: String? = nil,
        lastError: String? = nil, problem: Problem? = .starting
    ) {
        self.adapter = adapter
        self.adapterPresent = adapterPresent
        self.powered = powered
        self.bluezOwner = bluezOwner
        self.lastError = lastError
        self.problem = problem
    }

    /// Whether scanning and connecting are possible.
    public var isAvailable: Bool { problem == nil }

    /// What to do about the problem, in words an operator can act on; nil when Bluetooth is usable.
    public var advice: String? {
        switch problem {
        case nil, .starting?:
            nil
        case .busUnavailable?:
            "the D-Bus system bus cannot be reached: is dbus running, and is --bus / bluetooth.bus right?"
        case .accessDenied?:
            "the D-Bus policy refuses this user access to org.bluez: run the service as a member of the "
                + "'bluetooth' group (SupplementaryGroups=bluetooth) or as root, and check "
                + "/etc/dbus-1/system.d/bluetooth.conf"
        case .bluezNotRunning?:
            "bluetoothd is not running: systemctl enable --now bluetooth.service"
        case .adapterMissing?:
            "bluetoothd has no adapter \(adapter): check bluetoothctl list, the dongle or UART, and bluetooth.adapter"
        case .adapterPoweredOff?:
            "adapter \(adapter) is powered off: rfkill unblock bluetooth, then bluetoothctl power on "
                + "(AutoEnable=true in /etc/bluetooth/main.conf powers it at boot)"
        }
    }

    /// The Bluetooth part of systemd's `STATUS=` line (``ServiceStatus``): short, with the problem's
    /// name as in `bridge/health`; the log line carries the full ``advice``.
    public var statusText: String {
        switch problem {
        case nil: "Bluetooth ready (\(adapter))"
        case .starting?: "Bluetooth starting (\(adapter))"
        case let problem?: "Bluetooth unavailable (\(problem.rawValue)): \(Self.hint(problem, adapter: adapter))"
        }
    }

    static func hint(_ problem: Problem, adapter: String) -> String {
        switch problem {
        case .busUnavailable: "D-Bus bus unreachable, retrying"
        case .accessDenied: "access to org.bluez denied (user not in group bluetooth?), retrying"
        case .bluezNotRunning: "bluetoothd not running"
        case .adapterMissing: "no adapter \(adapter)"
        case .adapterPoweredOff: "\(adapter) powered off or rfkill-blocked"
        case .starting: "starting"
        }
    }

    /// The `bluetooth` member of `bridge/health`.
    public var json: JSONValue {
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
