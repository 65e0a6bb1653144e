import Testing

@testable import BlueZSimulator

@Suite struct AdapterStateTests {
    @Test func discoverySessionsPerClient() throws {
        var adapter = AdapterState(powered: true)
        #expect(try adapter.startDiscovery(sender: ":1.1") == [.discoveringChanged(true)])
        #expect(throws: BlueZError.busy) { try adapter.startDiscovery(sender: ":1.1") }
        #expect(try adapter.startDiscovery(sender: ":1.2") == [.filterChanged])
        #expect(try adapter.stopDiscovery(sender: ":1.1") == [.filterChanged])
        #expect(throws: BlueZError.failed("No discovery started")) { try adapter.stopDiscovery(sender: ":1.1") }
        #expect(adapter.clientVanished(":1.2") == [.discoveringChanged(false)])
        #expect(!adapter.discovering)
    }

    @Test func poweredOffRefusesAndEndsSessions() throws {
        var adapter = AdapterState(powered: true)
        _ = try adapter.startDiscovery(sender: ":1.1")
        #expect(adapter.setPowered(false) == [.discoveringChanged(false), .poweredChanged(false)])
        #expect(throws: BlueZError.notReady) { try adapter.startDiscovery(sender: ":1.1") }
        #expect(throws: BlueZError.notReady) { try adapter.stopDiscovery(sender: ":1.1") }
        #expect(throws: BlueZError.notReady) { try adapter.setDiscoveryFilter(sender: ":1.1", nil) }
        #expect(adapter.setPowered(false) == [])
        #expect(adapter.setPowered(true) == [.poweredChanged(true)])
        #expect(try adapter.startDiscovery(sender: ":1.1") == [.discoveringChanged(true)])
    }

    @Test func presetFilterAppliesOnStart() throws {
        var adapter = AdapterState(powered: true)
        var filter = DiscoveryFilter()
        filter.rssi = -70
        #expect(try adapter.setDiscoveryFilter(sender: ":1.1", filter) == [])
        #expect(!adapter.filtered)
        _ = try adapter.startDiscovery(sender: ":1.1")
        #expect(adapter.filtered)
        #expect(adapter.duplicateData)
        #expect(!adapter.reports { $0.matches(uuids: [], rssi: -80, txPower: nil, name: nil, address: "AA") })
        #expect(adapter.reports { $0.matches(uuids: [], rssi: -60, txPower: nil, name: nil, address: "AA") })
    }

    @Test func filterMatching() {
        var filter = DiscoveryFilter()
        filter.uuids = [.init(UInt16(0x180d))]
        #expect(filter.matches(uuids: [.init(UInt16(0x180d))], rssi: -50, txPower: nil, name: nil, address: "C0"))
        #expect(!filter.matches(uuids: [], rssi: -50, txPower: nil, name: nil, address: "C0"))
        filter = DiscoveryFilter()
        filter.pattern = "Polar"
        #expect(filter.matches(uuids: [], rssi: -50, txPower: nil, name: "Polar H10", address: "C0"))
        #expect(!filter.matches(uuids: [], rssi: -50, txPower: nil, name: "Lamp", address: "C0"))
        filter = DiscoveryFilter()
        filter.pathloss = 60
        #expect(filter.matches(uuids: [], rssi: -50, txPower: 4, name: nil, address: "C0"))
        #expect(!filter.matches(uuids: [], rssi: -70, txPower: 4, name: nil, address: "C0"))
    }

    @Test func agentRegistry() throws {
        var agents = AgentRegistry()
        #expect(throws: BlueZError.invalidArguments) {
            try agents.register(owner: ":1.1", path: "/a", capability: "Telepathy")
        }
        try agents.register(owner: ":1.1", path: "/a", capability: "")
        #expect(agents.agents[":1.1"]?.capability == "KeyboardDisplay")
        #expect(throws: BlueZError.alreadyExists) {
            try agents.register(owner: ":1.1", path: "/b", capability: "DisplayOnly")
        }
        #expect(throws: BlueZError.doesNotExist) { try agents.requestDefault(owner: ":1.2", path: "/a") }
        try agents.requestDefault(owner: ":1.1", path: "/a")
        #expect(agents.agent(for: ":1.9")?.path == "/a")
        agents.clientVanished(":1.1")
        #expect(agents.agent(for: ":1.9") == nil)
    }
}
