import Bluetooth
import Decoders
import Testing

/// Bytes from hex text; a malformed literal is a bug in the test.
func bytes(_ hex: String) -> [UInt8] {
    guard let value = Hex.bytes(hex) else { fatalError("bad hex literal in test: \(hex)") }
    return value
}

/// A golden vector: the bytes, the JSON the decoder must produce, and where the bytes come from.
struct Vector: Sendable, CustomTestStringConvertible {
    var decoder: String
    var hex: String
    var json: String
    var source: String

    init(_ decoder: String, _ hex: String, _ json: String, source: String) {
        self.decoder = decoder
        self.hex = hex
        self.json = json
        self.source = source
    }

    var testDescription: String { "\(decoder) \(hex)" }
}

/// Names of the fields, in order.
func names(_ fields: [DecodedField]) -> [String] { fields.map(\.name) }

/// Runs `body` and returns the `DecoderError` it throws (nil when it does not throw).
func decoderError(_ body: () throws(DecoderError) -> Void) -> DecoderError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

/// Checks a reading against a golden vector: no error, and exactly the vector's JSON.
func expectGolden(
    _ reading: DecodedReading, _ vector: Vector, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(reading.error == nil, "\(vector.source)", sourceLocation: sourceLocation)
    #expect(reading.jsonString() == vector.json, "\(vector.source)", sourceLocation: sourceLocation)
}

/// The readings of one manufacturer-data entry (`company`, the entry in hex) with a local name,
/// through the standard registry as the gateway decodes an advertisement.
func manufacturerReadings(_ company: UInt16, _ hex: String, name: String?) -> [DecodedReading] {
    DecoderRegistry.standard.decodeAdvertisement(
        serviceData: [:], manufacturerData: [company: bytes(hex)], context: AdvertisementContext(localName: name))
}
