import Bluetooth

/// Xiaomi MiBeacon v2–v5, service data 0xFE95 (stock firmware of the LYWSDCGQ, LYWSD03MMC,
/// MHO-C401, CGG1, HHCCJCY01 and other Mi Home sensors).
///
/// Layout, little-endian: frame control (2), product id (2), frame counter (1), then as the frame
/// control says the device's address (6, reversed), a capability byte (and an I/O capability byte
/// when its bit 5 is set), and the objects: `type id (2), length (1), data`, repeated.
///
/// Frame control bits: 3 encrypted, 4 address included, 5 capability included, 6 objects
/// included, 7 mesh, 12–15 the version. A frame without objects (a device announcing itself)
/// decodes to its header fields only.
///
/// Encrypted v4/v5 objects are `ciphertext, extended counter (3), MIC (4)`: AES-128-CCM with the
/// 16-byte bind key, associated data `11`, and the 12-byte nonce `address (6, reversed) · product
/// id (2) · frame counter (1) · extended counter (3)`. The address is the one in the frame, else
/// ``AdvertisementContext/address``. A MIC that does not match gives `decryption_failed` "the bind
/// key does not match". The legacy v2/v3 encryption (12-byte keys, no usable MIC) and mesh frames
/// are `unsupported`.
///
/// The frame counter is published as `packet_id` (a device repeats each frame several times) and,
/// on encrypted frames, `extended counter × 256 + frame counter` as `encryption_counter`, so the
/// gateway's de-duplication and replay check treat MiBeacon as they treat BTHome.
public struct MiBeaconDecoder: AdvertisementDecoder {
    public let name = "mibeacon"
    public let source = AdvertisementSource.serviceData(BluetoothUUID(UInt16(0xFE95)))

    public init() {}

    /// The address, reversed, after frame control (2), product id (2) and frame counter (1):
    /// present when frame control's bit 4 is set, as most v4/v5 sensors send it.
    public func payloadMarkers(for address: BluetoothAddress) -> [PayloadMarker] {
        [PayloadMarker(offset: 5, address.bytes.reversed())]
    }

    public func accepts(_ payload: [UInt8]) -> Bool { payload.count >= 5 }

    public func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let control = try reader.uint16("frame_control")
        let version = Int(control >> 12)
        guard version >= 2 else {
            throw DecoderError(
                .unsupported, field: "frame_control", offset: 0, message: "MiBeacon version \(version), expected 2–5")
        }
        guard control & 0x0080 == 0 else {
            throw DecoderError(
                .unsupported, field: "frame_control", offset: 0, message: "mesh frames are not supported")
        }
        let productStart = reader.offset
        let productID = try reader.uint16("product_id")
        let frameCounter = try reader.uint8("frame_counter")
        let header = Array(payload[productStart..<reader.offset])
        var frameAddress: [UInt8]?
        if control & 0x0010 != 0 {
            let start = reader.offset
            let framed = Array(try reader.bytes(6, "address").reversed())
            if let address = context.address?.bytes, address != framed {
                throw DecoderError(
                    .invalidValue, field: "address", offset: start,
                    message:
                        "the frame's address \(Self.colons(framed)) is not the advertiser's \(Self.colons(address))")
            }
            frameAddress = framed
        }
        if control & 0x0020 != 0 {
            let capability = try reader.uint8("capability")
            if capability & 0x20 != 0 { _ = try reader.uint8("io_capability") }
        }
        var fields: [DecodedField] = [.int("product_id", productID)]
        if let model = MiBeaconObject.models[productID] { fields.append(.string("model", model)) }
        fields.append(.int("packet_id", frameCounter))
        let encrypted = control & 0x0008 != 0
        fields.append(.bool("encrypted", encrypted))
        guard control & 0x0040 != 0 else {
            try reader.expectEnd("objects")
            return fields
        }
        var objects: ByteReader
        if encrypted {
            guard version >= 4 else {
                throw DecoderError(
                    .unsupported, field: "frame_control", offset: 0,
                    message: "MiBeacon v\(version) (legacy) encryption is not supported; v4 and v5 are")
            }
            let (key, address) = try context.encryptionInputs(frameAddress: frameAddress)
            let (plaintext, counter) = try Self.decrypt(&reader, key: key, nonceStart: address.reversed() + header)
            objects = ByteReader(plaintext)
            fields.append(.int("encryption_counter", UInt32(counter) << 8 | UInt32(frameCounter)))
        } else {
            objects = ByteReader(reader.rest())
        }
        return fields + (try Self.decodeObjects(&objects, product: productID))
    }

    /// The objects of an encrypted frame and its 24-bit extended counter.
    static func decrypt(_ reader: inout ByteReader, key: [UInt8], nonceStart: [UInt8]) throws(DecoderError)
        -> (plaintext: [UInt8], counter: UInt32)
    {
        let tail = try reader.sealedTail(counterWidth: 3)
        do throws(DecoderError) {
            let plaintext = try AESCCM.open(
                ciphertext: tail.ciphertext, tag: tail.mic, key: key, nonce: nonceStart + tail.counterBytes,
                associatedData: [0x11])
            return (plaintext, tail.counter)
        } catch {
            guard error.code == .decryptionFailed, error.field == "encrypted_payload" else { throw error }
            throw DecoderError(
                .decryptionFailed, field: "bind_key",
                message:
                    "the bind key does not match (the MIC check failed; or the address is wrong, or the frame is corrupted)"
            )
        }
    }

    static func decodeObjects(_ reader: inout ByteReader, product: UInt16) throws(DecoderError) -> [DecodedField] {
        var fields: [DecodedField] = []
        var index = 0
        while !reader.isAtEnd {
            let id = try reader.uint16("object[\(index)].id")
            let length = Int(try reader.uint8("object[\(index)].length"))
            let dataStart = reader.offset
            let data = try reader.bytes(length, "object[\(index)].data")
            guard let object = MiBeaconObject.byID[id] else {
                fields.append(.string("object_0x" + Hex.string([UInt8(id >> 8), UInt8(id & 0xFF)]), Hex.string(data)))
                index += 1
                continue
            }
            let label = "object[\(index)].\(object.name)"
            guard data.count == object.length else {
                throw DecoderError(
                    .invalidValue, field: label, offset: dataStart,
                    message: "object 0x\(String(id, radix: 16)) needs \(object.length) data byte(s), has \(data.count)")
            }
            var objectReader = ByteReader(data)
            fields += try decode(object, from: &objectReader, product: product, label: label)
            index += 1
        }
        return BTHomeDecoder.numberingRepeats(fields)
    }

    static func decode(_ object: MiBeaconObject, from reader: inout ByteReader, product: UInt16, label: String)
        throws(DecoderError) -> [DecodedField]
    {
        switch object.format {
        case .number(let width, let signed, let exponent, let unit, let kind):
            let raw = signed ? try reader.signed(width, label) : Int64(try reader.unsigned(width, label))
            if exponent == 0 { return [.int(object.name, raw, unit: unit, kind: kind)] }
            return [.double(object.name, Scale.decimal(raw, exponent: exponent), unit: unit, kind: kind)]
        case .temperatureAndHumidity:
            let temperature = try reader.int16(label + ".temperature")
            let humidity = try reader.uint16(label + ".humidity")
            return [
                .double("temperature", Scale.decimal(Int64(temperature), exponent: -1), unit: "°C", kind: .temperature),
                .double("humidity", Scale.decimal(Int64(humidity), exponent: -1), unit: "%", kind: .humidity),
            ]
        case .flag(let kind):
            return [.bool(object.name, try reader.uint8(label) != 0, kind: kind)]
        case .door:
            let start = reader.offset
            switch try reader.uint8(label) {
            case 0: return [.bool("opening", true, kind: .binary("opening"))]
            case 1:
                return [
                    .bool("opening", false, kind: .binary("opening")),
                    .bool("door_left_open", false, kind: .binary("problem")),
                ]
            case 2:
                return [
                    .bool("opening", true, kind: .binary("opening")),
                    .bool("door_left_open", true, kind: .binary("problem")),
                ]
            case 3: return [.string("door_event", "device_reset")]
            case let raw:
                throw DecoderError(.invalidValue, field: label, offset: start, message: "door state \(raw) is not 0–3")
            }
        case .motionWithIlluminance:
            let illuminance = try reader.uint24(label + ".illuminance")
            return [
                .bool("motion", true, kind: .binary("motion")),
                .int("illuminance", illuminance, unit: "lx", kind: .sensor("illuminance")),
            ]
        case .button:
            return try MiBeaconButton.decode(&reader, product: product, label: label)
        }
    }

    static func colons(_ address: [UInt8]) -> String {
        address.map { Hex.string([$0]).uppercased() }.joined(separator: ":")
    }
}
