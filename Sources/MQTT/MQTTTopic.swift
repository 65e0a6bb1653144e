/// Topic names and filters: validation and wildcard matching (MQTT 3.1.1 §4.7, MQTT 5 §4.7–4.8).
///
/// Pure Swift so that the routing of received messages to subscription streams is unit-tested
/// without a broker.
package enum MQTTTopic {
    /// Checks a topic name for publishing: non-empty, at most 65,535 UTF-8 bytes, no NUL, no
    /// wildcards. Throws ``MQTTError/Code/invalidTopic``.
    package static func validateName(_ topic: String) throws(MQTTError) {
        if topic.isEmpty { throw MQTTError(.invalidTopic, "empty topic") }
        var hasWildcard = false
        var hasNUL = false
        for byte in topic.utf8 {  // one pass: this runs for every publish
            hasWildcard = hasWildcard || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#")
            hasNUL = hasNUL || byte == 0
        }
        if hasNUL || topic.utf8.count > 65535 { try validateCommon(topic, kind: "topic") }
        if hasWildcard {
            throw MQTTError(
                .invalidTopic, "topic '\(topic)' contains a wildcard (+ or #); wildcards are only for subscriptions")
        }
    }

    /// Checks a topic filter for subscribing: `+` only as a whole level, `#` only as the whole last
    /// level; `$share/<group>/<filter>` accepted. Throws ``MQTTError/Code/invalidTopic``.
    package static func validateFilter(_ filter: String) throws(MQTTError) {
        try validateCommon(filter, kind: "topic filter")
        let levels = matchedPart(of: filter).split(separator: "/", omittingEmptySubsequences: false)
        if filter.hasPrefix("$share/") {
            let parts = filter.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[1].isEmpty, !parts[1].contains("+"), !parts[1].contains("#"),
                !parts[2].isEmpty
            else {
                throw MQTTError(.invalidTopic, "shared subscription '\(filter)' must be $share/<group>/<filter>")
            }
        }
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                throw MQTTError(.invalidTopic, "topic filter '\(filter)': # must be the whole last level")
            }
            if level.contains("+") && level != "+" {
                throw MQTTError(.invalidTopic, "topic filter '\(filter)': + must be a whole level")
            }
        }
    }

    /// True when `topic` (a name, no wildcards) matches `filter`. Filters starting with a wildcard
    /// do not match topics starting with `$` (e.g. `$SYS/…`). `$share/<group>/` is ignored.
    package static func matches(filter: String, topic: String) -> Bool {
        let filterLevels = matchedPart(of: filter).utf8.split(
            separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let topicLevels = topic.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        if topic.utf8.first == UInt8(ascii: "$"), let first = filterLevels.first,
            first.elementsEqual("+".utf8) || first.elementsEqual("#".utf8)
        {
            return false
        }
        var index = 0
        while index < filterLevels.count {
            let level = filterLevels[index]
            if level.elementsEqual("#".utf8) { return true }  // also matches the parent level
            guard index < topicLevels.count else { return false }
            if !level.elementsEqual("+".utf8) && !level.elementsEqual(topicLevels[index]) { return false }
            index += 1
        }
        return index == topicLevels.count
    }

    /// The filter that is matched against topics: without a `$share/<group>/` prefix.
    static func matchedPart(of filter: String) -> Substring {
        guard filter.hasPrefix("$share/") else { return filter[...] }
        let parts = filter.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 ? parts[2] : filter[...]
    }

    private static func validateCommon(_ text: String, kind: String) throws(MQTTError) {
        if text.isEmpty { throw MQTTError(.invalidTopic, "empty \(kind)") }
        if text.utf8.count > 65535 { throw MQTTError(.invalidTopic, "\(kind) longer than 65,535 bytes") }
        if text.utf8.contains(0) { throw MQTTError(.invalidTopic, "\(kind) '\(text)' contains a NUL character") }
    }
}
