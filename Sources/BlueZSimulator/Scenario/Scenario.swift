import Bluetooth
import Foundation
import JSON

/// A simulated world: one adapter, the peripherals around it, timing, and optional load mode.
///
/// Loaded from JSON (see `docs/simulator.md`); unknown keys are errors.
public struct Scenario: Sendable, Equatable, Decodable {
    package var name: String
    package var description: String
    package var adapter: ScenarioAdapter
    /// A second adapter another program scans with (`hci1`): it hears the same devices, and its
    /// device objects (`/org/bluez/hci1/dev_…`) are read-only. Nil: one adapter.
    package var secondAdapter: ScenarioAdapter?
    package var timing: ScenarioTiming
    package var devices: [ScenarioDevice]
    package var load: ScenarioLoad?
    /// Devices walking by (random private addresses that come and go); nil: none.
    package var passing: ScenarioPassing?

    package init(
        name: String, description: String = "", adapter: ScenarioAdapter = ScenarioAdapter(),
        timing: ScenarioTiming = ScenarioTiming(), devices: [ScenarioDevice], load: ScenarioLoad? = nil,
        secondAdapter: ScenarioAdapter? = nil, passing: ScenarioPassing? = nil
    ) {
        self.name = name
        self.description = description
        self.adapter = adapter
        self.secondAdapter = secondAdapter
        self.timing = timing
        self.devices = devices
        self.load = load
        self.passing = passing
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, description, adapter, timing, devices, load, passing
        case secondAdapter = "second_adapter"
    }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        description = try container.decodeIfPresent(String.self, forKey: .description) ?? ""
        adapter = try container.decodeIfPresent(ScenarioAdapter.self, forKey: .adapter) ?? ScenarioAdapter()
        secondAdapter = try container.decodeIfPresent(ScenarioAdapter.self, forKey: .secondAdapter)
        if let secondAdapter, secondAdapter.id == adapter.id {
            throw container.invalid(
                .secondAdapter, "second adapter \"\(secondAdapter.id)\" has the first one's id; expected another hciN")
        }
        timing = try container.decodeIfPresent(ScenarioTiming.self, forKey: .timing) ?? ScenarioTiming()
        devices = try container.decodeIfPresent([ScenarioDevice].self, forKey: .devices) ?? []
        load = try container.decodeIfPresent(ScenarioLoad.self, forKey: .load)
        passing = try container.decodeIfPresent(ScenarioPassing.self, forKey: .passing)
        var seen: Set<String> = []
        for (index, device) in devices.enumerated() {
            guard seen.insert(device.address.string).inserted else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: [
                            CodingKeys.devices, JSONKey(intValue: index), JSONKey("address"),
                        ],
                        debugDescription: "duplicate address \(device.address); every device needs its own"))
            }
        }
    }
}

/// The local adapter (`/org/bluez/hci0`).
package struct ScenarioAdapter: Sendable, Equatable, Decodable {
    package var id: String
    package var address: String
    package var name: String
    package var powered: Bool
    /// Whether bluetoothd offers `org.bluez.AdvertisementMonitorManager1` on the adapter.
    package var advertisementMonitor: AdvertisementMonitorMode
    /// How bluetoothd's software filter compares a monitor's patterns (`"software"` only; the
    /// controller of `"controller"` always reads whole structures): as 5.66 (the default) or as
    /// 5.71 and later, whose service-data patterns start after the UUID.
    package var monitorMatching: AdvertisementPattern.Matching
    /// What bluetoothd answers a request whose security raise the peer refused (a device with
    /// `refuses_pairing`): as 5.66 (the default) or as 5.82, which never answers it.
    package var refusedRaiseAnswer: RefusedRaiseAnswer

    /// `adapter.advertisement_monitor`.
    package enum AdvertisementMonitorMode: String, Sendable, Equatable, CaseIterable {
        /// No manager: bluetoothd without experimental features (`-E`), as Debian 12's stock
        /// service and the reference captures; or a BlueZ older than the API.
        case absent
        /// The manager, filtering in software (a kernel with pattern monitors, no controller
        /// offload): `DeviceFound` for every matching advertisement.
        case software
        /// The manager with `SupportedFeatures` `controller-patterns` (Microsoft extension):
        /// `DeviceFound` once when the controller starts following a device, `DeviceLost` when it
        /// goes out of range.
        case controller
    }

    /// `adapter.refused_raise_answer`.
    package enum RefusedRaiseAnswer: String, Sendable, Equatable, CaseIterable {
        /// bluetoothd 5.66 (VM tier, 2026-12-02): `Failed` "Operation failed with ATT error: 0x0e" after
        /// the timing's `pairing_refusal_delay`, then the link drops.
        case attError = "att_error"
        /// bluetoothd 5.82 (VM tier, 2026-12-07): the link drops after `pairing_refusal_delay` (0.14 s
        /// measured) and the request is never answered; its caller's own time-out ends it.
        case none
    }

    package init(
        id: String = "hci0", address: String = "00:1A:7D:DA:71:13", name: String = "blebridge-sim",
        powered: Bool = true,
        advertisementMonitor: AdvertisementMonitorMode = .absent,
        monitorMatching: AdvertisementPattern.Matching = .wholeStructure,
        refusedRaiseAnswer: RefusedRaiseAnswer = .attError
    ) {
        self.id = id
        self.address = address
        self.name = name
        self.powered = powered
        self.advertisementMonitor = advertisementMonitor
        self.monitorMatching = monitorMatching
        self.refusedRaiseAnswer = refusedRaiseAnswer
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, address, name, powered
        case advertisementMonitor = "advertisement_monitor"
        case monitorMatching = "monitor_matching"
        case refusedRaiseAnswer = "refused_raise_answer"
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ScenarioAdapter()
        id = try container.decodeIfPresent(String.self, forKey: .id) ?? defaults.id
        guard id.hasPrefix("hci"), Int(id.dropFirst(3)) != nil else {
            throw container.invalid(.id, "invalid adapter id \"\(id)\"; expected hci0, hci1, …")
        }
        address =
            try container.decodeParsedIfPresent(String.self, forKey: .address, accepted: ScenarioParsing.addressForm) {
                ScenarioParsing.address($0)?.string
            } ?? defaults.address
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? defaults.name
        powered = try container.decodeIfPresent(Bool.self, forKey: .powered) ?? defaults.powered
        /// The named case of a string-valued choice, or `fallback` when the key is absent.
        func choice<Choice: RawRepresentable & CaseIterable>(_ key: CodingKeys, _ fallback: Choice) throws -> Choice
        where Choice.RawValue == String {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return fallback }
            guard let chosen = Choice(rawValue: text) else {
                let accepted = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                throw container.invalid(key, "invalid \(key.rawValue) \"\(text)\"; expected \(accepted)")
            }
            return chosen
        }
        advertisementMonitor = try choice(.advertisementMonitor, defaults.advertisementMonitor)
        monitorMatching = try choice(.monitorMatching, defaults.monitorMatching)
        refusedRaiseAnswer = try choice(.refusedRaiseAnswer, defaults.refusedRaiseAnswer)
    }
}

/// How fast the simulated world moves.
package struct ScenarioTiming: Sendable, Equatable, Decodable {
    /// Time between advertisements of each device while discovering.
    package var advertisingInterval: Duration
    /// A device not seen for this long (out of range, or discovery stopped) is removed unless connected or paired.
    package var staleTimeout: Duration
    /// Time from `Connect` to `Connected` becoming true.
    package var connectDelay: Duration
    /// Time from `Connected` to `ServicesResolved` (GATT discovery).
    package var resolveDelay: Duration
    /// How long a hopeless connect attempt (device out of range or not connectable, or a `timeout`
    /// fault) hangs before failing. Default 41 s: what bluetoothd 5.66 on Linux 6.1 took for an
    /// out-of-range LE device (issue 16); tests shorten it explicitly.
    package var connectTimeout: Duration
    /// The ATT MTU negotiated on every connection (the `MTU` property).
    package var mtu: UInt16
    /// How long a device that refuses pairing (`refuses_pairing`) takes to fail it: from the security
    /// raise or `Pair` to the error and the link's drop. Default 1 s: bluetoothd 5.66 answered a refused
    /// pairing after 0.98, 1.15 and 1.17 s in the VM tier (issue 16).
    package var pairingRefusalDelay: Duration
    /// How long bluetoothd takes from SIGTERM to releasing `org.bluez` (``BluezStop/terminate``): it powers
    /// its adapters off first (the links drop), then removes its objects.
    package var terminateDelay: Duration

    package init(
        advertisingInterval: Duration = .seconds(1), staleTimeout: Duration = .seconds(30),
        connectDelay: Duration = .milliseconds(30), resolveDelay: Duration = .milliseconds(40),
        connectTimeout: Duration = .seconds(41), mtu: UInt16 = 247, pairingRefusalDelay: Duration = .seconds(1),
        terminateDelay: Duration = .milliseconds(100)
    ) {
        self.advertisingInterval = advertisingInterval
        self.staleTimeout = staleTimeout
        self.connectDelay = connectDelay
        self.resolveDelay = resolveDelay
        self.connectTimeout = connectTimeout
        self.mtu = mtu
        self.pairingRefusalDelay = pairingRefusalDelay
        self.terminateDelay = terminateDelay
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case advertisingInterval = "advertising_interval"
        case staleTimeout = "stale_timeout"
        case connectDelay = "connect_delay"
        case resolveDelay = "resolve_delay"
        case connectTimeout = "connect_timeout"
        case mtu
        case pairingRefusalDelay = "pairing_refusal_delay"
        case terminateDelay = "terminate_delay"
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ScenarioTiming()
        func duration(_ key: CodingKeys, _ fallback: Duration) throws -> Duration {
            try container.decodeIfPresent(ScenarioDuration.self, forKey: key)?.duration ?? fallback
        }
        advertisingInterval = try duration(.advertisingInterval, defaults.advertisingInterval)
        guard advertisingInterval >= .milliseconds(10) else {
            throw container.invalid(
                .advertisingInterval, "advertising interval below 10 ms; expected at least \"10ms\"")
        }
        staleTimeout = try duration(.staleTimeout, defaults.staleTimeout)
        connectDelay = try duration(.connectDelay, defaults.connectDelay)
        resolveDelay = try duration(.resolveDelay, defaults.resolveDelay)
        connectTimeout = try duration(.connectTimeout, defaults.connectTimeout)
        pairingRefusalDelay = try duration(.pairingRefusalDelay, defaults.pairingRefusalDelay)
        terminateDelay = try duration(.terminateDelay, defaults.terminateDelay)
        mtu = try container.decodeIfPresent(UInt16.self, forKey: .mtu) ?? defaults.mtu
        guard (23...517).contains(mtu) else {
            throw container.invalid(.mtu, "invalid MTU \(mtu); expected 23…517")
        }
    }
}

/// Load mode: `devices` extra peripherals, each notifying `rate` times a second with a timestamped value.
package struct ScenarioLoad: Sendable, Equatable, Decodable {
    package var devices: Int
    package var rate: Double

    package init(devices: Int, rate: Double) {
        self.devices = devices
        self.rate = rate
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case devices, rate }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        devices = try container.decode(Int.self, forKey: .devices)
        guard (1...LoadDevices.maximumDevices).contains(devices) else {
            throw container.invalid(
                .devices, "invalid device count \(devices); expected 1…\(LoadDevices.maximumDevices)")
        }
        rate = try container.decode(Double.self, forKey: .rate)
        guard rate > 0, rate <= 10_000 else {
            throw container.invalid(
                .rate, "invalid rate \(rate); expected notifications per second per device, 0 < rate ≤ 10000")
        }
    }
}
