import Foundation
import JSON

/// What the gateway remembers about a device across restarts (the Linux counterpart of Core
/// Bluetooth's state restoration): its address, resolved services, active subscriptions and
/// when it was last seen, so it can reconnect directly and resume every subscription.
package struct KnownPeripheral: Sendable, Hashable {
    package var deviceID: String
    /// `AA:BB:CC:DD:EE:FF`.
    package var address: String
    /// `public` or `random`.
    package var addressType: String
    /// Resolved service UUIDs (short form where SIG-assigned).
    package var services: [String]
    /// Characteristics with notifications/indications enabled.
    package var subscriptions: [String]
    package var lastSeen: Date

    package init(
        deviceID: String, address: String, addressType: String, services: [String], subscriptions: [String],
        lastSeen: Date
    ) {
        self.deviceID = deviceID
        self.address = address
        self.addressType = addressType
        self.services = services
        self.subscriptions = subscriptions
        self.lastSeen = lastSeen
    }

    /// Key in the state table.
    package static func key(_ deviceID: String) -> String { "peripheral/\(deviceID)" }
    package static let keyPrefix = "peripheral/"

    package var json: JSONValue {
        .object([
            JSONMember("device", .string(deviceID)),
            JSONMember("address", .string(address)),
            JSONMember("address_type", .string(addressType)),
            JSONMember("services", .array(services.map { .string($0) })),
            JSONMember("subscriptions", .array(subscriptions.map { .string($0) })),
            JSONMember("last_seen", .double(lastSeen.timeIntervalSince1970)),
        ])
    }

    package init?(json: JSONValue) {
        guard let deviceID = json["device"]?.stringValue, let address = json["address"]?.stringValue,
            let addressType = json["address_type"]?.stringValue, let lastSeen = json["last_seen"]?.doubleValue,
            case .array(let services) = json["services"], case .array(let subscriptions) = json["subscriptions"]
        else { return nil }
        self.init(
            deviceID: deviceID, address: address, addressType: addressType,
            services: services.compactMap(\.stringValue), subscriptions: subscriptions.compactMap(\.stringValue),
            lastSeen: Date(timeIntervalSince1970: lastSeen))
    }
}
