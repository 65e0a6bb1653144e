import Bluetooth

/// Alert Level (0x2A06), Immediate Alert / Link Loss services: uint8 0 no alert, 1 mild, 2 high.
/// Decodes and encodes (it is what users write to make a device beep).
package enum AlertLevel: UInt8, Sendable, Hashable, CaseIterable {
    case none = 0
    case mild = 1
    case high = 2

    /// The name used in JSON and MQTT commands.
    package var name: String {
        switch self {
        case .none: return "none"
        case .mild: return "mild"
        case .high: return "high"
        }
    }

    /// Accepts `none`/`no_alert`/`off`, `mild`, `high` (any case) or the numbers 0–2.
    package init(value: DecodedValue) throws(DecoderError) {
        switch value {
        case .string(let text):
            switch text.lowercased() {
            case "none", "no_alert", "off": self = .none
            case "mild": self = .mild
            case "high": self = .high
            default:
                throw DecoderError(
                    .invalidInput, field: "alert_level", message: "'\(text)' is not one of none, mild, high")
            }
        case .int(let number):
            guard let level = UInt8(exactly: number).flatMap(AlertLevel.init(rawValue:)) else {
                throw DecoderError(.invalidInput, field: "alert_level", message: "\(number) is not 0, 1 or 2")
            }
            self = level
        default:
            throw DecoderError(.invalidInput, field: "alert_level", message: "expects a string or an integer")
        }
    }

    /// The characteristic value to write.
    package var encoded: [UInt8] { [rawValue] }
}

/// The decoder for Alert Level values read back from a device.
package struct AlertLevelCharacteristic: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A06))
    package let name = "alert_level"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let raw = try reader.uint8("alert_level")
        try reader.expectEnd(name)
        guard let level = AlertLevel(rawValue: raw) else {
            throw DecoderError(.invalidValue, field: "alert_level", offset: 0, message: "reserved value \(raw)")
        }
        return [.string("alert_level", level.name)]
    }
}
