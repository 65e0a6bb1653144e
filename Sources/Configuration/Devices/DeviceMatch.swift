import Bluetooth

/// `devices[].match`: how an advertiser is recognised as this device. Every given criterion must
/// hold; at least one is required.
package struct DeviceMatch: Sendable, Equatable {
    package var address: BluetoothAddress?
    /// The advertised local name starts with this.
    package var namePrefix: String?
    /// The advertisement lists this service UUID (or carries service data for it).
    package var service: BluetoothUUID?

    package init(address: BluetoothAddress? = nil, namePrefix: String? = nil, service: BluetoothUUID? = nil) {
        self.address = address
        self.namePrefix = namePrefix
        self.service = service
    }

    static let keys = ["address", "address_type", "name_prefix", "service"]

    /// Whether an advertiser with these properties is this device; `services` are the advertised
    /// service UUIDs together with the UUIDs the advertisement carries service data for.
    package func matches(address: BluetoothAddress?, name: String?, services: [BluetoothUUID]) -> Bool {
        if let expected = self.address, address?.bytes != expected.bytes { return false }
        if let namePrefix, !(name?.hasPrefix(namePrefix) ?? false) { return false }
        if let service, !services.contains(service) { return false }
        return true
    }

    package var summary: String {
        var parts: [String] = []
        if let address { parts.append("address \(address)\(address.type == .random ? " (random)" : "")") }
        if let namePrefix { parts.append("name \"\(namePrefix)…\"") }
        if let service { parts.append("service \(AssignedNumbers.serviceName(for: service) ?? service.description)") }
        return parts.joined(separator: ", ")
    }
}

extension DeviceMatch: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let addressAccepted = "an address such as \"C0:FF:EE:00:00:01\""
        if let text = try reader.string("address", expected: addressAccepted) {
            guard let parsed = BluetoothAddress(text) else {
                throw reader.error(
                    "address", .invalidValue, "\"\(text)\" is not a Bluetooth address; expected \(addressAccepted)")
            }
            address = parsed
        }
        if let typeText = try reader.string("address_type", expected: "\"public\" or \"random\"") {
            guard let type = BluetoothAddress.AddressType(rawValue: typeText) else {
                throw reader.error(
                    "address_type", .invalidValue, "\"\(typeText)\" is not accepted; expected \"public\" or \"random\"")
            }
            guard address != nil else {
                throw reader.error("address_type", .conflict, "address_type needs an address")
            }
            address?.type = type
        }
        namePrefix = try reader.nonEmptyString(
            "name_prefix", expected: "the start of the advertised name, e.g. \"Polar\"")
        service = try reader.uuid("service", kind: .service)
        if address == nil, namePrefix == nil, service == nil {
            throw reader.error(.missingKey, "give at least one of address, name_prefix or service")
        }
    }
}
