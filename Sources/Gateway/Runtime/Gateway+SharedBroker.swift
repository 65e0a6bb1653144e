import Configuration
import Foundation
import JSON
import Logging
import MQTT
import TaskScope
import Timekeeping

/// Shared-broker mode (`mqtt.shared_broker`, docs/multi-gateway.md): the gateway record on
/// `<base>/bridge/gateways/<gateway_id>` and the table of the other gateways. Without the mode
/// nothing here publishes or subscribes anything.
extension Gateway {
    /// The payload of the bridge state topic when the gateway goes away: the last will and the
    /// clean shutdown. Single-gateway mode: `{"state":"offline"}` on `bridge/state`, as always.
    static func offlineState(_ configuration: BridgeConfiguration) -> [UInt8] {
        guard configuration.mqtt.sharedBroker else { return BridgePayloads.offline.bytes }
        return GatewayRecord.offline(gatewayID: configuration.gatewayID).json.bytes
    }

    /// A reload keeps the running `mqtt.shared_broker`, and in that mode the `gateway_id`: the
    /// last will was registered on the record's topic at connect time, so moving the bridge topics
    /// without a restart would leave a will that says nothing about them.
    static func keepingSharedBroker(
        of running: BridgeConfiguration, in new: BridgeConfiguration, logger: Logger
    ) -> BridgeConfiguration {
        var kept = new
        kept.mqtt.sharedBroker = running.mqtt.sharedBroker
        if running.mqtt.sharedBroker { kept.gatewayID = running.gatewayID }
        if kept.mqtt.sharedBroker != new.mqtt.sharedBroker || kept.gatewayID != new.gatewayID {
            logger.warning(
                "reload: mqtt.shared_broker and, in that mode, gateway_id apply only after a restart",
                [("code", "restart_needed")])
        }
        return kept
    }

    /// This gateway's record as it is now.
    func currentRecord() -> GatewayRecord {
        let settings = model.configuration.bluetooth
        // The count `updateStatus` compares (it calls ``refreshGatewayRecord()`` when it changes):
        // the pool hears of a connection only after that call.
        let connected = model.configuration.devices.filter { devices[$0.id]?.connected == true }.count
        return GatewayRecord(
            state: .online, gatewayID: model.configuration.gatewayID, version: BLEBridgeVersion.string,
            adapter: settings.adapter, maxConnections: settings.maxConnections,
            freeSlots: max(0, settings.maxConnections - connected), connections: connected,
            readingsPerSecond: readingsPerSecond, started: startedAt)
    }

    /// Publishes the record when it changed (retained, through the response queue so it leaves in
    /// order with the rest), at most once per ``GatewayRecordSchedule/minimumInterval``: a change
    /// that comes sooner arms one timer for the end of the interval.
    func refreshGatewayRecord() {
        guard let topic = model.topics.gatewayRecord, !stopping, client.connectionState.isConnected else { return }
        let now = clock.now
        perform(recordSchedule.offer(currentRecord().json.bytes, at: now), topic: topic, now: now)
    }

    private func perform(_ action: GatewayRecordSchedule.Action, topic: String, now: ContinuousClock.Instant) {
        switch action {
        case .publish(let payload):
            send(MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: true))
            recordSchedule.published(payload, at: now)
        case .wait(let instant):
            recordTimer?.cancel()
            // The record's rate bound: a change within the interval goes out at its end.
            recordTimer = scope.spawnTimer(at: instant, clock: clock) { [weak self] in await self?.gatewayRecordDue() }
        case .none:
            break
        }
    }

    private func gatewayRecordDue() {
        guard let topic = model.topics.gatewayRecord, !stopping, client.connectionState.isConnected else { return }
        let now = clock.now
        // The newest content, not the one that waited.
        _ = recordSchedule.due(at: now)
        perform(recordSchedule.offer(currentRecord().json.bytes, at: now), topic: topic, now: now)
    }

    /// The health timer's outbox figures: readings published per second since the last tick.
    func sampleLoad(published: Int) {
        let now = clock.now
        if let sample = loadSample, now > sample.at, published >= sample.published {
            readingsPerSecond = Double(published - sample.published) / (now - sample.at).inSeconds
        }
        loadSample = (published, now)
        refreshGatewayRecord()
    }

    /// Subscribes to every gateway's record (before the client starts, so the retained ones
    /// arrive right after CONNACK) and reads them for as long as the gateway runs.
    func followGateways() async {
        guard model.topics.gatewayRecord != nil else { return }
        await follow(model.topics.gatewayRecords, code: "gateway_records", what: "the other gateways") {
            await $0.gatewayRecordReceived($1)
        }
    }

    /// Subscribes to `filter` with its retained messages and hands every message to `handle` for
    /// as long as the gateway runs; a refused subscription is logged with `code`.
    func follow(
        _ filter: String, code: String, what: String,
        _ handle: @escaping @Sendable (Gateway, MQTTMessage) async -> Void
    ) async {
        do {
            let messages = try await client.subscribe(filter, qos: .atLeastOnce, retainedAtSubscribe: true)
            startLoop { [weak self] in
                for await message in messages {
                    guard let self else { return }
                    await handle(self, message)
                }
            }
        } catch {
            logger.error("cannot follow \(what)", [("code", code), ("filter", filter), ("error", "\(error)")])
        }
    }

    func gatewayRecordReceived(_ message: MQTTMessage) async {
        guard let id = model.topics.gatewayID(ofRecord: message.topic) else { return }
        let change = peers.received(gatewayID: id, payload: message.payload, at: message.receivedAt ?? clock.date)
        switch change {
        case .joined(let id, let state):
            logger.info("gateway found", [("gateway", id), ("state", state.rawValue)])
            await ownershipEvent(.gateway(id, online: state == .online))
            await presenceEvent(.gateway(id, online: state == .online))
        case .state(let id, let state):
            logger.info("gateway \(state.rawValue)", [("gateway", id)])
            await ownershipEvent(.gateway(id, online: state == .online))
            await presenceEvent(.gateway(id, online: state == .online))
        case .removed(let id):
            logger.info("gateway removed", [("gateway", id)])
            await ownershipEvent(.gateway(id, online: false))
            await presenceEvent(.gateway(id, online: false))
        case .invalid(let id):
            logger.warning(
                "ignored a gateway record that is not one", [("code", "invalid_gateway_record"), ("gateway", id)])
            return
        case .updated, .none:
            return
        }
        // Who is there changed: tell at once (as a change of Bluetooth's availability does).
        await publishHealth(try? await publisher.stats())
    }
}
