/// A named field with its unit and kind: `heart_rate`, 72, `bpm`, a measurement.
///
/// `unit` uses the symbols Home Assistant expects (`°C`, `%`, `hPa`, `bpm`, `kg`, `m/s`, …);
/// `kind` carries the Home Assistant component, device class and state class the gateway needs
/// for MQTT discovery.
public struct DecodedField: Sendable, Hashable {
    public var name: String
    public var value: DecodedValue
    public var unit: String?
    public var kind: FieldKind

    public init(name: String, value: DecodedValue, unit: String? = nil, kind: FieldKind = .attribute) {
        self.name = name
        self.value = value
        self.unit = unit
        self.kind = kind
    }
}

extension DecodedField {
    static func int(_ name: String, _ value: some BinaryInteger, unit: String? = nil, kind: FieldKind = .attribute)
        -> DecodedField
    {
        DecodedField(name: name, value: .int(Int64(value)), unit: unit, kind: kind)
    }

    static func double(_ name: String, _ value: Double, unit: String? = nil, kind: FieldKind = .attribute)
        -> DecodedField
    {
        DecodedField(name: name, value: value.isFinite ? .double(value) : .null, unit: unit, kind: kind)
    }

    static func bool(_ name: String, _ value: Bool, kind: FieldKind = .attribute) -> DecodedField {
        DecodedField(name: name, value: .bool(value), kind: kind)
    }

    static func string(_ name: String, _ value: String, kind: FieldKind = .attribute) -> DecodedField {
        DecodedField(name: name, value: .string(value), kind: kind)
    }

    static func medical(_ name: String, _ value: MedicalFloat, unit: String?, kind: FieldKind) -> DecodedField {
        DecodedField(name: name, value: value.decodedValue, unit: unit, kind: kind)
    }
}
