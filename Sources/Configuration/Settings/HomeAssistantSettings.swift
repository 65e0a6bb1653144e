/// `homeassistant`: MQTT discovery for Home Assistant.
package struct HomeAssistantSettings: Sendable, Equatable {
    package var enabled: Bool
    /// Discovery topic prefix (Home Assistant's `discovery_prefix`).
    package var prefix: String
    /// Where Home Assistant announces `online` after it starts (discovery is re-sent then).
    package var statusTopic: String

    package init(enabled: Bool = true, prefix: String = "homeassistant", statusTopic: String = "homeassistant/status") {
        self.enabled = enabled
        self.prefix = prefix
        self.statusTopic = statusTopic
    }

    static let keys = ["enabled", "prefix", "status_topic"]
}

extension HomeAssistantSettings: Decodable {
    package init(from decoder: any Decoder) throws {
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
