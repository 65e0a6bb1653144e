/// The device a set of Home Assistant entities belongs to.
public struct DiscoveryDevice: Sendable, Hashable {
    public var id: String
    public var name: String
    /// `AA:BB:CC:DD:EE:FF` when known (used for the `connections` block).
    public var address: String?
    /// What the device reported (Device Information service) or its advertisement format
    /// implies; nil when unknown (then left out of discovery).
    public var model: String?
    public var manufacturer: String?
    public var firmware: String?

    public init(
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
public struct DiscoveryMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    /// The device the entity belongs to; nil for the bridge's own entities and removals.
    public var device: String?

    public init(topic: String, payload: [UInt8], device: String? = nil) {
        self.topic = topic
        self.payload = payload
        self.device = device
    }
}
