import Foundation
import JSON
import MQTT

/// Commands from MQTT: validate, queue for the device, execute through the pool, answer.
extension Gateway {
    /// A validated command waiting for its device, with where to answer.
    struct PendingCommand: Sendable {
        var id: Int
        var command: ValidatedCommand
        var reply: ReplyTarget
    }

    /// Where and how to answer one request.
    struct ReplyTarget: Sendable {
        var topic: String
        var correlationData: [UInt8]?
    }

    func received(_ message: MQTTMessage) async {
        guard let kind = model.topics.classify(message.topic) else { return }
        if kind == .homeAssistantStatus {
            homeAssistantStatus(message.payload)
            return
        }
        let reply = replyTarget(for: message, kind: kind)
        guard !stopping else {
            respond(
                CommandResponse.error(
                    CommandFailure(
                        .deviceUnavailable, "the gateway is shutting down",
                        transaction: gate.transaction(in: message.payload))), to: reply)
            return
        }
        counters.commands += 1
        switch gate.admit(topic: message.topic, kind: kind, payload: message.payload, at: .now) {
        case .failure(let failure):
            counters.commandsRefused += 1
            logger.notice(
                "command refused",
                [("topic", message.topic), ("code", failure.code.rawValue), ("reason", failure.message)])
            respond(CommandResponse.error(failure), to: reply)
        case .success(let command):
            logger.info(
                "command accepted",
                [
                    ("topic", message.topic), ("steps", "\(command.steps.count)"),
                    ("transaction", command.transaction?.serialized ?? "-"),
                ])
            nextCommandID += 1
            await dispatch(PendingCommand(id: nextCommandID, command: command, reply: reply))
        }
    }

    func replyTarget(for message: MQTTMessage, kind: InboundTopic) -> ReplyTarget {
        if let topic = message.properties.responseTopic, !topic.isEmpty, !topic.contains("+"), !topic.contains("#") {
            return ReplyTarget(topic: topic, correlationData: message.properties.correlationData)
        }
        let topic: String
        switch kind {
        case .device(let id, let operation): topic = model.topics.response(device: id, operation)
        case .request(let request): topic = model.topics.response(request)
        case .unknownRequest(let name):
            topic =
                "\(model.topics.base)/bridge/response/\(name.split(separator: "/").first.map(String.init) ?? "unknown")"
        case .homeAssistantStatus: topic = model.topics.response(.devices)
        }
        return ReplyTarget(topic: topic, correlationData: message.properties.correlationData)
    }

    func respond(_ payload: JSONValue, to reply: ReplyTarget) {
        var properties = MQTTProperties()
        if model.configuration.mqtt.protocolVersion == .v5 {
            properties.correlationData = reply.correlationData
            properties.contentType = "application/json"
        }
        send(MQTTMessage(topic: reply.topic, payload: payload.bytes, qos: .atLeastOnce, properties: properties))
    }

    func dispatch(_ pending: PendingCommand) async {
        let command = pending.command
        switch command.steps.first {
        case .listDevices:
            let summaries = model.configuration.devices.map { device in
                let status = devices[device.id] ?? DeviceStatus()
                return DeviceSummary(
                    id: device.id, name: device.name, address: status.address, connection: device.connection.rawValue,
                    connected: status.connected, rssi: status.rssi, lastSeen: status.lastSeen, services: status.services
                )
            }
            respond(
                CommandResponse.ok(transaction: command.transaction, data: DeviceSummary.list(summaries)),
                to: pending.reply)
        case .scan(let duration):
            guard let ble else {
                respond(
                    CommandResponse.error(
                        CommandFailure(.deviceUnavailable, "Bluetooth is not running", transaction: command.transaction)
                    ), to: pending.reply)
                return
            }
            commandsInFlight += 1
            let found = await ble.scanSnapshot(for: duration)
            commandsInFlight -= 1
            respond(
                CommandResponse.ok(transaction: command.transaction, data: .object([JSONMember("devices", found)])),
                to: pending.reply)
        default:
            guard let id = command.device else {
                respond(
                    CommandResponse.error(
                        CommandFailure(.internal, "command without a device", transaction: command.transaction)),
                    to: pending.reply)
                return
            }
            guard model.configuration.device(id: id)?.connection != .passive else {
                respond(
                    CommandResponse.error(
                        CommandFailure(
                            .notAllowed, "\(id) is passive (never connected)", transaction: command.transaction)),
                    to: pending.reply)
                return
            }
            guard devices[id]?.lastSeen != nil || devices[id]?.connected == true else {
                respond(
                    CommandResponse.error(
                        CommandFailure(
                            .deviceUnavailable, "\(id) has not been seen by the adapter yet",
                            transaction: command.transaction)),
                    to: pending.reply)
                return
            }
            pendingCommands[id, default: []].append(pending)
            let timeout = commandTimeout
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.expire(commandID: pending.id, device: id)
            }
            await perform(scheduler.handle(.commandQueued(id), at: .now))
        }
    }

    /// Runs the device's queued commands on its connection (pool action `runCommands`).
    func runCommands(_ id: String) async {
        let queue = pendingCommands.removeValue(forKey: id) ?? []
        commandsInFlight += queue.count
        for pending in queue {
            let result: Result<JSONValue?, CommandFailure>
            if let ble {
                result = await ble.execute(pending.command.steps, device: id)
            } else {
                result = .failure(CommandFailure(.deviceUnavailable, "Bluetooth is not running"))
            }
            commandsInFlight -= 1
            switch result {
            case .success(let data):
                logger.info("command done", [("topic", pending.command.source), ("device", id)])
                respond(CommandResponse.ok(transaction: pending.command.transaction, data: data), to: pending.reply)
            case .failure(var failure):
                failure.transaction = pending.command.transaction
                logger.notice(
                    "command failed",
                    [("topic", pending.command.source), ("code", failure.code.rawValue), ("reason", failure.message)])
                respond(CommandResponse.error(failure), to: pending.reply)
            }
        }
        await perform(scheduler.handle(.commandsFinished(id), at: .now))
    }

    /// A command still waiting for its device after `commandTimeout` is answered `timeout`.
    func expire(commandID: Int, device id: String) {
        guard let index = pendingCommands[id]?.firstIndex(where: { $0.id == commandID }),
            let pending = pendingCommands[id]?.remove(at: index)
        else { return }
        logger.notice("command timed out waiting for its device", [("topic", pending.command.source)])
        respond(
            CommandResponse.error(
                CommandFailure(
                    .timeout, "\(id) was not reachable within \(commandTimeout)",
                    transaction: pending.command.transaction)),
            to: pending.reply)
    }

    /// The device could not be reached for its queued commands (pool action `failCommands`).
    func failCommands(_ id: String) {
        for pending in pendingCommands.removeValue(forKey: id) ?? [] {
            respond(
                CommandResponse.error(
                    CommandFailure(
                        .deviceUnavailable, "\(id) could not be connected", transaction: pending.command.transaction)),
                to: pending.reply)
        }
    }
}
