import Foundation
import JSON
import Logging
import MQTT

/// Zigbee2MQTT-style bridge topics: `bridge/request/config/reload`, `bridge/request/restart`,
/// `bridge/logging` and `bridge/event` (docs/mqtt.md).
extension Gateway {
    /// Records buffered for `bridge/logging` while a publish is under way; older ones are dropped.
    static let loggingBacklog = 200

    /// `config/reload` and `restart`: handed to the owner of the gateway (``controlRequests``),
    /// or answered `not_allowed` when it does not carry them out.
    func dispatchControl(_ pending: PendingCommand, kind: GatewayControlRequest.Kind) {
        let transaction = pending.command.transaction
        guard options.controlRequests.contains(kind) else {
            respond(
                CommandResponse.error(
                    CommandFailure(
                        .notAllowed, "\(kind.rawValue) over MQTT is available under `blebridge run` only",
                        transaction: transaction)), to: pending.reply)
            return
        }
        let reply = pending.reply
        switch kind {
        case .restart:
            // Answered first: the answer leaves with the drain of the graceful stop.
            logger.notice("restart requested over MQTT", [("topic", pending.command.source)])
            respond(CommandResponse.ok(transaction: transaction, data: nil), to: reply)
            controlContinuation.yield(GatewayControlRequest(kind: .restart, answer: { _ in }))
        case .reload:
            logger.notice("configuration reload requested over MQTT", [("topic", pending.command.source)])
            controlContinuation.yield(
                GatewayControlRequest(kind: .reload) { [weak self] failure in
                    await self?.answerReload(failure, transaction: transaction, reply: reply)
                })
        }
    }

    func answerReload(_ failure: String?, transaction: JSONValue?, reply: ReplyTarget) {
        if let failure {
            respond(
                CommandResponse.error(CommandFailure(.invalidValue, failure, transaction: transaction)), to: reply)
        } else {
            respond(CommandResponse.ok(transaction: transaction, data: nil), to: reply)
        }
    }

    // MARK: bridge/event

    /// Kinds of `bridge/event` (docs/mqtt.md, *Bridge events*).
    enum DeviceEvent: String {
        /// A configured device was seen (or restored) for the first time since start or since a reload added it.
        case joined = "device_joined"
        /// A configured device was bound to an address it was never bound to before.
        case adopted = "device_adopted"
        /// A reload removed the device from the configuration.
        case left = "device_left"
    }

    /// Publishes `{"type":"device_joined","data":{…}}` on `bridge/event` (not retained, QoS 1); while
    /// the broker is away the latest 100 wait for the next connection.
    func publishEvent(_ event: DeviceEvent, device id: String, _ data: [JSONMember] = []) {
        let payload = JSONValue.object([
            JSONMember("type", .string(event.rawValue)),
            JSONMember("data", .object([JSONMember("id", .string(id))] + data)),
        ])
        let message = MQTTMessage(topic: model.topics.bridgeEvent, payload: payload.bytes, qos: .atLeastOnce)
        logger.debug("bridge event", [("type", event.rawValue), ("device", id)])
        guard client.connectionState.isConnected else {
            pendingEvents.append(message)
            if pendingEvents.count > 100 { pendingEvents.removeFirst(pendingEvents.count - 100) }
            return
        }
        send(message)
    }

    /// Sends the events decided while the broker was away (after a connection).
    func flushPendingEvents() {
        let waiting = pendingEvents
        pendingEvents = []
        for message in waiting { send(message) }
    }

    /// `joined` for the first sighting since start, and `adopted` when the address is new for the device.
    func deviceJoined(_ id: String, address: String) async {
        publishEvent(.joined, device: id, [JSONMember("address", .string(address))])
        let previous = (try? await state.adoptedAddress(deviceID: id)) ?? nil
        guard previous != address else { return }
        try? await state.setAdoptedAddress(address, deviceID: id)
        var data = [JSONMember("address", .string(address))]
        if let previous { data.append(JSONMember("previous_address", .string(previous))) }
        publishEvent(.adopted, device: id, data)
    }

    // MARK: bridge/logging

    /// Taps the process log for warnings and errors and publishes them on `bridge/logging`
    /// (QoS 0, not retained) while the broker is connected; nothing is kept for later, and a
    /// failed publish is not logged (it would feed itself).
    func startBridgeLogging() {
        let continuation = loggingContinuation
        loggingTap = LogConfiguration.shared.addTap(minimum: .warning, LogSink { continuation.yield($0) })
        let (records, client, topic) = (loggingRecords, client, model.topics.bridgeLogging)
        startLoop {
            for await record in records where client.connectionState.isConnected {
                let payload = JSONValue.object([
                    JSONMember("level", .string(record.level.description)),
                    JSONMember("label", .string(record.label)),
                    JSONMember("message", .string(record.text)),
                ])
                try? await client.publish(MQTTMessage(topic: topic, payload: payload.bytes, qos: .atMostOnce))
            }
        }
    }

    func stopBridgeLogging() {
        if let loggingTap { LogConfiguration.shared.removeTap(loggingTap) }
        loggingTap = nil
        loggingContinuation.finish()
    }
}
