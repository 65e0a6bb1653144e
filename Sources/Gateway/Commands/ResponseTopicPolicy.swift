import JSON

/// Which MQTT 5 response topics a request may name (docs/mqtt.md, "Response topics").
///
/// Allowed: topics under `<base>/` and under the configured `mqtt.response_topic_prefixes`, at
/// most ``maximumBytes`` long, that are not the gateway's own: the `bridge/` topics other than
/// `bridge/response/…`, a configured device's topics (state, availability, raw, set, get), any
/// `<base>/<level>/set|get` and `<base>/<level>/set|get/<name>` command topic, Home Assistant's discovery prefix and status topic.
/// Everything else is refused, so a client that may only publish commands cannot make the
/// gateway write a topic only the gateway may write.
public struct ResponseTopicPolicy: Sendable {
    /// The longest response topic accepted, in UTF-8 bytes.
    package static let maximumBytes = 2048

    let topics: TopicContract
    let deviceIDs: Set<String>
    let extraPrefixes: [String]

    public init(topics: TopicContract, deviceIDs: Set<String>, extraPrefixes: [String]) {
        self.topics = topics
        self.deviceIDs = deviceIDs
        self.extraPrefixes = extraPrefixes
    }

    /// Why `topic` may not be a response topic, or nil when it may.
    public func problem(with topic: String) -> String? {
        let length = topic.utf8.count
        if length > Self.maximumBytes {
            return "the response topic is \(length) bytes; at most \(Self.maximumBytes) are accepted"
        }
        if topic.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) {
            return "the response topic contains a wildcard or NUL"
        }
        if Self.isUnder(topics.discoveryPrefix, topic) || topic.utf8Equals(topics.homeAssistantStatus) {
            return "the response topic is Home Assistant's; answers may not go there"
        }
        if let levels = TopicContract.levels(of: topic, after: topics.base + "/") { return ownedUnderBase(levels) }
        if extraPrefixes.contains(where: { Self.isUnder($0, topic) }) { return nil }
        return "the response topic is outside \(topics.base)/ and mqtt.response_topic_prefixes"
    }

    /// Levels compared byte for byte, as the broker compares them (``TopicContract/levels(of:after:)``).
    private func ownedUnderBase(_ levels: [String]) -> String? {
        let gatewayOwned = "the response topic is one the gateway publishes or reads itself"
        let first = levels.first ?? ""
        if first.utf8Equals("bridge") {
            return levels.count > 2 && levels[1].utf8Equals("response") ? nil : gatewayOwned
        }
        if deviceIDs.contains(where: { $0.utf8Equals(first) }) { return gatewayOwned }
        if levels.count == 2 || levels.count == 3, levels[1].utf8Equals("set") || levels[1].utf8Equals("get") {
            return gatewayOwned
        }
        return nil
    }

    /// Whether `topic` is `prefix` itself or below it (a prefix ending in `/` matches below only).
    static func isUnder(_ prefix: String, _ topic: String) -> Bool {
        if prefix.utf8.last == UInt8(ascii: "/") {
            return topic.utf8HasPrefix(prefix) && topic.utf8.count > prefix.utf8.count
        }
        return topic.utf8Equals(prefix) || topic.utf8HasPrefix(prefix + "/")
    }
}
