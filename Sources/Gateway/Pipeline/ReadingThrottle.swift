import Configuration
import Decoders

/// Per device, which readings are published: `only_on_change` drops a reading whose values equal
/// the last published one, `min_interval` one that comes sooner than the interval after the last
/// published one. Kept per source (a characteristic, or advertisements), since each carries
/// different fields. Pure: the caller passes the time from its clock.
struct ReadingThrottle<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    struct Policy: Sendable, Equatable {
        var onlyOnChange = false
        var minInterval: Duration?

        var isInactive: Bool { !onlyOnChange && minInterval == nil }
    }

    /// Fields that change on every advertisement without the measurement changing.
    static var volatileFields: Set<String> { ["packet_id", "encryption_counter", "rssi"] }

    private struct Key: Hashable {
        let device: String
        let source: String
    }

    private struct Published: Sendable {
        var values: [String: DecodedValue]
        var time: Instant
    }

    var policies: [String: Policy]
    private var last: [Key: Published] = [:]

    init(policies: [String: Policy] = [:]) {
        self.policies = policies
    }

    /// Whether a reading of `device` from `source` (nil: an advertisement) at `now` is published;
    /// when it is, it becomes the one later readings are compared with. A reading that carries an
    /// event (a button press: kind ``FieldKind/Component/event``) is always published: a second
    /// press like the first is a new press, not an unchanged value.
    mutating func admit(device: String, source: String?, fields: [DecodedField], now: Instant) -> Bool {
        // Without any policy (the usual case) no lookup: hashing the device id cost every reading.
        guard !policies.isEmpty, let policy = policies[device], !policy.isInactive else { return true }
        let key = Key(device: device, source: source ?? "")
        var values: [String: DecodedValue] = [:]
        for field in fields where !Self.volatileFields.contains(field.name) { values[field.name] = field.value }
        if let previous = last[key], !fields.contains(where: { $0.kind.component == .event }) {
            if let interval = policy.minInterval, previous.time.duration(to: now) < interval { return false }
            if policy.onlyOnChange, previous.values == values { return false }
        }
        last[key] = Published(values: values, time: now)
        return true
    }

    /// A reloaded configuration: new policies; devices no longer throttled are forgotten.
    mutating func update(policies: [String: Policy]) {
        self.policies = policies
        last = last.filter { policies[$0.key.device].map { !$0.isInactive } ?? false }
    }
}

extension ReadingThrottle {
    /// The policy of every configured device that has one.
    static func policies(_ configuration: BridgeConfiguration) -> [String: Policy] {
        var policies: [String: Policy] = [:]
        for device in configuration.devices {
            let policy = Policy(onlyOnChange: device.onlyOnChange, minInterval: device.minInterval)
            if !policy.isInactive { policies[device.id] = policy }
        }
        return policies
    }
}
