import Bluetooth

/// SwitchBot's manufacturer data (company 0x0969), as far as the ``SwitchBotDecoder`` uses it:
/// address (6), sequence number (1), state byte (1), then the meters' temperature and humidity
/// (3), two bytes the decoder does not use, and the Meter Pro CO2's CO2 (2, big-endian). A
/// field is nil when the data is too short to hold it.
struct SwitchBotManufacturerData: Sendable {
    var mac: String
    var sequence: UInt8
    /// The state byte; 0 when the data ends before it (``hasState`` false).
    var state: UInt8 = 0
    var hasState = false
    /// The three temperature and humidity bytes at 8–10.
    var climate: [UInt8]?
    /// Byte 12 bits 0–3: the Contact Sensor's button count (its data is 13 bytes or more).
    var contactButtons: UInt8?
    var co2: UInt16?

    /// Nil when there is no manufacturer data or it is shorter than the address and sequence.
    init?(_ payload: [UInt8]?) throws(DecoderError) {
        guard let payload, payload.count >= 7 else { return nil }
        var reader = ByteReader(payload)
        mac = Hex.string(try reader.bytes(6, "mac"), separator: ":").uppercased()
        sequence = try reader.uint8("sequence")
        guard !reader.isAtEnd else { return }
        state = try reader.uint8("state")
        hasState = true
        guard reader.remaining >= 3 else { return }
        climate = try reader.bytes(3, "temperature")
        try reader.skip(min(reader.remaining, 1), "reserved")
        guard !reader.isAtEnd else { return }
        contactButtons = try reader.uint8("button_count") & 0x0F
        guard reader.remaining >= 2 else { return }
        co2 = try reader.uint16BE("co2")
    }
}
