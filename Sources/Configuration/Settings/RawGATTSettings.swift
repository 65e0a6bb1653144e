import Bluetooth

/// `commands.raw_gatt`: requests on `<base>/bridge/request/gatt/…`. Off by default; when on,
/// only the characteristics in `allow` may be touched (within the service an entry names, when it
/// names one), and only with the listed operations.
package struct RawGATTSettings: Sendable, Equatable {
    package var enabled: Bool
    package var allow: [RawGATTRule]

    package init(enabled: Bool = false, allow: [RawGATTRule] = []) {
        self.enabled = enabled
        self.allow = allow
    }

    static let keys = ["enabled", "allow"]

    /// The operations allowed on `characteristic` of `device` in `service` (empty when raw GATT
    /// is off). An entry without a service allows the characteristic in every service; with
    /// `service` nil only such entries count.
    package func allowedOperations(
        device: String, characteristic: BluetoothUUID, service: BluetoothUUID? = nil
    ) -> Set<GATTOperation> {
        guard enabled else { return [] }
        var operations: Set<GATTOperation> = []
        for rule in allow
        where rule.device == device && rule.characteristic == characteristic
            && (rule.service == nil || rule.service == service)
        {
            operations.formUnion(rule.operations)
        }
        return operations
    }
}

/// One allowlist entry of ``RawGATTSettings``.
package struct RawGATTRule: Sendable, Equatable {
    /// A device `id` from `devices`.
    package var device: String
    package var characteristic: BluetoothUUID
    /// The service holding it; nil: the characteristic in any service of the device.
    package var service: BluetoothUUID?
    package var operations: [GATTOperation]

    package init(
        device: String, characteristic: BluetoothUUID, service: BluetoothUUID? = nil, operations: [GATTOperation]
    ) {
        self.device = device
        self.characteristic = characteristic
        self.service = service
        self.operations = operations
    }

    static let keys = ["device", "characteristic", "service", "operations"]
}

extension RawGATTSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        enabled = try reader.bool("enabled") ?? false
        allow = try reader.objects(RawGATTRule.self, "allow") ?? []
    }
}

extension RawGATTRule: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        device = try reader.required(try reader.string("device"), "device", accepted: "a device id from devices")
        characteristic = try reader.required(
            try reader.uuid("characteristic", kind: .characteristic), "characteristic",
            accepted: ObjectReader.UUIDKind.characteristic.accepted)
        service = try reader.uuid("service", kind: .service)
        operations = try reader.required(
            try reader.enumerations(GATTOperation.self, "operations"), "operations",
            accepted: "a list of \(GATTOperation.acceptedValues)")
    }
}
