import Bluetooth

/// BTHome v1 (https://bthome.io/v1/), service data UUID 0x181C, unencrypted.
///
/// Each object is `control, object id, data…`: bits 0–4 of the control byte are the length of id
/// and data, bits 5–7 the data format (0 unsigned and 1 signed little-endian integer of any width,
/// 2 IEEE float of 2, 4 or 8 bytes, 3 UTF-8 text, 4 raw bytes, 5 timestamp). Object ids mean what
/// they mean in v2 (``BTHomeObject``: name, unit, scale); the width comes from the length. Repeated
/// ids are numbered as in v2.
///
/// Encrypted v1 uses service data 0x181E (``encrypted``, decoder `bthome_v1_encrypted`): the
/// objects encrypted with AES-128-CCM, then the counter (4 bytes) and the MIC (4 bytes); nonce
/// `address (6) · 1e 18 · counter`, associated data `0x11`.
public struct BTHomeV1Decoder: AdvertisementDecoder {
    public let name: String
    public let source: AdvertisementSource
    let isEncrypted: Bool

    /// Unencrypted BTHome v1, service data 0x181C.
    public init() {
        name = "bthome_v1"
        source = .serviceData(BluetoothUUID(UInt16(0x181C)))
        isEncrypted = false
    }

    /// Encrypted BTHome v1, service data 0x181E (needs the bind key and the address).
    public static let encrypted = BTHomeV1Decoder(encrypted: ())

    private init(encrypted: Void) {
        name = "bthome_v1_encrypted"
        source = .serviceData(BluetoothUUID(UInt16(0x181E)))
        isEncrypted = true
    }

    public func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        guard isEncrypted else { return try Self.objects(payload) + [.bool("encrypted", false)] }
        let (key, address) = try context.encryptionInputs()
        var reader = ByteReader(payload)
        let tail = try reader.sealedTail(counterWidth: 4)
        let plaintext = try AESCCM.open(
            ciphertext: tail.ciphertext, tag: tail.mic, key: key, nonce: address + [0x1E, 0x18] + tail.counterBytes,
            associatedData: [0x11])
        return try Self.objects(plaintext) + [.bool("encrypted", true), .int("encryption_counter", tail.counter)]
    }

    static func objects(_ payload: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        var fields: [DecodedField] = []
        var index = 0
        while !reader.isAtEnd {
            let start = reader.offset
            let control = try reader.uint8("object[\(index)].control")
            let length = Int(control & 0x1F)
            guard length >= 2 else {
                throw DecoderError(
                    .invalidValue, field: "object[\(index)].control", offset: start,
                    message: "length \(length) leaves no room for an object id and data")
            }
            let id = try reader.uint8("object[\(index)].id")
            guard let object = BTHomeObject.byID[id] else {
                fields += BTHomeDecoder.undecoded(id, &reader, from: start)
                break
            }
            let label = "object[\(index)].\(object.name)"
            let data = try reader.bytes(length - 1, label)
            fields += try Self.value(object, format: control >> 5, data: data, label: label, offset: start + 2)
            index += 1
        }
        return BTHomeDecoder.numberingRepeats(fields)
    }

    static func value(_ object: BTHomeObject, format: UInt8, data: [UInt8], label: String, offset: Int)
        throws(DecoderError) -> [DecodedField]
    {
        var reader = ByteReader(data)
        switch format {
        case 0, 1:
            guard case .number(_, _, let multiplier, let exponent) = object.format else {
                // Binary sensors and events keep their v2 layout inside the object.
                let fields = try BTHomeDecoder.decode(object, from: &reader, label: label)
                try reader.expectEnd(label)
                return fields
            }
            guard (1...8).contains(data.count) else {
                throw DecoderError(
                    .invalidValue, field: label, offset: offset, message: "an integer of \(data.count) bytes")
            }
            let raw: Int64
            if format == 1 {
                raw = try reader.signed(data.count, label)
            } else {
                let unsigned = try reader.unsigned(data.count, label)
                guard let value = Int64(exactly: unsigned) else {
                    throw DecoderError(.invalidValue, field: label, offset: offset, message: "\(unsigned) is too large")
                }
                raw = value
            }
            if multiplier == 1, exponent == 0 { return [.int(object.name, raw, unit: object.unit, kind: object.kind)] }
            let value = Scale.decimal(raw, multiplier: multiplier, exponent: exponent)
            return [.double(object.name, value, unit: object.unit, kind: object.kind)]
        case 2:
            let float: Double
            switch data.count {
            case 2: float = Double(Float16(bitPattern: UInt16(try reader.unsigned(2, label))))
            case 4: float = Double(try reader.float32(bigEndian: false, label))
            case 8: float = Double(bitPattern: try reader.unsigned(8, label))
            default:
                throw DecoderError(
                    .invalidValue, field: label, offset: offset, message: "a float of \(data.count) bytes (2, 4 or 8)")
            }
            guard case .number(_, _, let multiplier, let exponent) = object.format else {
                throw DecoderError(.invalidValue, field: label, offset: offset, message: "is not a number object")
            }
            // Rounded to the object's resolution, as the format's reference parser does.
            let units = float * Double(multiplier)
            guard units.isFinite, abs(units) < 9e15 else {
                return [DecodedField(name: object.name, value: .null, unit: object.unit, kind: object.kind)]
            }
            let value = Scale.decimal(Int64(units.rounded()), exponent: exponent)
            return [.double(object.name, value, unit: object.unit, kind: object.kind)]
        case 3:
            return [.string(object.name, try reader.utf8(count: data.count, label))]
        case 4:
            return [.string(object.name, Hex.string(data))]
        case 5:
            let fields = try BTHomeDecoder.decode(object, from: &reader, label: label)
            try reader.expectEnd(label)
            return fields
        default:
            throw DecoderError(.unsupported, field: label, offset: offset - 2, message: "data format \(format)")
        }
    }
}
