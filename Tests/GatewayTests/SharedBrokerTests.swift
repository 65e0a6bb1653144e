import Configuration
import Foundation
import JSON
import TestSupport
import Testing

@testable import Gateway

/// Shared-broker mode's pure parts: the topics (and that nothing moves with the mode off), the
/// record, the record's rate bound, the table of peers.
@Suite struct SharedBrokerTests {
    /// With the mode off every topic and bridge payload is byte-for-byte what it was before the mode existed.
    @Test func withTheModeOffEverySingleGatewayTopicAndPayloadIsUnchanged() throws {
        let configuration = try ConfigurationLoader().decode(Data(#"{"gateway_id":"gw-a"}"#.utf8))
        #expect(!configuration.mqtt.sharedBroker)
        let topics = GatewayModel(configuration: configuration).topics
        #expect(topics.sharedGatewayID == nil)
        #expect(topics.gatewayRecord == nil)
        #expect(topics.bridgeState == "blebridge/bridge/state")
        #expect(topics.bridgeInfo == "blebridge/bridge/info")
        #expect(topics.bridgeDevices == "blebridge/bridge/devices")
        #expect(topics.bridgeHealth == "blebridge/bridge/health")
        #expect(topics.bridgeEvent == "blebridge/bridge/event")
        #expect(topics.bridgeLogging == "blebridge/bridge/logging")
        #expect(
            topics.commandFilters == [
                "blebridge/+/set", "blebridge/+/get", "blebridge/+/set/+", "blebridge/+/get/+",
                "blebridge/bridge/request/#",
            ])
        #expect(
            Gateway.subscribedFilters(GatewayModel(configuration: configuration))
                == topics.commandFilters + ["homeassistant/status"])
        let mqtt = try Gateway.mqttConfiguration(configuration, options: GatewayOptions())
        #expect(mqtt.will?.topic == "blebridge/bridge/state")
        #expect(String(decoding: mqtt.will?.payload ?? [], as: UTF8.self) == #"{"state":"offline"}"#)
        #expect(mqtt.will?.retain == true)
        #expect(String(decoding: BridgePayloads.online.bytes, as: UTF8.self) == #"{"state":"online"}"#)
        #expect(String(decoding: Gateway.offlineState(configuration), as: UTF8.self) == #"{"state":"offline"}"#)
        let health = HealthSnapshot(
            uptime: .seconds(1), connections: 0, maxConnections: 5, outboxDepth: 0, oldestUnsentAge: nil, dropped: 0,
            reconnects: 0, published: 0, commands: 0, commandsRefused: 0, time: Date(timeIntervalSince1970: 0))
        #expect(!String(decoding: health.json.bytes, as: UTF8.self).contains("gateways"))
    }

    @Test func withTheModeOnTheGatewaysOwnTopicsMoveUnderItsRecord() throws {
        let configuration = try ConfigurationLoader().decode(
            Data(#"{"gateway_id":"gw-a","mqtt":{"shared_broker":true}}"#.utf8))
        let model = GatewayModel(configuration: configuration)
        let topics = model.topics
        #expect(topics.gatewayRecord == "blebridge/bridge/gateways/gw-a")
        #expect(topics.bridgeState == "blebridge/bridge/gateways/gw-a")
        #expect(topics.bridgeInfo == "blebridge/bridge/gateways/gw-a/info")
        #expect(topics.bridgeDevices == "blebridge/bridge/gateways/gw-a/devices")
        #expect(topics.bridgeHealth == "blebridge/bridge/gateways/gw-a/health")
        #expect(topics.gatewayRecords == "blebridge/bridge/gateways/+")
        // What stays shared: devices, commands, requests, events, discovery.
        #expect(topics.device("lamp") == "blebridge/lamp")
        #expect(topics.availability("lamp") == "blebridge/lamp/availability")
        #expect(topics.request(.devices) == "blebridge/bridge/request/devices")
        #expect(topics.bridgeEvent == "blebridge/bridge/event")
        // Each gateway also takes requests on its own topic, answered on its own response topic.
        #expect(topics.commandFilters.last == "blebridge/bridge/gateways/gw-a/request/#")
        #expect(topics.classify("blebridge/bridge/gateways/gw-a/request/devices") == .request(.devices))
        #expect(topics.classify("blebridge/bridge/gateways/gw-a/request/gatt/read") == .request(.gattRead))
        #expect(topics.classify("blebridge/bridge/gateways/gw-a/request/nope") == .unknownRequest("nope"))
        #expect(topics.classify("blebridge/bridge/gateways/gw-b/request/devices") == nil)
        #expect(topics.isGatewayRequest("blebridge/bridge/gateways/gw-a/request/scan"))
        #expect(!topics.isGatewayRequest("blebridge/bridge/request/scan"))
        #expect(topics.gatewayResponse(.gattRead) == "blebridge/bridge/gateways/gw-a/response/gatt/read")
        #expect(topics.gatewayResponse(unknownRequest: "nope/x") == "blebridge/bridge/gateways/gw-a/response/nope")
        #expect(topics.gatewayID(ofRecord: "blebridge/bridge/gateways/gw-b") == "gw-b")
        #expect(topics.gatewayID(ofRecord: "blebridge/bridge/gateways/gw-b/info") == nil)
        #expect(topics.gatewayID(ofRecord: "blebridge/bridge/gateways/") == nil)
        #expect(topics.gatewayID(ofRecord: "other/bridge/gateways/gw-b") == nil)
        let mqtt = try Gateway.mqttConfiguration(configuration, options: GatewayOptions())
        #expect(mqtt.will?.topic == "blebridge/bridge/gateways/gw-a")
        #expect(
            String(decoding: mqtt.will?.payload ?? [], as: UTF8.self) == #"{"state":"offline","gateway_id":"gw-a"}"#)
        // Home Assistant's availability template reads the record as it reads bridge/state.
        let discovery = try #require(model.discoveryBuilder)
        #expect(
            discovery.availability
                == .array([
                    .object([
                        JSONMember("topic", "blebridge/bridge/gateways/gw-a"),
                        JSONMember("value_template", "{{ value_json.state }}"),
                    ])
                ]))
    }

    @Test func theSwitchIsStrictlyValidated() {
        for json in [
            #"{"gateway_id":"gw-a","mqtt":{"shared_broker":"yes"}}"#,
            #"{"gateway_id":"gw-a","mqtt":{"shared_broker":1}}"#,
            // Every gateway on the broker needs its own id: the default is refused.
            #"{"mqtt":{"shared_broker":true}}"#,
            #"{"gateway_id":"gw-a","mqtt":{"shared":true}}"#,
        ] {
            #expect(throws: ConfigurationError.self, "\(json)") { try ConfigurationLoader().decode(Data(json.utf8)) }
        }
        let error = expectThrows(ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(#"{"mqtt":{"shared_broker":true}}"#.utf8))
        }
        #expect(error?.keyPath == "gateway_id")
        #expect(error?.code == .missingKey)
    }

    /// The will was registered on the record's topic: a reload cannot move the bridge topics.
    @Test func aReloadKeepsTheModeAndTheGatewayIDItStartedWith() async throws {
        let directory = try TemporaryDirectory()
        let gateway = try await unstartedGateway(
            in: directory, json: #"{"gateway_id":"gw-a","mqtt":{"shared_broker":true}}"#)
        await gateway.reload(try ConfigurationLoader().decode(Data(#"{"gateway_id":"gw-b"}"#.utf8)))
        #expect(await gateway.model.topics.gatewayRecord == "blebridge/bridge/gateways/gw-a")
        #expect(await gateway.model.configuration.gatewayID == "gw-a")
        await gateway.stop()
        // Off at start stays off; the gateway id of single-gateway mode reloads as before.
        let singleDirectory = try TemporaryDirectory()
        let single = try await unstartedGateway(in: singleDirectory, json: #"{"gateway_id":"gw-a"}"#)
        await single.reload(
            try ConfigurationLoader().decode(Data(#"{"gateway_id":"gw-b","mqtt":{"shared_broker":true}}"#.utf8)))
        #expect(await single.model.topics.gatewayRecord == nil)
        #expect(await single.model.topics.bridgeState == "blebridge/bridge/state")
        #expect(await single.model.configuration.gatewayID == "gw-b")
        await single.stop()
    }

    @Test func aClientIDSharedByTheGatewaysIsWarnedAbout() throws {
        let named = try ConfigurationLoader().decode(
            Data(#"{"gateway_id":"gw-a","mqtt":{"shared_broker":true,"client_id":"blebridge"}}"#.utf8))
        #expect(named.warnings.contains { $0.contains("mqtt.client_id is \"blebridge\"") })
        let defaulted = try ConfigurationLoader().decode(
            Data(#"{"gateway_id":"gw-a","mqtt":{"shared_broker":true}}"#.utf8))
        #expect(defaulted.mqtt.clientID == "gw-a")
        #expect(!defaulted.warnings.contains { $0.contains("client_id") })
        // check-config says the mode is on, and says nothing of it when it is off.
        #expect(
            defaulted.summaryLines.contains {
                $0.hasPrefix("shared broker") && $0.contains("blebridge/bridge/gateways/gw-a")
            })
        let off = try ConfigurationLoader().decode(Data(#"{"gateway_id":"gw-a"}"#.utf8))
        #expect(!off.summaryLines.contains { $0.contains("shared broker") })
    }

    @Test func theRecordSaysVersionAdapterFreeSlotsAndLoadAndReadsBack() {
        let record = GatewayRecord(
            state: .online, gatewayID: "gw-a", version: "0.1.0", adapter: "hci1", maxConnections: 5, freeSlots: 3,
            connections: 2, readingsPerSecond: 12.345, started: Date(timeIntervalSince1970: 0))
        #expect(
            String(decoding: record.json.bytes, as: UTF8.self)
                == #"{"state":"online","gateway_id":"gw-a","version":"0.1.0","adapter":"hci1","max_connections":5,"free_slots":3,"load":{"connections":2,"readings_per_s":12.3},"started":"1970-01-01T00:00:00.000Z"}"#
        )
        let read = GatewayRecord(payload: record.json.bytes, gatewayID: "gw-a")
        #expect(read?.freeSlots == 3)
        #expect(read?.connections == 2)
        #expect(read?.readingsPerSecond == 12.3)
        #expect(GatewayRecord(payload: Array("online".utf8), gatewayID: "x") == nil)
        #expect(GatewayRecord(payload: Array(#"{"state":"asleep"}"#.utf8), gatewayID: "x") == nil)
    }

    @Test func theRecordGoesOutOnChangeAtMostOncePerInterval() {
        let t0 = ContinuousClock.now
        var schedule = GatewayRecordSchedule(minimumInterval: .seconds(1))
        let a: [UInt8] = [1]
        let b: [UInt8] = [2]
        let c: [UInt8] = [3]
        #expect(schedule.offer(a, at: t0) == .publish(a))
        schedule.published(a, at: t0)
        #expect(schedule.offer(a, at: t0 + .seconds(5)) == .none)
        // Two changes within the interval: one timer, the newest content at its end.
        #expect(schedule.offer(b, at: t0 + .seconds(5)) == .publish(b))
        schedule.published(b, at: t0 + .seconds(5))
        #expect(schedule.offer(c, at: t0 + .milliseconds(5200)) == .wait(until: t0 + .seconds(6)))
        #expect(schedule.offer(a, at: t0 + .milliseconds(5500)) == .none)
        #expect(schedule.due(at: t0 + .seconds(6)) == .publish(a))
        schedule.published(a, at: t0 + .seconds(6))
        // Changed and changed back within the interval: nothing goes out.
        #expect(schedule.offer(b, at: t0 + .milliseconds(6100)) == .wait(until: t0 + .seconds(7)))
        #expect(schedule.offer(a, at: t0 + .milliseconds(6200)) == .none)
        #expect(schedule.due(at: t0 + .seconds(7)) == .none)
        // A new connection publishes at once.
        schedule.reset()
        #expect(schedule.offer(a, at: t0 + .milliseconds(7100)) == .publish(a))
    }

    @Test func peersAreFollowedFromTheirRecordsAndWills() {
        var peers = GatewayPeers(me: "gw-a")
        let t = Date(timeIntervalSince1970: 100)
        let online = GatewayRecord(state: .online, gatewayID: "gw-b", version: "0.1.0", adapter: "hci0", freeSlots: 4)
        #expect(peers.received(gatewayID: "gw-a", payload: online.json.bytes, at: t) == .none)
        #expect(peers.received(gatewayID: "gw-b", payload: online.json.bytes, at: t) == .joined("gw-b", .online))
        #expect(peers.received(gatewayID: "gw-b", payload: online.json.bytes, at: t + 1) == .none)
        var fewer = online
        fewer.freeSlots = 3
        #expect(peers.received(gatewayID: "gw-b", payload: fewer.json.bytes, at: t + 2) == .updated("gw-b"))
        #expect(peers.online == ["gw-b"])
        let will = GatewayRecord.offline(gatewayID: "gw-b").json.bytes
        #expect(peers.received(gatewayID: "gw-b", payload: will, at: t + 3) == .state("gw-b", .offline))
        #expect(peers.online.isEmpty)
        #expect(peers.received(gatewayID: "gw-b", payload: Array("garbage".utf8), at: t + 4) == .invalid("gw-b"))
        #expect(peers.peers["gw-b"]?.record.state == .offline)
        #expect(
            String(decoding: peers.json.bytes, as: UTF8.self)
                == #"[{"id":"gw-b","state":"offline","since":"1970-01-01T00:01:43.000Z"}]"#)
        #expect(peers.received(gatewayID: "gw-b", payload: [], at: t + 5) == .removed("gw-b"))
        #expect(peers.received(gatewayID: "gw-b", payload: [], at: t + 6) == .none)
    }
}
