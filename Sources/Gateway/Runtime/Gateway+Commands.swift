import Foundation
import JSON
import MQTT
import TaskScope
import Timekeeping

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
        /// Device commands are answered in their own lane (see ``AnswerLane``).
        var lane: AnswerLane = .bridge
        /// Shared-broker mode: carried out here, answered by another gateway (``Gateway/SharedRequestDuty/mute``).
        var muted = false
    }

    func received(_ message: MQTTMessage) async {
        guard let kind = model.topics.classify(message.topic) else { return }
        if kind == .homeAssistantStatus {
            homeAssistantStatus(message.payload)
            return
        }
        if message.retain {
            ignoreRetained(message)
            return
        }
        // Shared-broker mode: a device's command is answered by its owner alone (the others stay
        // silent), or refused by the speaker when nobody owns it (docs/multi-gateway.md).
        var ownerless: String?
        switch kind {
        case .device(let id, _), .deviceAttribute(let id, _, _):
            guard speaksFor(id) else {
                logger.debug("command left to the device's owner", [("topic", message.topic)])
                return
            }
            if ownership?.duty(for: id) == .speaker { ownerless = id }
        default:
            break
        }
        var muted = false
        if ownership != nil, !model.topics.isGatewayRequest(message.topic) {
            switch kind {
            case .request(let request):
                switch sharedRequestDuty(request, payload: message.payload) {
                case .answer: break
                case .mute: muted = true
                case .refuse(let id): ownerless = id
                case .silent:
                    logger.debug("request left to another gateway", [("topic", message.topic)])
                    return
                }
            case .unknownRequest:
                guard isInstallationSpeaker else { return }
            default:
                break
            }
        }
        var (reply, refusal) = replyTarget(for: message, kind: kind)
        reply.muted = muted
        if let refusal {
            counters.commands += 1
            counters.commandsRefused += 1
            if let held = responseTopicLog.admit(at: clock.now) {
                logger.warning(
                    "command refused: response topic not allowed",
                    [
                        ("topic", message.topic),
                        ("response_topic", String(message.properties.responseTopic?.prefix(200) ?? "")),
                        ("reason", refusal.message), ("not_logged_since_last", "\(held)"),
                    ])
            }
            var failure = refusal
            failure.transaction = gate.transaction(in: message.payload)
            respond(CommandResponse.error(failure), to: reply)
            return
        }
        if let ownerless {
            counters.commands += 1
            counters.commandsRefused += 1
            respond(
                CommandResponse.error(
                    CommandFailure(
                        .noOwner,
                        "no gateway owns \(ownerless): none hears it with a free connection slot (shared broker)",
                        transaction: gate.transaction(in: message.payload))), to: reply)
            return
        }
        guard !stopping else {
            respond(
                CommandResponse.error(
                    CommandFailure(
                        .deviceUnavailable, "the gateway is shutting down",
                        transaction: gate.transaction(in: message.payload))), to: reply)
            return
        }
        counters.commands += 1
        switch gate.admit(topic: message.topic, kind: kind, payload: message.payload, at: clock.now) {
        case .failure(let failure):
            counters.commandsRefused += 1
            if let held = commandRefusalLog.admit(at: clock.now) {
                logger.notice(
                    "command refused",
                    Self.refusalMetadata(topic: message.topic, code: failure.code.rawValue, reason: failure.message)
                        + (held > 0 ? [("not_logged_since_last", "\(held)")] : []))
            }
            respond(CommandResponse.error(failure), to: reply)
        case .success(let command):
            logger.info(
                "command accepted",
                [
                    ("topic", message.topic), ("steps", "\(command.steps.count)"),
                    ("transaction", command.transaction.map(Self.logText) ?? "-"),
                ])
            nextCommandID += 1
            await dispatch(PendingCommand(id: nextCommandID, command: command, reply: reply))
        }
    }

    /// A transaction as a log value: a string as its text (the log quotes it once when needed), a number as is.
    static func logText(_ transaction: JSONValue) -> String {
        transaction.stringValue ?? transaction.serialized
    }

    /// The fields of a "command refused" line: topic and reason cut to ``logValueLimit`` Unicode
    /// scalars (a refusal quotes the offending value, which a client chooses).
    static func refusalMetadata(topic: String, code: String, reason: String) -> [(String, String)] {
        [("topic", truncated(topic)), ("code", code), ("reason", truncated(reason))]
    }

    static let logValueLimit = 200

    /// `text` cut to ``logValueLimit`` Unicode scalars, saying its full size. Scalars, not
    /// characters: one character may hold any number of them (a letter with thousands of combining
    /// accents fits in one 16 KiB command), and each control scalar is escaped in the log line.
    static func truncated(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > logValueLimit else { return text }
        return String(Substring(scalars.prefix(logValueLimit))) + "…(\(text.utf8.count) bytes)"
    }

    /// Where to answer `message`, and the refusal when its MQTT 5 response topic is not allowed
    /// (then the answer goes to the default topic, see ``ResponseTopicPolicy``).
    func replyTarget(for message: MQTTMessage, kind: InboundTopic) -> (ReplyTarget, CommandFailure?) {
        let topics = model.topics
        let fallback: String
        var lane = AnswerLane.bridge
        switch kind {
        case .device(let id, let operation), .deviceAttribute(let id, let operation, _):
            fallback = topics.response(device: id, operation)
            lane = .devices
        case .request(let request):
            fallback =
                topics.isGatewayRequest(message.topic) ? topics.gatewayResponse(request) : topics.response(request)
        case .unknownRequest(let name):
            fallback =
                topics.isGatewayRequest(message.topic)
                ? topics.gatewayResponse(unknownRequest: name) : topics.response(unknownRequest: name)
        case .homeAssistantStatus: fallback = topics.response(.devices)
        }
        let correlation = message.properties.correlationData
        guard let topic = message.properties.responseTopic, !topic.isEmpty else {
            return (ReplyTarget(topic: fallback, correlationData: correlation, lane: lane), nil)
        }
        let policy = ResponseTopicPolicy(
            topics: topics, deviceIDs: Set(model.configuration.devices.map(\.id)),
            extraPrefixes: model.configuration.mqtt.responseTopicPrefixes)
        if let problem = policy.problem(with: topic) {
            return (
                ReplyTarget(topic: fallback, correlationData: correlation, lane: lane),
                CommandFailure(.responseTopicNotAllowed, problem)
            )
        }
        return (ReplyTarget(topic: topic, correlationData: correlation, lane: lane), nil)
    }

    /// A retained command is a stale request replayed by the broker (at subscribe on MQTT
    /// 3.1.1): never executed nor answered; each topic is logged once (the first 256 topics).
    func ignoreRetained(_ message: MQTTMessage) {
        guard retainedCommandTopics.count < 256, retainedCommandTopics.insert(message.topic).inserted else { return }
        logger.notice(
            "retained command ignored (clear it with an empty retained publish)",
            [("topic", message.topic), ("bytes", "\(message.payload.count)")])
    }

    func respond(_ payload: JSONValue, to reply: ReplyTarget) {
        guard !reply.muted else { return }
        var properties = MQTTProperties()
        if model.configuration.mqtt.protocolVersion == .v5 {
            properties.correlationData = reply.correlationData
            properties.contentType = "application/json"
        }
        send(
            MQTTMessage(topic: reply.topic, payload: payload.bytes, qos: .atLeastOnce, properties: properties),
            lane: reply.lane)
    }

    func dispatch(_ pending: PendingCommand) async {
        let command = pending.command
        switch command.steps.first {
        case .reloadConfiguration:
            dispatchControl(pending, kind: .reload)
        case .restart:
            dispatchControl(pending, kind: .restart)
        case .adopt(let device, let id, let name, let bindKey):
            await adopt(pending, device: device, as: id, name: name, bindKey: bindKey)
        case .removeDevice(let device):
            await removeDevice(pending, device)
        case .listDevices:
            respond(
                CommandResponse.ok(transaction: command.transaction, data: DeviceSummary.list(deviceSummaries())),
                to: pending.reply)
        case .scan(let duration):
            guard let ble else {
                respond(
                    CommandResponse.error(
                        CommandFailure(.deviceUnavailable, "Bluetooth is not running", transaction: command.transaction)
                    ), to: pending.reply)
                return
            }
            // Answered from its own task: a scan lasts its whole window, and the requests behind it
            // on the same subscription (`devices`, `gatt/read`, other scans) must not wait for it.
            commandsInFlight += 1
            scanTasks[pending.id] = scope.spawnCancellable { [weak self] in
                let found = await ble.scanSnapshot(for: duration)
                await self?.finishScan(pending, found: found)
            }
            // The stop has closed the scope: no scan runs, and none is waited for.
            if scanTasks[pending.id] == nil { commandsInFlight -= 1 }
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
            // The command's timeout (`commands.timeout`), after which it is answered as expired.
            Deadline.after(timeout, clock: clock) { [weak self] in await self?.expire(commandID: pending.id, device: id)
            }
            await perform(scheduler.handle(.commandQueued(id), at: clock.now))
        }
    }

    /// A bridge `scan` request's window ended (or the stop cut it short): answers it with the
    /// advertisers seen meanwhile.
    func finishScan(_ pending: PendingCommand, found: JSONValue) {
        scanTasks[pending.id] = nil
        commandsInFlight -= 1
        respond(
            CommandResponse.ok(
                transaction: pending.command.transaction, data: .object([JSONMember("devices", found)])),
            to: pending.reply)
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
        await perform(scheduler.handle(.commandsFinished(id), at: clock.now))
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
