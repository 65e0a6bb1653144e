import Gateway
import Testing

@Suite struct ResponseTopicPolicyTests {
    let policy = ResponseTopicPolicy(
        topics: TopicContract(base: "blebridge"), deviceIDs: ["lamp", "hr_strap"],
        extraPrefixes: ["apps/replies", "e2e/"])

    @Test(arguments: [
        "blebridge/myapp/answers", "blebridge/bridge/response/mine", "blebridge/bridge/response/lamp/set",
        "apps/replies", "apps/replies/1", "e2e/x",
    ])
    func allowsTopicsUnderTheBaseAndTheConfiguredPrefixes(_ topic: String) {
        #expect(policy.problem(with: topic) == nil)
    }

    @Test(arguments: [
        "homeassistant/status", "homeassistant/sensor/blebridge_lamp/power/config", "blebridge/bridge/state",
        "blebridge/bridge/info", "blebridge/bridge/health", "blebridge/bridge/devices", "blebridge/bridge/log",
        "blebridge/bridge/request/scan", "blebridge/bridge/response", "blebridge/lamp", "blebridge/lamp/availability",
        "blebridge/lamp/raw/2a19", "blebridge/other/set", "blebridge/other/get", "blebridge/other/set/power",
        "blebridge/other/get/x", "blebridge", "apps/repliesX",
        "apps/other", "e2e", "elsewhere", "blebridge/a+b", "e2e/" + String(repeating: "a", count: 2045),
    ])
    func refusesEverythingElse(_ topic: String) {
        #expect(policy.problem(with: topic) != nil)
    }

    @Test func aPrefixCannotOpenHomeAssistantsTopics() {
        let wide = ResponseTopicPolicy(
            topics: TopicContract(base: "blebridge"), deviceIDs: [], extraPrefixes: ["homeassistant"])
        #expect(wide.problem(with: "homeassistant/status") != nil)
        #expect(wide.problem(with: "homeassistant/sensor/x/y/config") != nil)
        #expect(policy.problem(with: "e2e/" + String(repeating: "a", count: 2044)) == nil)
    }
}
