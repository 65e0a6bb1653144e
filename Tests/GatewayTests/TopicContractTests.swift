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
        #expect(topics.classify("blebridge/bridge/set") == nil)
        #expect(topics.classify("other/lamp/set") == nil)
        #expect(topics.classify("blebridge/lamp/set/x") == nil)
    }
}
