import Foundation
import Logging
import MQTT
import TaskScope
import Timekeeping

/// Shared-broker mode: who holds each connected device (docs/multi-gateway.md, "Ownership of
/// connected devices"). ``OwnershipCoordinator`` decides; this feeds it and performs its actions.
/// Without the mode ``Gateway/ownership`` is nil and nothing here runs.
extension Gateway {
    /// The coordinator for `configuration`, nil unless `mqtt.shared_broker` is on.
    static func makeOwnership(_ model: GatewayModel) -> OwnershipCoordinator? {
        let configuration = model.configuration
        guard configuration.mqtt.sharedBroker else { return nil }
        return OwnershipCoordinator(
            me: configuration.gatewayID, devices: governedDevices(model), passive: passiveDevices(model),
            freeSlots: configuration.bluetooth.maxConnections)
    }

    /// The connected devices under ownership: every configured device that is not passive.
    static func governedDevices(_ model: GatewayModel) -> Set<String> {
        Set(model.schedulerSpecs.filter { $0.mode != .passive }.map(\.id))
    }

    /// The passive devices under ownership (automatic ones included): their owner alone publishes them.
    static func passiveDevices(_ model: GatewayModel) -> Set<String> {
        Set(model.schedulerSpecs.filter { $0.mode == .passive }.map(\.id))
    }

    /// Whether this gateway publishes the device's advertisement readings (always without the mode).
    func publishesReadings(of id: String) -> Bool {
        ownership?.publishes(id) ?? true
    }

    /// Feeds the coordinator one event and performs what it decides, after what earlier events
    /// decided: when another event's actions are being performed (this actor re-entered at one of
    /// their awaits), that caller performs these too, in order (``OrderedActions``).
    func ownershipEvent(_ event: OwnershipCoordinator.Event) async {
        guard var coordinator = ownership else { return }
        let actions = coordinator.handle(event, at: clock.now)
        ownership = coordinator
        if ownershipActions.add(actions) {
            while let action = ownershipActions.next() { await perform(action) }
        }
        rescheduleOwnershipTimer()
    }

    private func perform(_ action: OwnershipCoordinator.Action) async {
        switch action {
        case .publish(let device, let candidacy):
            guard let topic = model.topics.candidacy(device) else { return }
            send(MQTTMessage(topic: topic, payload: candidacy.json.bytes, qos: .atLeastOnce, retain: true))
        case .withdraw(let device):
            guard let topic = model.topics.candidacy(device) else { return }
            send(MQTTMessage(topic: topic, payload: [], qos: .atLeastOnce, retain: true))
        case .take(let device):
            guard ownership?.isPassive(device) != true else {
                logger.info("publishing the passive device", [("device", device)])
                return
            }
            logger.info("taking the device", [("device", device)])
            await poolEvent(.owned(device, true))
        case .release(let device):
            guard ownership?.isPassive(device) != true else {
                logger.info("leaving the passive device to another gateway", [("device", device)])
                return
            }
            logger.info("releasing the device", [("device", device)])
            await poolEvent(.owned(device, false))
        case .ownerChanged(let device, let from, let to):
            logger.info("owner changed", [("device", device), ("from", from ?? "-"), ("to", to ?? "-")])
            // The owner (or, with none, the speaker) publishes the device's availability.
            await publishAvailability(device)
            presenceOwnerChanged(device)
            // The new owner announces the device to Home Assistant.
            await discoveryDutyChanged([device])
        }
    }

    /// One timer, at the coordinator's next deadline (a candidacy due by its rate bound or
    /// renewal, a sample leaving the window, a switch delay ending).
    private func rescheduleOwnershipTimer() {
        ownershipWakeUp.arm(at: stopping ? nil : ownership?.nextDeadline, clock: clock, in: scope) { [weak self] in
            await self?.ownershipDue()
        }
    }

    private func ownershipDue() async {
        ownershipWakeUp.fired()
        await ownershipEvent(.tick)
    }

    /// The device's link on this gateway changed: the candidacy says whether it holds it, and the
    /// free slots of every candidacy follow.
    func ownershipLinked(_ id: String, _ up: Bool) async {
        guard ownership != nil else { return }
        await ownershipEvent(.linked(id, up))
        await ownershipEvent(.freeSlots(currentRecord().freeSlots ?? 0))
    }

    /// BlueZ removed the device's object (bluetoothd's `TemporaryTimeout` after its last
    /// advertisement, or a `RemoveDevice`): until then a device reported once is still heard.
    func deviceVanished(_ id: String) async {
        await ownershipEvent(.vanished(id))
    }

    /// Whether this gateway speaks for the device (its commands, its availability): always
    /// without the mode; in it, when it owns the device, or nobody does and it is the speaker.
    func speaksFor(_ id: String) -> Bool {
        guard let duty = ownership?.duty(for: id) else { return true }
        if case .silent = duty { return false }
        return true
    }

    /// Subscribes to every gateway's candidacies (before the client starts, so the retained ones
    /// arrive right after CONNACK) and reads them for as long as the gateway runs.
    func followCandidacies() async {
        guard ownership != nil else { return }
        await follow(model.topics.candidacies, code: "candidacies", what: "the candidacies of the other gateways") {
            await $0.candidacyReceived($1)
        }
    }

    func candidacyReceived(_ message: MQTTMessage) async {
        guard let topic = model.topics.candidacy(ofTopic: message.topic) else { return }
        let (gateway, device) = topic
        // This gateway's own retained candidacy is what an earlier run left: the new connection
        // replaces it (``OwnershipCoordinator/Event/broker(connected:)``); only the echo of what
        // this run publishes counts.
        if gateway == model.configuration.gatewayID, message.retain { return }
        var candidacy: OwnershipCandidacy?
        if !message.payload.isEmpty {
            candidacy = OwnershipCandidacy(payload: message.payload)
            guard candidacy != nil else {
                logger.warning(
                    "ignored a candidacy that is not one",
                    [("code", "invalid_candidacy"), ("gateway", gateway), ("device", device)])
                return
            }
        }
        noteCandidacy(gateway: gateway, device: device, up: candidacy != nil)
        await ownershipEvent(.candidacy(gateway: gateway, device: device, candidacy))
    }
}
