import Bluetooth
import JSON

/// A primary or secondary GATT service of a virtual device.
package struct ScenarioService: Sendable, Equatable, Decodable {
    package var uuid: BluetoothUUID
    package var primary: Bool
    package var characteristics: [ScenarioCharacteristic]

    package init(uuid: BluetoothUUID, primary: Bool = true, characteristics: [ScenarioCharacteristic]) {
        self.uuid = uuid
        self.primary = primary
        self.characteristics = characteristics
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case uuid, primary, characteristics }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try container.decodeUUID(forKey: .uuid)
        primary = try container.decodeIfPresent(Bool.self, forKey: .primary) ?? true
        characteristics = try container.decodeIfPresent([ScenarioCharacteristic].self, forKey: .characteristics) ?? []
    }
}

/// A characteristic: UUID, properties, initial value, an optional generator, and access rules.
package struct ScenarioCharacteristic: Sendable, Equatable, Decodable {
    package var uuid: BluetoothUUID
    package var properties: Set<CharacteristicProperty>
    package var value: [UInt8]
    package var generator: ScenarioGenerator?
    /// How often the generator produces a new value (and notifies when notifying).
    package var interval: Duration
    /// The peer refuses reads, writes and notification sessions until the device is paired; bluetoothd then
    /// raises security, pairing through the default agent (`BlueZSimulator+Security.swift`).
    package var requiresPairing: Bool
    /// Writes whose length lies outside these bounds get ATT error 0x0d (BlueZ: "Invalid Length").
    package var minLength: Int
    package var maxLength: Int
    /// For one-byte values: writes outside this range get ATT error 0x13 (Value Not Allowed).
    package var allowedRange: ClosedRange<UInt8>?
    /// A write (request or command) also notifies the new value to subscribers, like a state change would.
    package var notifyOnWrite: Bool
    /// What the peer's ATT server answers a read with when the characteristic lacks the read flag
    /// (bluetoothd forwards every read): `readNotPermitted` by default; a BlueZ-based peer whose
    /// attribute has no permissions at all calls its application, which typically answers
    /// `requestNotSupported` (BlueZ's example servers do).
    package var readError: ATTError
    /// The peer answers a read at any offset with the whole value (BlueZ's example servers ignore the
    /// offset bluetoothd forwards to them), instead of `invalidOffset` past the end.
    package var readIgnoresOffset: Bool
    /// What the peer answers a write request with when the characteristic lacks the write flag:
    /// `writeNotPermitted` by default; `requestNotSupported` for a BlueZ-based peer's application.
    package var writeError: ATTError
    package var descriptors: [ScenarioDescriptor]

    package init(
        uuid: BluetoothUUID, properties: Set<CharacteristicProperty>, value: [UInt8] = [],
        generator: ScenarioGenerator? = nil, interval: Duration = .seconds(1), requiresPairing: Bool = false,
        minLength: Int = 0, maxLength: Int = 512, allowedRange: ClosedRange<UInt8>? = nil, notifyOnWrite: Bool = true,
        readError: ATTError = .readNotPermitted, readIgnoresOffset: Bool = false,
        writeError: ATTError = .writeNotPermitted, descriptors: [ScenarioDescriptor] = []
    ) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.generator = generator
        self.interval = interval
        self.requiresPairing = requiresPairing
        self.minLength = minLength
        self.maxLength = maxLength
        self.allowedRange = allowedRange
        self.notifyOnWrite = notifyOnWrite
        self.readError = readError
        self.readIgnoresOffset = readIgnoresOffset
        self.writeError = writeError
        self.descriptors = descriptors
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case uuid, flags, value, text, generator, interval, descriptors
        case requiresPairing = "requires_pairing"
        case minLength = "min_length"
        case maxLength = "max_length"
        case allowedRange = "allowed_range"
        case notifyOnWrite = "notify_on_write"
        case readError = "read_error"
        case readIgnoresOffset = "read_ignores_offset"
        case writeError = "write_error"
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try container.decodeUUID(forKey: .uuid)
        let accepted =
            "a list of BlueZ flags: " + CharacteristicProperty.allCases.map(\.rawValue).joined(separator: ", ")
        properties = try container.decodeParsed([String].self, forKey: .flags, accepted: accepted) { names in
            let parsed = names.compactMap(CharacteristicProperty.init(rawValue:))
            return parsed.count == names.count && !parsed.isEmpty ? Set(parsed) : nil
        }
        if container.contains(.value), container.contains(.text) {
            throw container.invalid(.text, "give either \"value\" (hex) or \"text\" (UTF-8), not both")
        }
        if let text = try container.decodeIfPresent(String.self, forKey: .text) {
            value = Array(text.utf8)
        } else {
            value =
                try container.decodeHexIfPresent(forKey: .value) ?? []
        }
        generator = try container.decodeIfPresent(ScenarioGenerator.self, forKey: .generator)
        interval = try container.decodeIfPresent(ScenarioDuration.self, forKey: .interval)?.duration ?? .seconds(1)
        guard interval >= .milliseconds(1) else { throw container.invalid(.interval, "interval below 1 ms") }
        requiresPairing = try container.decodeIfPresent(Bool.self, forKey: .requiresPairing) ?? false
        minLength = try container.decodeIfPresent(Int.self, forKey: .minLength) ?? 0
        maxLength = try container.decodeIfPresent(Int.self, forKey: .maxLength) ?? 512
        guard 0 <= minLength, minLength <= maxLength, maxLength <= 512 else {
            throw container.invalid(.maxLength, "expected 0 ≤ min_length ≤ max_length ≤ 512")
        }
        allowedRange = try container.decodeParsedIfPresent(
            [UInt8].self, forKey: .allowedRange, accepted: "[low, high] with low ≤ high ≤ 255"
        ) {
            $0.count == 2 && $0[0] <= $0[1] ? $0[0]...$0[1] : nil
        }
        notifyOnWrite = try container.decodeIfPresent(Bool.self, forKey: .notifyOnWrite) ?? true
        readError =
            try container.decodeParsedIfPresent(
                String.self, forKey: .readError, accepted: ScenarioParsing.refusalForm("read-not-permitted")
            ) { ScenarioParsing.refusal($0, default: ("read-not-permitted", .readNotPermitted)) } ?? .readNotPermitted
        readIgnoresOffset = try container.decodeIfPresent(Bool.self, forKey: .readIgnoresOffset) ?? false
        writeError =
            try container.decodeParsedIfPresent(
                String.self, forKey: .writeError, accepted: ScenarioParsing.refusalForm("write-not-permitted")
            ) { ScenarioParsing.refusal($0, default: ("write-not-permitted", .writeNotPermitted)) }
            ?? .writeNotPermitted
        descriptors = try container.decodeIfPresent([ScenarioDescriptor].self, forKey: .descriptors) ?? []
        if descriptors.contains(where: { $0.uuid == ScenarioDescriptor.clientCharacteristicConfiguration }) {
            throw container.invalid(.descriptors, "the 2902 descriptor is added automatically for notify/indicate")
        }
    }
}

/// A characteristic descriptor (the CCCD `2902` is added automatically for notify/indicate characteristics).
package struct ScenarioDescriptor: Sendable, Equatable, Decodable {
    package static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))

    package var uuid: BluetoothUUID
    package var value: [UInt8]
    /// The peer accepts writes (they replace the value); otherwise it refuses them with `writeError`.
    package var writable: Bool
    /// The peer's answer to a refused write: `writeNotPermitted` by default; `requestNotSupported`
    /// for a BlueZ-based peer's application that does not implement writes.
    package var writeError: ATTError

    package init(uuid: BluetoothUUID, value: [UInt8], writable: Bool = false, writeError: ATTError = .writeNotPermitted)
    {
        self.uuid = uuid
        self.value = value
        self.writable = writable
        self.writeError = writeError
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case uuid, value, text, writable
        case writeError = "write_error"
    }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try container.decodeUUID(forKey: .uuid)
        if let text = try container.decodeIfPresent(String.self, forKey: .text) {
            value = Array(text.utf8)
        } else {
            value =
                try container.decodeHexIfPresent(forKey: .value) ?? []
        }
        writable = try container.decodeIfPresent(Bool.self, forKey: .writable) ?? false
        writeError =
            try container.decodeParsedIfPresent(
                String.self, forKey: .writeError, accepted: ScenarioParsing.refusalForm("write-not-permitted")
            ) { ScenarioParsing.refusal($0, default: ("write-not-permitted", .writeNotPermitted)) }
            ?? .writeNotPermitted
    }
}
