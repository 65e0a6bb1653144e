import Bluetooth

/// `commands.raw_gatt`: requests on `<base>/bridge/request/gatt/…`. Off by default; when on,
/// only the characteristics in `allow` may be touched, and only with the listed operations.
public struct RawGATTSettings: Sendable, Equatable {
    public var enabled: Bool
    public var allow: [RawGATTRule]

    public init(enabled: Bool = false, allow: [RawGATTRule] = []) {
        self.enabled = enabled
        self.allow = allow
    }

    static let keys = ["enabled", "allow"]

    /// The operations allowed on `characteristic` of `device` (empty when raw GATT is off).
    public func allowedOperations(device: String, characteristic: BluetoothUUID) -> Set<GATTOperation> {
        guard enabled else { return [] }
        var operations: Set<GATTOperation> = []
        for rule in allow where rule.device == device && rule.characteristic == characteristic {
            operations.formUnion(rule.operations)
        }
        return operations
    }
}

/// One allowlist entry of ``RawGATTSettings``.
public struct RawGATTRule: Sendable, Equatable {
    /// A device `id` from `devices`.
    public var device: String
    public var characteristic: BluetoothUUID
    public var operations: [GATTOperation]

    public init(device: String, characteristic: BluetoothUUID, operations: [GATTOperation]) {
        self.device = device
        self.characteristic = characteristic
        self.operations = operations
    }

    static let keys = ["device", "characteristic", "operations"]
}

extension RawGATTSettings: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        enabled = try reader.bool("enabled") ?? false
        allow = try reader.objects(RawGATTRule.self, "allow") ?? []
    }
}

extension RawGATTRule: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        device = try reader.required(try reader.string("device"), "device", accepted: "a device id from devices")
        characteristic = try reader.required(
            try reader.uuid("characteristic", kind: .characteristic), "characteristic",
            accepted: ObjectReader.UUIDKind.characteristic.accepted)
        operations = try reader.required(
            try reader.enumerations(GATTOperation.self, "operations"), "operations",
            accepted: "a list of \(GATTOperation.acceptedValues)")
    }
}
