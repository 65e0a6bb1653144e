import Bluetooth
import Configuration
import Decoders

/// Keeps field names unique within a device's merged state when two subscribed characteristics
/// decode to the same name (Temperature Measurement, Intermediate Temperature and Environmental
/// Sensing's Temperature all decode to `temperature`), with names that read well and do not
/// depend on which value happened to arrive first.
///
/// Who keeps the plain name: the characteristic the configuration names like the field
/// (`"temperature"`, Environmental Sensing's Temperature, keeps `temperature`); else the one
/// named like the field plus `_measurement` (`temperature_measurement`); the one listed first
/// when several are; when none is, the one listed first among those that produced it. Every other
/// characteristic's field gets a qualified name:
/// 1. its characteristic name when that ends with `_<field>` (`intermediate_temperature`),
/// 2. else `<what the service measures>_<field>` for services that say it (Health Thermometer:
///    `body_temperature`, Environmental Sensing: `ambient_temperature`; ``serviceQualifiers``),
/// 3. else `<service name>_<field>` when its service has a name (`weight_scale_weight`),
/// 4. else `<field>_<characteristic name or UUID>`.
///
/// The owner is known from the configuration in every case but one (two characteristics that
/// both do not own the name): there, the first arrival holds the plain name until one listed
/// before it reports.
package struct FieldNamer: Sendable {
    /// One subscribed characteristic of a device, as a reading names it.
    package struct Source: Sendable, Hashable {
        /// Position in the device's `subscribe` list.
        package var rank: Int
        /// The characteristic's name (`intermediate_temperature`), or its short UUID.
        package var characteristic: String
        /// The name of the service holding it (`environmental_sensing`), when known.
        package var service: String?

        package init(rank: Int, characteristic: String, service: String? = nil) {
            self.rank = rank
            self.characteristic = characteristic
            self.service = service
        }
    }

    /// Per device: the characteristic names of its subscriptions, in configured order.
    private let characteristics: [String: [String]]
    /// Per device and field: the ranks that produced it so far.
    private var producers: [String: [String: Set<Int>]] = [:]
    /// Per device, field and rank: the published name (recomputed when a new producer appears).
    /// One flat map: nested ones cost a lookup, a hash of the key and a retain of the inner map
    /// per level, for every field of every reading (issue 20).
    private var names: [NameKey: String] = [:]

    private struct NameKey: Hashable {
        let device: String
        let field: String
        let rank: Int
    }

    /// `characteristics`: per device id, the characteristic names of its subscriptions in the
    /// configuration's order (the same names ``Source/characteristic`` carries).
    package init(characteristics: [String: [String]] = [:]) {
        self.characteristics = characteristics
    }

    /// Names from the devices' `subscribe` lists.
    package init(configuration: BridgeConfiguration) {
        var characteristics: [String: [String]] = [:]
        for device in configuration.devices {
            characteristics[device.id] = device.subscribe.map { Self.characteristicName($0.characteristic) }
        }
        self.init(characteristics: characteristics)
    }

    /// The name a characteristic goes by here: its assigned name, else its short UUID.
    package static func characteristicName(_ uuid: BluetoothUUID) -> String {
        AssignedNumbers.characteristicName(for: uuid) ?? uuid.shortString
    }

    package mutating func name(_ fields: [DecodedField], device: String, source: Source) -> [DecodedField] {
        fields.map { field in
            var field = field
            field.name = name(of: field.name, device: device, source: source)
            return field
        }
    }

    private mutating func name(of field: String, device: String, source: Source) -> String {
        let key = NameKey(device: device, field: field, rank: source.rank)
        if let known = names[key] { return known }
        if producers[device]?[field]?.insert(source.rank).inserted == true {
            // A new producer can change who owns the name.
            for rank in producers[device]?[field] ?? [] {
                names[NameKey(device: device, field: field, rank: rank)] = nil
            }
        } else if producers[device]?[field] == nil {
            producers[device, default: [:]][field] = [source.rank]
        }
        let published = owner(of: field, device: device) == source.rank ? field : Self.qualified(field, source)
        names[key] = published
        return published
    }

    /// The rank that keeps the plain name `field`: named like it, else like its measurement.
    private func owner(of field: String, device: String) -> Int? {
        let configured = characteristics[device] ?? []
        if let exact = configured.firstIndex(of: field) { return exact }
        if let natural = configured.indices.first(where: { Self.owns(configured[$0], field) }) { return natural }
        return producers[device]?[field]?.min()
    }

    /// Services whose name says what their values are of, by the word a person would put in
    /// front of the field (`body_temperature`, `ambient_temperature`).
    package static let serviceQualifiers: [String: String] = [
        "health_thermometer": "body",
        "environmental_sensing": "ambient",
    ]

    /// A characteristic owns the field named like it (`temperature`) or like its measurement
    /// (`temperature_measurement` → `temperature`).
    static func owns(_ characteristic: String, _ field: String) -> Bool {
        characteristic == field || characteristic == field + "_measurement"
    }

    static func qualified(_ field: String, _ source: Source) -> String {
        if source.characteristic.hasSuffix("_" + field), !owns(source.characteristic, field) {
            return source.characteristic
        }
        if let service = source.service, !service.isEmpty {
            return "\(serviceQualifiers[service] ?? service)_\(field)"
        }
        return "\(field)_\(source.characteristic)"
    }

    package mutating func forget(device: String) {
        producers[device] = nil
        names = names.filter { $0.key.device != device }
    }
}
