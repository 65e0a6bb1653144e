public import Decoders

/// Keeps field names unique within a device's merged state when two characteristics decode to
/// the same name (a Health Thermometer's `temperature` and Environmental Sensing's
/// `temperature`): the subscription listed first in the configuration keeps the plain name,
/// the others get `<field>_<characteristic>` (e.g. `temperature_intermediate_temperature`).
public struct FieldNamer: Sendable {
    /// Per device: field name → rank of the subscription that owns it.
    private var owners: [String: [String: Int]] = [:]

    public init() {}

    /// `rank` is the subscription's position in the device's configuration; `suffix` names its
    /// characteristic.
    public mutating func name(_ fields: [DecodedField], device: String, rank: Int, suffix: String) -> [DecodedField] {
        fields.map { field in
            var field = field
            if let owner = owners[device]?[field.name], owner < rank {
                field.name = "\(field.name)_\(suffix)"
            } else {
                owners[device, default: [:]][field.name] = rank
            }
            return field
        }
    }

    public mutating func forget(device: String) {
        owners[device] = nil
    }
}
