import Bluetooth
import JSON

/// Which value generator produces a characteristic's value or advertised data, and its parameters.
///
/// `{"kind": "heart_rate", "resting": 62}`; each kind accepts only its own parameters.
package struct ScenarioGenerator: Sendable, Equatable, Decodable {
    package enum Kind: String, Sendable, Equatable, CaseIterable {
        /// Heart Rate Measurement (0x2A37) with sensor contact and RR intervals.
        case heartRate = "heart_rate"
        /// A temperature drifting around `base` (°C) by up to `drift` over `period`.
        case temperature
        /// Relative humidity (%), ESS 0x2A6F format (uint16, 0.01 %).
        case humidity
        /// Pressure (Pa), ESS 0x2A6D format (uint32, 0.1 Pa).
        case pressure
        /// Battery Level (0x2A19), draining `drain_per_hour` percent per hour from `start`.
        case battery
        /// BTHome v2 service data (UUID fcd2): packet id, battery, temperature, humidity.
        case bthome
        /// Apple iBeacon manufacturer data (company 0x004c).
        case ibeacon
    }

    /// How temperature is encoded.
    package enum TemperatureFormat: String, Sendable, Equatable, CaseIterable {
        /// Health Thermometer (0x2A1C/0x2A1E): flags byte + IEEE-11073 32-bit FLOAT.
        case ieee11073
        /// Environmental Sensing Temperature (0x2A6E): sint16 in 0.01 °C.
        case ess
    }

    /// Sensor-contact bits in a heart-rate measurement.
    package enum Contact: String, Sendable, Equatable, CaseIterable {
        case detected, lost, unsupported, intermittent
    }

    package var kind: Kind
    package var resting: Double
    package var maximum: Double
    package var contact: Contact
    package var rrIntervals: Bool
    package var energy: Bool
    package var format: TemperatureFormat
    package var fahrenheit: Bool
    package var base: Double
    package var drift: Double
    package var period: Duration
    package var start: Double
    package var drainPerHour: Double
    package var humidity: Double
    package var proximityUUID: BluetoothUUID
    package var major: UInt16
    package var minor: UInt16
    package var measuredPower: Int8

    package init(kind: Kind) {
        self.kind = kind
        resting = 62
        maximum = 165
        contact = .detected
        rrIntervals = true
        energy = false
        format = .ess
        fahrenheit = false
        switch kind {
        case .humidity:
            base = 45
            drift = 4
        case .pressure:
            base = 101_325
            drift = 150
        case .temperature, .bthome:
            base = 21.5
            drift = 0.6
        default:
            base = 0
            drift = 0
        }
        period = .seconds(600)
        start = 100
        drainPerHour = 1
        humidity = 45
        proximityUUID = BluetoothUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")!
        major = 1
        minor = 1
        measuredPower = -59
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, resting, maximum, contact, energy, format, fahrenheit, base, drift, period, start, humidity, major,
            minor
        case rrIntervals = "rr_intervals"
        case drainPerHour = "drain_per_hour"
        case proximityUUID = "uuid"
        case measuredPower = "measured_power"
    }

    static func accepted(for kind: Kind) -> Set<CodingKeys> {
        switch kind {
        case .heartRate: [.kind, .resting, .maximum, .contact, .rrIntervals, .energy]
        case .temperature: [.kind, .format, .fahrenheit, .base, .drift, .period]
        case .humidity, .pressure: [.kind, .base, .drift, .period]
        case .battery: [.kind, .start, .drainPerHour]
        case .bthome: [.kind, .base, .drift, .period, .humidity, .start, .drainPerHour]
        case .ibeacon: [.kind, .proximityUUID, .major, .minor, .measuredPower]
        }
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decodeParsed(
            String.self, forKey: .kind, accepted: "one of " + Kind.allCases.map(\.rawValue).joined(separator: ", "),
            Kind.init(rawValue:))
        self.init(kind: kind)
        let accepted = Self.accepted(for: kind)
        for key in container.allKeys where !accepted.contains(key) {
            throw container.invalid(
                key,
                "\"\(key.stringValue)\" does not apply to kind \(kind.rawValue); accepted: "
                    + accepted.map(\.stringValue).sorted().joined(separator: ", "))
        }
        resting = try container.decodeIfPresent(Double.self, forKey: .resting) ?? resting
        maximum = try container.decodeIfPresent(Double.self, forKey: .maximum) ?? maximum
        if kind == .heartRate, !(25...300).contains(resting) || !(resting...300).contains(maximum) {
            throw container.invalid(.resting, "expected 25 ≤ resting ≤ maximum ≤ 300 beats per minute")
        }
        contact =
            try container.decodeParsedIfPresent(
                String.self, forKey: .contact, accepted: Contact.allCases.map(\.rawValue).joined(separator: ", "),
                Contact.init(rawValue:)) ?? contact
        rrIntervals = try container.decodeIfPresent(Bool.self, forKey: .rrIntervals) ?? rrIntervals
        energy = try container.decodeIfPresent(Bool.self, forKey: .energy) ?? energy
        format =
            try container.decodeParsedIfPresent(
                String.self, forKey: .format, accepted: "ieee11073 or ess", TemperatureFormat.init(rawValue:)) ?? format
        fahrenheit = try container.decodeIfPresent(Bool.self, forKey: .fahrenheit) ?? fahrenheit
        if kind == .temperature, format == .ieee11073, !container.contains(.base) {
            base = 36.8
            drift = 0.3
        }
        base = try container.decodeIfPresent(Double.self, forKey: .base) ?? base
        drift = try container.decodeIfPresent(Double.self, forKey: .drift) ?? drift
        guard drift >= 0 else { throw container.invalid(.drift, "drift must not be negative") }
        period = try container.decodeIfPresent(ScenarioDuration.self, forKey: .period)?.duration ?? period
        guard period > .zero else { throw container.invalid(.period, "period must be positive") }
        start = try container.decodeIfPresent(Double.self, forKey: .start) ?? start
        guard (0...100).contains(start) else { throw container.invalid(.start, "expected a battery level 0…100") }
        drainPerHour = try container.decodeIfPresent(Double.self, forKey: .drainPerHour) ?? drainPerHour
        guard drainPerHour >= 0 else { throw container.invalid(.drainPerHour, "must not be negative") }
        humidity = try container.decodeIfPresent(Double.self, forKey: .humidity) ?? humidity
        proximityUUID =
            try container.decodeUUIDIfPresent(forKey: .proximityUUID)
            ?? proximityUUID
        major = try container.decodeIfPresent(UInt16.self, forKey: .major) ?? major
        minor = try container.decodeIfPresent(UInt16.self, forKey: .minor) ?? minor
        measuredPower = try container.decodeIfPresent(Int8.self, forKey: .measuredPower) ?? measuredPower
    }
}
