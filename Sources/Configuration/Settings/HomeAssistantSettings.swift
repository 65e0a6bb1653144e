/// `homeassistant`: MQTT discovery for Home Assistant.
public struct HomeAssistantSettings: Sendable, Equatable {
    public var enabled: Bool
    /// Discovery topic prefix (Home Assistant's `discovery_prefix`).
    public var prefix: String
    /// Where Home Assistant announces `online` after it starts (discovery is re-sent then).
    public var statusTopic: String

    public init(enabled: Bool = true, prefix: String = "homeassistant", statusTopic: String = "homeassistant/status") {
        self.enabled = enabled
        self.prefix = prefix
        self.statusTopic = statusTopic
    }

    static let keys = ["enabled", "prefix", "status_topic"]
}

extension HomeAssistantSettings: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = HomeAssistantSettings()
        enabled = try reader.bool("enabled") ?? defaults.enabled
        prefix = try reader.string("prefix", expected: "a topic such as \"homeassistant\"") ?? defaults.prefix
        if let problem = TopicRules.problem(inTopic: prefix) {
            throw reader.error("prefix", .invalidValue, "\"\(prefix)\" \(problem)")
        }
        statusTopic =
            try reader.string("status_topic", expected: "a topic such as \"homeassistant/status\"")
            ?? defaults.statusTopic
        if let problem = TopicRules.problem(inTopic: statusTopic) {
            throw reader.error("status_topic", .invalidValue, "\"\(statusTopic)\" \(problem)")
        }
    }
}
