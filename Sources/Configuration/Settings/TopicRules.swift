/// What MQTT allows in the topics and topic levels the configuration names.
enum TopicRules {
    /// Why `topic` cannot be used as a publish topic prefix, or nil when it can.
    static func problem(inTopic topic: String) -> String? {
        if topic.isEmpty { return "is empty; expected a topic such as \"blebridge\"" }
        if topic.contains("+") || topic.contains("#") { return "contains a wildcard (+ or #); expected a plain topic" }
        if topic.hasPrefix("/") || topic.hasSuffix("/") || topic.contains("//") {
            return "has an empty level; expected levels separated by single '/', e.g. \"home/blebridge\""
        }
        if topic.hasPrefix("$") { return "starts with '$', which brokers reserve" }
        if topic.unicodeScalars.contains(where: { $0.value == 0 }) {
            return "contains U+0000 (NUL), which MQTT forbids in topics"
        }
        if topic.utf8.count > 1024 { return "is too long" }
        return nil
    }

    /// Whether `name` is a usable single topic level made of `[A-Za-z0-9_-]`.
    static func isIdentifier(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-")
            }
    }

    static let identifierRule = "1 to 64 letters, digits, '_' or '-' (it becomes an MQTT topic level)"
}
