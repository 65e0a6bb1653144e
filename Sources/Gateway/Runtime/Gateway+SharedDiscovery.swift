import Logging
import MQTT
import TaskScope

/// Shared-broker mode and Home Assistant (docs/multi-gateway.md, "Home Assistant: one device"):
/// every gateway announces a device under the same ids (``DiscoveryBuilder/deviceScope``), and
/// only the device's owner announces it, with `via_device` naming its own bridge. When a gateway
/// becomes the owner it announces the device's entities again; the gateway that stops owning it
/// deletes nothing. With no owner nobody announces the device: what the last owner announced
/// stays retained. (Not the speaker: a gateway that has not yet received the others' records
/// takes itself for the speaker, and what it announced would stay, naming it, until the next
/// owner.) Without the mode every gateway announces its devices and nothing here changes anything.
extension Gateway {
    /// Whether this gateway announces (and deletes stale entities of) device `id`'s Home Assistant
    /// entities: always without the mode, in it when it owns the device (or does not govern it).
    func announcesDiscovery(of id: String) -> Bool {
        guard let duty = ownership?.duty(for: id) else { return true }
        return duty == .owner
    }

    /// Shared-broker mode: the node id every gateway announces device `id` under; nil otherwise.
    func sharedNodeID(_ id: String) -> String? {
        guard model.topics.sharedGatewayID != nil else { return nil }
        return DiscoveryBuilder(topics: model.topics, gatewayID: model.configuration.gatewayID).nodeID(id)
    }

    /// After a full announcement: the devices this gateway owns now (their entities went out).
    func noteDiscoveryVoice() {
        guard ownership != nil else { return }
        voicedDiscovery = Set(model.configuration.devices.map(\.id).filter { announcesDiscovery(of: $0) })
        noteRepairDuty()
    }

    /// Tells ``viaRepair`` which devices this gateway owns and has announced.
    private func noteRepairDuty() {
        guard var repair = viaRepair else { return }
        let now = clock.now
        for id in model.configuration.devices.map(\.id) { repair.owning(id, voicedDiscovery.contains(id), at: now) }
        viaRepair = repair
        rescheduleViaRepair()
    }

    /// Subscribes to the Home Assistant config topics (before the client starts, so the retained
    /// ones arrive right after CONNACK) when the mode and discovery are on: the owner announces a
    /// config again when the broker's copy names another gateway's bridge (``ViaDeviceRepair``).
    /// Discovery turned on by a reload is not followed (the mode itself needs a restart too).
    func followDiscoveryConfigs() async {
        guard ownership != nil, model.discoveryBuilder != nil else { return }
        viaRepair = ViaDeviceRepair(bridge: "\(DiscoveryBuilder.sanitize(model.configuration.gatewayID))_bridge")
        await follow(
            "\(model.topics.discoveryPrefix)/+/+/+/config", code: "discovery_configs",
            what: "the Home Assistant configs of the devices"
        ) { await $0.discoveryConfigReceived($1) }
    }

    func discoveryConfigReceived(_ message: MQTTMessage) async {
        guard var repair = viaRepair, let node = DiscoveryBuilder.nodeID(ofTopic: message.topic),
            let id = model.configuration.devices.map(\.id).first(where: { sharedNodeID($0) == node })
        else { return }
        let actions = repair.received(
            topic: message.topic, device: id, via: ViaDeviceRepair.via(ofPayload: message.payload), at: clock.now)
        viaRepair = repair
        await perform(actions)
    }

    private func perform(_ actions: [ViaDeviceRepair.Action]) async {
        for action in actions {
            switch action {
            case .announce(let topic, let id):
                guard announcesDiscovery(of: id), voicedDiscovery.contains(id), client.connectionState.isConnected,
                    !stopping
                else { continue }
                let messages = (model.controlDiscovery[id] ?? []) + pipeline.withRouter { $0.discovery(of: id) }
                guard let message = messages.first(where: { $0.topic == topic }) else { continue }
                logger.info(
                    "announcing again a Home Assistant entity that named another gateway",
                    [("device", id), ("topic", topic)])
                await publish(discovery: [message])
            case .gaveUp(let topic, let id, let bridge):
                logger.warning(
                    "another gateway keeps announcing the device to Home Assistant; left as it is",
                    [("code", "discovery_contested"), ("device", id), ("topic", topic), ("via", bridge)])
            }
        }
        rescheduleViaRepair()
    }

    private func rescheduleViaRepair() {
        viaRepairWakeUp.arm(at: stopping ? nil : viaRepair?.nextDeadline, clock: clock, in: scope) { [weak self] in
            await self?.viaRepairDue()
        }
    }

    private func viaRepairDue() async {
        viaRepairWakeUp.fired()
        guard var repair = viaRepair else { return }
        let actions = repair.tick(at: clock.now)
        viaRepair = repair
        await perform(actions)
    }

    /// The owner of `ids` changed: a device this gateway now owns and did not is announced again
    /// (controls, room, the fields it has seen), so its entities name this gateway's bridge as
    /// `via_device` and its record as availability. A device it no longer owns is left as it is
    /// on the broker (the new owner announces it).
    func discoveryDutyChanged(_ ids: [String]) async {
        guard ownership != nil, model.discoveryBuilder != nil else { return }
        for id in ids {
            guard announcesDiscovery(of: id), model.configuration.device(id: id) != nil else {
                voicedDiscovery.remove(id)
                noteRepairDuty()
                continue
            }
            guard !voicedDiscovery.contains(id), client.connectionState.isConnected, !stopping else { continue }
            voicedDiscovery.insert(id)
            noteRepairDuty()
            let messages = (model.controlDiscovery[id] ?? []) + pipeline.withRouter { $0.discovery(of: id) }
            logger.info("announcing the device to Home Assistant", [("device", id), ("entities", "\(messages.count)")])
            await publish(discovery: messages)
        }
    }
}
