/// The device a set of Home Assistant entities belongs to.
package struct DiscoveryDevice: Sendable, Hashable {
    package var id: String
    package var name: String
    /// `AA:BB:CC:DD:EE:FF` when known (used for the `connections` block).
    package var address: String?
    /// What the device reported (Device Information service) or its advertisement format
    /// implies; nil when unknown (then left out of discovery).
    package var model: String?
    package var manufacturer: String?
    package var firmware: String?

    package init(
        id: String, name: String, address: String? = nil, model: String? = nil, manufacturer: String? = nil,
        firmware: String? = nil
    ) {
        self.id = id
        self.name = name
        self.address = address
        self.model = model
        self.manufacturer = manufacturer
        self.firmware = firmware
    }
}

/// One retained discovery message: topic and payload (empty payload = remove the entity).
package struct DiscoveryMessage: Sendable, Hashable {
    package var topic: String
    package var payload: [UInt8]
    /// The device the entity belongs to; nil for the bridge's own entities and removals.
    package var device: String?

    package init(topic: String, payload: [UInt8], device: String? = nil) {
        self.topic = topic
        self.payload = payload
        self.device = device
    }
}
