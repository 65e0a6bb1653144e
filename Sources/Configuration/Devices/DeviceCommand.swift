import Bluetooth
import ByteLayouts

/// `devices[].commands[]`: one named command clients may send on `<base>/<device>/set` (write),
/// `<base>/<device>/get` (read), or subscribe to (notify). Nothing else on the device is reachable.
package struct DeviceCommand: Sendable, Equatable {
    package enum WriteType: String, ConfigurationEnum {
        case withResponse = "with_response"
        case withoutResponse = "without_response"
    }

    /// The JSON key clients use, e.g. `{"brightness": 40}`.
    package var name: String
    package var characteristic: BluetoothUUID
    /// The service holding it, when the same characteristic appears in several services.
    package var service: BluetoothUUID?
    package var operations: [GATTOperation]
    package var format: CommandValueFormat
    /// For integer formats: the accepted range (defaults to the format's own range).
    package var minimum: Int?
    package var maximum: Int?
    /// For `hex` and `utf8`: accepted length in bytes.
    package var minimumLength: Int
    package var maximumLength: Int
    package var writeType: WriteType
    /// For format `layout`: the user-defined layout that encodes written values (a JSON object of
    /// its fields) and decodes read ones.
    package var layout: ByteLayout?

    package init(
        name: String, characteristic: BluetoothUUID, service: BluetoothUUID? = nil,
        operations: [GATTOperation] = [.write],
        format: CommandValueFormat = .hex, minimum: Int? = nil, maximum: Int? = nil, minimumLength: Int = 0,
        maximumLength: Int = 512, writeType: WriteType = .withResponse, layout: ByteLayout? = nil
    ) {
        self.name = name
        self.characteristic = characteristic
        self.service = service
        self.operations = operations
        self.format = format
        self.minimum = minimum
        self.maximum = maximum
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.writeType = writeType
        self.layout = layout
    }

    /// The integer values a write may carry: `min`…`max` within the format's range; nil for byte formats.
    package var acceptedRange: ClosedRange<Int>? {
        guard let range = format.integerRange else { return nil }
        return (minimum ?? range.lowerBound)...(maximum ?? range.upperBound)
    }

    static let keys = [
        "name", "characteristic", "service", "operations", "format", "min", "max", "min_length", "max_length",
        "write_type", "layout",
    ]
}

extension DeviceCommand: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        name = try reader.required(try reader.string("name"), "name", accepted: TopicRules.identifierRule)
        guard TopicRules.isIdentifier(name) else {
            throw reader.error(
                "name", .invalidValue, "\"\(name)\" is not accepted; expected \(TopicRules.identifierRule)")
        }
        characteristic = try reader.required(
            try reader.uuid("characteristic", kind: .characteristic), "characteristic",
            accepted: ObjectReader.UUIDKind.characteristic.accepted)
        service = try reader.uuid("service", kind: .service)
        operations = try reader.enumerations(GATTOperation.self, "operations") ?? [.write]
        let formatValue = try reader.enumeration(CommandValueFormat.self, "format")
        layout = try reader.layout("layout")
        if layout != nil {
            if let formatValue, formatValue != .layout {
                throw reader.error(
                    "format", .conflict,
                    "a command with a layout has format \"layout\" (or none); \"\(formatValue.rawValue)\" contradicts it"
                )
            }
            format = .layout
        } else {
            if formatValue == .layout {
                throw reader.error(
                    "layout", .missingKey, "format \"layout\" needs a \"layout\" object describing the fields")
            }
            format = formatValue ?? .hex
        }

        let wide = Int(Int32.min)...Int(UInt32.max)
        minimum = try reader.integer("min", in: wide)
        maximum = try reader.integer("max", in: wide)
        if minimum != nil || maximum != nil {
            guard let range = format.integerRange else {
                throw reader.error(
                    minimum != nil ? "min" : "max", .conflict,
                    "min and max apply to integer formats; for \"\(format.rawValue)\" use min_length and max_length")
            }
            for (key, value) in [("min", minimum), ("max", maximum)] {
                if let value, !range.contains(value) {
                    throw reader.error(
                        key, .invalidValue,
                        "\(value) does not fit format \"\(format.rawValue)\"; expected \(range.lowerBound) to \(range.upperBound)"
                    )
                }
            }
            if let minimum, let maximum, minimum > maximum {
                throw reader.error("max", .conflict, "max (\(maximum)) is less than min (\(minimum))")
            }
        }

        let minimumLengthValue = try reader.integer("min_length", in: 0...512)
        let maximumLengthValue = try reader.integer("max_length", in: 1...512)
        if minimumLengthValue != nil || maximumLengthValue != nil, !format.isVariableLength {
            throw reader.error(
                minimumLengthValue != nil ? "min_length" : "max_length", .conflict,
                "min_length and max_length apply to formats \"hex\" and \"utf8\"; \"\(format.rawValue)\" \(format == .layout ? "sets its own size" : "has a fixed size")"
            )
        }
        minimumLength = minimumLengthValue ?? 0
        maximumLength = maximumLengthValue ?? 512
        if minimumLength > maximumLength {
            throw reader.error(
                "max_length", .conflict, "max_length (\(maximumLength)) is less than min_length (\(minimumLength))")
        }

        let writeTypeValue = try reader.enumeration(WriteType.self, "write_type")
        if writeTypeValue != nil, !operations.contains(.write) {
            throw reader.error("write_type", .conflict, "write_type needs \"write\" in operations")
        }
        writeType = writeTypeValue ?? .withResponse
    }
}
