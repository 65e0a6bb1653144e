import Testing

@testable import MQTT

@Suite struct MQTTTopicTests {
    @Test(arguments: [
        ("a/b/c", "a/b/c", true), ("a/+/c", "a/b/c", true), ("a/+/c", "a/b/d", false), ("a/#", "a", true),
        ("a/#", "a/b/c", true), ("#", "a/b", true), ("+", "a", true), ("+", "a/b", false), ("+/+", "/b", true),
        ("a/+", "a/", true), ("a/b", "a/b/c", false), ("a/b/c", "a/b", false), ("#", "$SYS/broker", false),
        ("+/broker", "$SYS/broker", false), ("$SYS/#", "$SYS/broker", true), ("$share/g/a/+", "a/b", true),
        ("$share/g/a/+", "$share/g/a/b", false),
    ])
    func filterMatching(filter: String, topic: String, expected: Bool) {
        #expect(MQTTTopic.matches(filter: filter, topic: topic) == expected, "\(filter) vs \(topic)")
    }

    @Test func publishTopicsRejectWildcardsAndEmptiness() {
        for bad in ["", "a/+", "a/#", "#", "a\u{0}b"] {
            #expect(throws: MQTTError.self) { try MQTTTopic.validateName(bad) }
            do { try MQTTTopic.validateName(bad) } catch { #expect(error.code == .invalidTopic) }
        }
        #expect(throws: Never.self) { try MQTTTopic.validateName("blebridge/lamp/set") }
    }

    @Test func filtersPlaceWildcardsOnlyAsWholeLevels() {
        for good in ["#", "+", "a/+/b", "a/#", "+/+/#", "$share/group/a/#"] {
            #expect(throws: Never.self) { try MQTTTopic.validateFilter(good) }
        }
        for bad in ["", "a/#/b", "a#", "a/b+", "+a/b", "$share/group", "$share//a"] {
            #expect(throws: MQTTError.self, "\(bad)") { try MQTTTopic.validateFilter(bad) }
        }
    }
}
