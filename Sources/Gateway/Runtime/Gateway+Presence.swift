import Configuration
import Decoders
import Foundation
import JSON
import Logging
import MQTT
import TaskScope
import Timekeeping

/// Room presence (`presence.room`, docs/multi-gateway.md, "Room presence").
/// ``PresenceCoordinator`` decides; this feeds it and performs its actions. Without a room
/// ``Gateway/presence`` is nil and nothing here publishes or subscribes anything.
extension Gateway {
    /// The coordinator for `configuration`, nil unless `presence.room` is set.
    static func makePresence(_ configuration: BridgeConfiguration) -> PresenceCoordinator? {
        guard configuration.presence.enabled else { return nil }
        var txPower: [String: Int] = [:]
        for device in configuration.devices { txPower[device.id] = device.txPower }
        return PresenceCoordinator(settings: PresenceCoordinator.Settings(configuration.presence), txPower: txPower)
    }

    /// A device advertised with `rssi`; `readings` are what its advertisement decoded to (an
    /// iBeacon's or an Eddystone's says its signal at 1 m).
    func presenceHeard(_ id: String, rssi: Int?, readings: [DecodedReading]) async {
        // bluetoothd sends the RSSI only when it moved (an unchanged advertisement comes with its
        // data alone, DuplicateData): the device's last known RSSI is still its RSSI.
        guard presence != nil, let rssi = rssi ?? devices[id]?.rssi else { return }
        var advertised: Int?
        for reading in readings where reading.isSuccess {
            var numbers: [String: Double] = [:]
            for field in reading.fields { numbers[field.name] = field.value.doubleValue }
            advertised = PresenceCoordinator.advertisedPower(decoder: reading.decoder, fields: numbers) ?? advertised
        }
        await presenceEvent(.heard(id, rssi: rssi, advertised: advertised))
    }

    /// Feeds the coordinator one event and performs what it decides.
    func presenceEvent(_ event: PresenceCoordinator.Event) async {
        guard var coordinator = presence else { return }
        let actions = coordinator.handle(event, at: clock.now)
        presence = coordinator
        for action in actions { perform(action) }
        reschedulePresenceTimer()
    }

    private func perform(_ action: PresenceCoordinator.Action) {
        let configuration = model.configuration
        switch action {
        case .publish(let device, let rssi, let distance):
            guard let room = configuration.presence.room else { return }
            let report = PresenceReport(rssi: rssi, distance: distance, room: room, time: clock.date)
            send(
                MQTTMessage(
                    topic: model.topics.presence(device, gateway: configuration.gatewayID),
                    payload: report.json.bytes, qos: .atMostOnce, retain: false))
        case .room(let device, let choice):
            publishRoom(device, choice)
        }
    }

    /// Publishes the device's room (retained) when this gateway speaks for the device: always in
    /// single-gateway mode; in shared-broker mode its owner (or, with none, the speaker), so the
    /// room goes out once although every gateway computes it.
    func publishRoom(_ device: String, _ choice: RoomElection.Choice?) {
        guard speaksFor(device) else { return }
        let payload = JSONValue.object([
            JSONMember("room", .string(choice?.room ?? Self.away)),
            JSONMember("gateway", choice.map { .string($0.gateway) } ?? .null),
            JSONMember("ts", .string(Timestamp.iso8601(clock.date))),
        ])
        send(MQTTMessage(topic: model.topics.room(device), payload: payload.bytes, qos: .atLeastOnce, retain: true))
    }

    /// The room of a device no gateway hears (Home Assistant's word for away).
    static let away = "not_home"

    /// The device's owner changed: the new speaker publishes the room it computes.
    func presenceOwnerChanged(_ device: String) {
        guard let presence, presence.announcing, let choice = presence.room(of: device) else { return }
        publishRoom(device, choice)
    }

    /// One timer, at the coordinator's next deadline (a report timing out, a room's switch delay
    /// or the warm-up ending, a held device's renewal).
    private func reschedulePresenceTimer() {
        presenceWakeUp.arm(at: stopping ? nil : presence?.nextDeadline, clock: clock, in: scope) { [weak self] in
            await self?.presenceDue()
        }
    }

    private func presenceDue() async {
        presenceWakeUp.fired()
        await presenceEvent(.tick)
    }

    /// Subscribes to every gateway's presence reports (before the client starts) and reads them
    /// for as long as the gateway runs.
    func followPresence() async {
        guard presence != nil else { return }
        await follow(model.topics.presenceReports, code: "presence", what: "the presence reports") {
            await $0.presenceReceived($1)
        }
    }

    func presenceReceived(_ message: MQTTMessage) async {
        guard let (device, gateway) = model.topics.presence(ofTopic: message.topic), devices[device] != nil else {
            return
        }
        guard let report = PresenceReport(payload: message.payload) else {
            logger.warning(
                "ignored a presence report that is not one",
                [("code", "invalid_presence"), ("gateway", gateway), ("device", device)])
            return
        }
        await presenceEvent(.report(gateway: gateway, device: device, report))
    }
}
