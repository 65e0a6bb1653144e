import Bluetooth
import Timekeeping

/// Parsers for the small textual forms scenario files use.
enum ScenarioParsing {
    static let hexForm = "hex bytes such as \"0a1b\" (spaces and ':' allowed)"
    static let uuidForm = "a UUID: \"180d\", \"0x2a37\" or the 128-bit form"
    static let addressForm = "an address such as \"C0:FF:EE:00:00:01\""
    static let durationForm = "seconds as a number, or " + DurationParser.acceptedForms

    static func hex(_ text: String) -> [UInt8]? { Hex.bytes(text) }

    static func uuid(_ text: String) -> BluetoothUUID? { BluetoothUUID(text) }

    static func address(_ text: String) -> BluetoothAddress? { BluetoothAddress(text) }

    /// A peer's refusal: `"<refusal>"` (the default) or `"request-not-supported"`.
    static func refusalForm(_ refusal: String) -> String { "\"\(refusal)\" or \"request-not-supported\"" }

    static func refusal(_ text: String, default refusal: (name: String, error: ATTError)) -> ATTError? {
        switch text {
        case refusal.name: refusal.error
        case "request-not-supported": .requestNotSupported
        default: nil
        }
    }
}

/// A duration written as seconds (`1.5`) or as text (`"1500ms"`, `"30s"`).
struct ScenarioDuration: Decodable, Sendable, Equatable {
    let duration: Duration

    init(_ duration: Duration) { self.duration = duration }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let seconds = try? container.decode(Double.self) {
            guard seconds >= 0, seconds.isFinite else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "negative duration; expected \(ScenarioParsing.durationForm)")
            }
            duration = .milliseconds(Int64((seconds * 1000).rounded()))
        } else if let text = try? container.decode(String.self), let parsed = DurationParser.parse(text) {
            duration = parsed
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "invalid duration; expected \(ScenarioParsing.durationForm)")
        }
    }
}
