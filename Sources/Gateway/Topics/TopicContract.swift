/// Every MQTT topic the gateway publishes or subscribes to, built from the base topic.
///
/// The contract is documented in docs/mqtt.md; this type is its single source in code.
public struct TopicContract: Sendable, Hashable {
    /// `blebridge` unless configured otherwise; never ends with `/`.
    public let base: String
    /// Home Assistant's discovery prefix (`homeassistant`).
    public let discoveryPrefix: String
    /// Where Home Assistant announces itself (`homeassistant/status`).
    public let homeAssistantStatus: String

    public init(
        base: String = "blebridge", discoveryPrefix: String = "homeassistant",
        homeAssistantStatus: String = "homeassistant/status"
    ) {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.discoveryPrefix = discoveryPrefix
        self.homeAssistantStatus = homeAssistantStatus
    }

    // Bridge topics.
    public var bridgeState: String { "\(base)/bridge/state" }
    public var bridgeInfo: String { "\(base)/bridge/info" }
    public var bridgeDevices: String { "\(base)/bridge/devices" }
    public var bridgeHealth: String { "\(base)/bridge/health" }
    public var bridgeLog: String { "\(base)/bridge/log" }

    // Device topics.
    public func device(_ id: String) -> String { "\(base)/\(id)" }
    public func availability(_ id: String) -> String { "\(base)/\(id)/availability" }
    public func set(_ id: String) -> String { "\(base)/\(id)/set" }
    public func get(_ id: String) -> String { "\(base)/\(id)/get" }
    /// Optional raw per-characteristic topic (`raw_topics`): hex payload.
    public func raw(_ id: String, characteristic: String) -> String { "\(base)/\(id)/raw/\(characteristic)" }

    // Requests and responses.
    public func request(_ kind: BridgeRequestKind) -> String { "\(base)/bridge/request/\(kind.rawValue)" }
    public func response(_ kind: BridgeRequestKind) -> String { "\(base)/bridge/response/\(kind.rawValue)" }
    /// Responses to `<device>/set` and `<device>/get` when the caller gave no MQTT 5 response topic.
    public func response(device id: String, _ operation: DeviceOperation) -> String {
        "\(base)/bridge/response/\(id)/\(operation.rawValue)"
    }

    /// Home Assistant discovery config topic for one entity.
    public func discovery(component: String, nodeID: String, objectID: String) -> String {
        "\(discoveryPrefix)/\(component)/\(nodeID)/\(objectID)/config"
    }

    /// The filters the gateway subscribes to for commands.
    public var commandFilters: [String] {
        ["\(base)/+/set", "\(base)/+/get", "\(base)/bridge/request/#"]
    }

    /// Classifies an incoming topic.
    public func classify(_ topic: String) -> InboundTopic? {
        if topic == homeAssistantStatus { return .homeAssistantStatus }
        let prefix = base + "/"
        guard topic.hasPrefix(prefix) else { return nil }
        let parts = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(
            String.init)
        if parts.count >= 3, parts[0] == "bridge", parts[1] == "request" {
            let kind = parts[2...].joined(separator: "/")
            guard let request = BridgeRequestKind(rawValue: kind) else { return .unknownRequest(kind) }
            return .request(request)
        }
        if parts.count == 2, parts[0] != "bridge", !parts[0].isEmpty {
            switch parts[1] {
            case "set": return .device(parts[0], .set)
            case "get": return .device(parts[0], .get)
            default: return nil
            }
        }
        return nil
    }
}

/// `set` or `get` on a device topic.
public enum DeviceOperation: String, Sendable, Hashable {
    case set, get
}

/// The requests under `<base>/bridge/request/`.
public enum BridgeRequestKind: String, Sendable, Hashable, CaseIterable {
    case gattRead = "gatt/read"
    case gattWrite = "gatt/write"
    case gattNotify = "gatt/notify"
    case scan
    case connect
    case disconnect
    case devices
}

/// What an incoming message is, by its topic.
public enum InboundTopic: Sendable, Hashable {
    case device(String, DeviceOperation)
    case request(BridgeRequestKind)
    /// Under `bridge/request/` but not a known request: answered with `invalid_request`.
    case unknownRequest(String)
    case homeAssistantStatus
}
