import Bluetooth
import Timekeeping

/// BTHome v2 (https://bthome.io/format/), service data UUID 0xFCD2.
///
/// The first byte is the device information: bit 0 encrypted, bit 1 the advertiser's address
/// follows (6 bytes, reversed), bit 2 trigger-based device, bits 5–7 the version (must be 2).
/// Objects follow as `id, data…` in any order; an id may repeat (fields are then numbered
/// `temperature_1`, `temperature_2`, …). Object 0x00 is the packet id for de-duplication.
///
/// Encrypted payloads are `ciphertext, counter (4 bytes), MIC (4 bytes)`, AES-128-CCM with the
/// device's bind key and the nonce `address (6) · d2 fc · device info · counter`. Decryption
/// needs ``AdvertisementContext/bindKey`` and the address (from the context or the payload).
///
/// An unknown object id has no known length. The specification tells receivers to stop there,
/// and senders to put object ids in ascending order, so that an older receiver keeps the objects
/// it knows. This decoder skips an unknown object only when its length is knowable: exactly one
/// length of 1–4 bytes (the sizes of every fixed-size object) leaves a rest that decodes to its
/// last byte as known objects whose ids ascend from the unknown id on (a newer sensor value
/// followed by the device-information objects 0xF0–0xF2). Otherwise it stops. Either way
/// `undecoded_object_id` / `undecoded_hex` say what was skipped (or everything left, on a stop).
public struct BTHomeDecoder: AdvertisementDecoder {
    public let name = "bthome"
    public let source = AdvertisementSource.serviceData(BluetoothUUID(UInt16(0xFCD2)))

    public init() {}

    /// The device information byte: version 2 (bits 5–7), the reserved bits 3–4 clear, any of
    /// encryption, address included and trigger-based (bits 0–2).
    public var payloadMarkers: [PayloadMarker] { (UInt8(0x40)...0x47).map { PayloadMarker([$0]) } }

    public func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let info = try reader.uint8("device_information")
        let version = info >> 5
        guard version == 2 else {
            throw DecoderError(
                .unsupported, field: "device_information", offset: 0, message: "BTHome version \(version), expected 2")
        }
        let encrypted = info & 0x01 != 0
        var frameAddress: [UInt8]?
        if info & 0x02 != 0 {
            frameAddress = Array(try reader.bytes(6, "address").reversed())
        }
        var objects: ByteReader
        var counter: UInt32?
        if encrypted {
            let (key, address) = try context.encryptionInputs(frameAddress: frameAddress)
            let tail = try reader.sealedTail(counterWidth: 4)
            counter = tail.counter
            let nonce = address + [0xD2, 0xFC, info] + tail.counterBytes
            objects = ByteReader(try AESCCM.open(ciphertext: tail.ciphertext, tag: tail.mic, key: key, nonce: nonce))
        } else {
            objects = ByteReader(reader.rest())
        }
        var fields = try Self.decodeObjects(&objects)
        fields.append(.bool("encrypted", encrypted))
        fields.append(.bool("trigger_based", info & 0x04 != 0))
        if let counter { fields.append(.int("encryption_counter", counter)) }
        return fields
    }

    /// The longest fixed-size object of the specification, in data bytes.
    static let longestFixedObject = 4

    /// An unknown object id at `start`: skipped when exactly one data length lets the rest decode
    /// to the end as known objects in ascending id order from `id` on, otherwise everything from
    /// `start` is left undecoded.
    static func undecoded(_ id: UInt8, _ reader: inout ByteReader, from start: Int) -> [DecodedField] {
        let dataStart = reader.offset
        var resumption: (length: Int, fields: [DecodedField])?
        var candidates = 0
        for length in 1...longestFixedObject where dataStart + length <= reader.bytes.count {
            var rest = ByteReader(Array(reader.bytes[(dataStart + length)...]))
            guard let fields = try? decodeKnownObjects(&rest, from: id), rest.isAtEnd else { continue }
            candidates += 1
            resumption = (length, fields)
        }
        defer { _ = reader.rest() }
        let end = candidates == 1 ? dataStart + (resumption?.length ?? 0) : reader.bytes.count
        let skipped: [DecodedField] = [
            .string("undecoded_object_id", "0x" + Hex.string([id])),
            .string("undecoded_hex", Hex.string(reader.bytes[start..<end])),
        ]
        return candidates == 1 ? skipped + (resumption?.fields ?? []) : skipped
    }

    /// Known objects to the end, their ids ascending from `firstID` on; throws on the first unknown
    /// or out-of-order id, so a skipped unknown object never hides a second one.
    static func decodeKnownObjects(_ reader: inout ByteReader, from firstID: UInt8) throws(DecoderError)
        -> [DecodedField]
    {
        var fields: [DecodedField] = []
        var previous = firstID
        while !reader.isAtEnd {
            let start = reader.offset
            let id = try reader.uint8("object.id")
            guard let object = BTHomeObject.byID[id], id >= previous else {
                throw DecoderError(
                    .unsupported, field: "object.id", offset: start, message: "unknown or out-of-order object id")
            }
            previous = id
            fields += try decode(object, from: &reader, label: object.name)
        }
        return fields
    }

    static func decodeObjects(_ reader: inout ByteReader) throws(DecoderError) -> [DecodedField] {
        var fields: [DecodedField] = []
        var index = 0
        while !reader.isAtEnd {
            let start = reader.offset
            let id = try reader.uint8("object[\(index)].id")
            guard let object = BTHomeObject.byID[id] else {
                fields += BTHomeDecoder.undecoded(id, &reader, from: start)
                break
            }
            let label = "object[\(index)].\(object.name)"
            fields += try decode(object, from: &reader, label: label)
            index += 1
        }
        return numberingRepeats(fields)
    }

    static func decode(_ object: BTHomeObject, from reader: inout ByteReader, label: String) throws(DecoderError)
        -> [DecodedField]
    {
        switch object.format {
        case .number(let width, let signed, let multiplier, let exponent):
            let raw = signed ? try reader.signed(width, label) : Int64(try reader.unsigned(width, label))
            if multiplier == 1, exponent == 0 {
                return [.int(object.name, raw, unit: object.unit, kind: object.kind)]
            }
            let value = Scale.decimal(raw, multiplier: multiplier, exponent: exponent)
            return [.double(object.name, value, unit: object.unit, kind: object.kind)]
        case .binary:
            let start = reader.offset
            let raw = try reader.uint8(label)
            guard raw <= 1 else {
                throw DecoderError(.invalidValue, field: label, offset: start, message: "\(raw) is not 0 or 1")
            }
            return [.bool(object.name, raw == 1, kind: object.kind)]
        case .button:
            let raw = try reader.uint8(label)
            let event: DecodedValue = BTHomeObject.buttonEvents[raw].map { .string($0) } ?? .null
            return [DecodedField(name: object.name, value: event, kind: object.kind)]
        case .dimmer:
            let raw = try reader.uint8(label + ".event")
            let steps = try reader.uint8(label + ".steps")
            let event: DecodedValue = BTHomeObject.dimmerEvents[raw].map { .string($0) } ?? .null
            return [
                DecodedField(name: object.name, value: event, kind: object.kind),
                .int(object.name + "_steps", steps),
            ]
        case .command:
            let length = Int(try reader.uint8(label + ".length") & 0x1F)
            let opcode = try reader.uint8(label + ".opcode")
            let arguments = try reader.bytes(length, label + ".arguments")
            let command: DecodedValue = BTHomeObject.commandOpcodes[opcode].map { .string($0) } ?? .null
            var fields = [
                DecodedField(name: object.name, value: command, kind: object.kind),
                .int(object.name + "_opcode", opcode),
            ]
            if [0x03, 0x04].contains(opcode), arguments.count == 1 {
                fields.append(.int(object.name + "_steps", arguments[0]))
            } else if !arguments.isEmpty {
                fields.append(.string(object.name + "_arguments", Hex.string(arguments)))
            }
            return fields
        case .timestamp:
            let seconds = try reader.uint32(label)
            return [.string(object.name, Timestamp.iso8601(unixSeconds: Int64(seconds)), kind: object.kind)]
        case .text:
            let length = Int(try reader.uint8(label + ".length"))
            return [.string(object.name, try reader.utf8(count: length, label))]
        case .raw:
            let length = Int(try reader.uint8(label + ".length"))
            return [.string(object.name, Hex.string(try reader.bytes(length, label)))]
        case .firmware(let width):
            let parts = try reader.bytes(width, label)
            return [.string(object.name, parts.reversed().map { String($0) }.joined(separator: "."))]
        }
    }

    /// Names that occur more than once get `_1`, `_2`, … in order of appearance.
    static func numberingRepeats(_ fields: [DecodedField]) -> [DecodedField] {
        var totals: [String: Int] = [:]
        for field in fields { totals[field.name, default: 0] += 1 }
        var seen: [String: Int] = [:]
        return fields.map { field in
            guard totals[field.name, default: 0] > 1 else { return field }
            seen[field.name, default: 0] += 1
            var renamed = field
            renamed.name = "\(field.name)_\(seen[field.name]!)"
            return renamed
        }
    }
}
