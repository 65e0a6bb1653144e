import Gateway
import Testing

@Suite struct TopicContractTests {
    let topics = TopicContract(base: "blebridge/")

    @Test func buildsEveryTopicOfTheContract() {
        #expect(topics.bridgeState == "blebridge/bridge/state")
        #expect(topics.bridgeInfo == "blebridge/bridge/info")
        #expect(topics.bridgeDevices == "blebridge/bridge/devices")
        #expect(topics.bridgeHealth == "blebridge/bridge/health")
        #expect(topics.device("hr_strap") == "blebridge/hr_strap")
        #expect(topics.availability("hr_strap") == "blebridge/hr_strap/availability")
        #expect(topics.set("lamp") == "blebridge/lamp/set")
        #expect(topics.get("lamp") == "blebridge/lamp/get")
        #expect(topics.request(.gattWrite) == "blebridge/bridge/request/gatt/write")
        #expect(topics.response(.gattWrite) == "blebridge/bridge/response/gatt/write")
        #expect(topics.response(device: "lamp", .set) == "blebridge/bridge/response/lamp/set")
        #expect(
            topics.discovery(component: "sensor", nodeID: "gw_hr", objectID: "heart_rate")
                == "homeassistant/sensor/gw_hr/heart_rate/config")
    }

    @Test func classifiesIncomingTopics() {
        #expect(topics.classify("blebridge/lamp/set") == .device("lamp", .set))
        #expect(topics.classify("blebridge/lamp/get") == .device("lamp", .get))
        #expect(topics.classify("blebridge/bridge/request/gatt/read") == .request(.gattRead))
        #expect(topics.classify("blebridge/bridge/request/devices") == .request(.devices))
        #expect(topics.classify("blebridge/bridge/request/reboot") == .unknownRequest("reboot"))
        #expect(topics.classify("homeassistant/status") == .homeAssistantStatus)
        #expect(topics.classify("blebridge/lamp") == nil)
        // Topics that cannot name a device are still classified, so they get an answer (unknown_device).
        #expect(topics.classify("blebridge/bridge/set") == .device("bridge", .set))
        #expect(topics.classify("blebridge//get") == .device("", .get))
        #expect(topics.classify("other/lamp/set") == nil)
        // Zigbee2MQTT's `<device>/set/<name>` and `<device>/get/<name>`; deeper levels are not commands.
        #expect(topics.classify("blebridge/lamp/set/power") == .deviceAttribute("lamp", .set, "power"))
        #expect(topics.classify("blebridge/lamp/get/battery") == .deviceAttribute("lamp", .get, "battery"))
        #expect(topics.classify("blebridge/lamp/set/") == .deviceAttribute("lamp", .set, ""))
        #expect(topics.classify("blebridge/lamp/set/x/y") == nil)
        #expect(topics.classify("blebridge/lamp/availability/x") == nil)
        #expect(topics.classify("blebridge/bridge/request/restart") == .request(.restart))
        #expect(topics.classify("blebridge/bridge/request/config/reload") == .request(.configReload))
        #expect(topics.commandFilters.contains("blebridge/+/set/+"))
        #expect(topics.commandFilters.contains("blebridge/+/get/+"))
        #expect(topics.bridgeLogging == "blebridge/bridge/logging")
        #expect(topics.bridgeEvent == "blebridge/bridge/event")
    }

    /// Issue 19: levels are split at every `/` byte and compared byte for byte, as the broker
    /// matched the topic. By characters, `/` and a combining accent after it are one character, so
    /// `blebridge/<U+0301>/set` did not start with `blebridge/` and went unanswered.
    @Test func levelsAreSplitAtEverySlashByteAndComparedByBytes() {
        #expect(topics.classify("blebridge/\u{301}/set") == .device("\u{301}", .set))
        #expect(topics.classify("blebridge/lamp/\u{301}set") == nil)
        #expect(topics.classify("blebridge/bridge/request/devices\u{301}") == .unknownRequest("devices\u{301}"))
        let cluster = "a" + String(repeating: "\u{301}", count: 7_000)
        #expect(topics.classify("blebridge/\(cluster)/set") == .device(cluster, .set))
        #expect(topics.classify("blebridge/lamp/set/\(cluster)") == .deviceAttribute("lamp", .set, cluster))
        #expect(topics.response(unknownRequest: "\u{301}/x") == "blebridge/bridge/response/invalid_request")
        // The Kelvin sign is canonically equivalent to `K` (`==` says equal); the bytes differ.
        guard case .device(let id, .set) = topics.classify("blebridge/\u{212A}/set") else {
            Issue.record("not classified as a device command")
            return
        }
        #expect(Array(id.utf8) == [0xE2, 0x84, 0xAA])
    }

    @Test func defaultAnswerTopicsStayShortWhateverTheRequestTopic() {
        #expect(topics.response(device: "lamp", .set) == "blebridge/bridge/response/lamp/set")
        #expect(topics.response(device: "bridge", .set) == "blebridge/bridge/response/set")
        #expect(topics.response(device: "", .get) == "blebridge/bridge/response/get")
        #expect(topics.response(device: String(repeating: "d", count: 65_530), .set) == "blebridge/bridge/response/set")
        #expect(topics.response(device: "a b", .set) == "blebridge/bridge/response/set")
        #expect(topics.response(unknownRequest: "reboot/now") == "blebridge/bridge/response/reboot")
        #expect(
            topics.response(unknownRequest: String(repeating: "r", count: 65_000))
                == "blebridge/bridge/response/invalid_request")
    }
}
