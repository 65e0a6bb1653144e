import Bluetooth
import Configuration
import JSON
import Timekeeping

/// Checks every incoming command against the policy: size, JSON, shape, device, allowlist,
/// value format, rate limit, in that order. Pure apart from the rate-limit buckets it owns;
/// time is passed in.
public struct CommandGate: Sendable {
    package private(set) var policy: CommandPolicy
    private var buckets: [String: TokenBucket] = [:]
    private let parser = JSONParser()

    /// Key of the bucket shared by requests that name no device (`scan`, `devices`).
    static let bridgeBucket = "\u{0}bridge"

    public init(policy: CommandPolicy) {
        self.policy = policy
    }

    /// Replaces the policy (configuration reload); buckets of devices still present are kept.
    package mutating func update(policy: CommandPolicy) {
        self.policy = policy
        buckets = buckets.filter { policy.devices[$0.key] != nil || $0.key == Self.bridgeBucket }
    }

    /// The transaction of a payload, if it parses far enough to have one (for error replies).
    public func transaction(in payload: [UInt8]) -> JSONValue? {
        guard payload.count <= policy.maximumPayloadBytes, let value = try? parser.parse(payload) else { return nil }
        return Self.transaction(of: value)
    }

    static func transaction(of value: JSONValue) -> JSONValue? {
        switch value["transaction"] {
        case .some(.string(let text)) where text.utf8.count <= 128: .string(text)
        case .some(.int(let number)): .int(number)
        default: nil
        }
    }

    /// Validates one message. On failure the returned `CommandFailure` carries the transaction
    /// when the payload had one.
    public mutating func admit(
        topic: String, kind: InboundTopic, payload: [UInt8], at now: ContinuousClock.Instant
    ) -> Result<ValidatedCommand, CommandFailure> {
        guard payload.count <= policy.maximumPayloadBytes else {
            return .failure(
                CommandFailure(
                    .payloadTooLarge, "\(payload.count) bytes; commands are limited to \(policy.maximumPayloadBytes)"))
        }
        let document: JSONValue
        switch kind {
        case .deviceAttribute(_, let operation, let name):
            switch attributeValue(payload, operation: operation, name: name) {
            case .success(let value): document = .object([JSONMember(name, value)])
            case .failure(let failure): return .failure(failure)
            }
        case .request where Self.isBlank(payload):
            // Zigbee2MQTT clients send requests without parameters as an empty payload.
            document = .object([])
        default:
            do {
                document = try parser.parse(payload)
            } catch {
                return .failure(CommandFailure(.invalidJSON, "payload is not valid JSON: \(error)"))
            }
        }
        guard let members = document.objectMembers else {
            return .failure(CommandFailure(.invalidJSON, "payload must be a JSON object, got \(document.typeName)"))
        }
        if let raw = document["transaction"], Self.transaction(of: document) == nil {
            return .failure(
                CommandFailure(
                    .invalidRequest, "transaction must be a string (≤128 bytes) or integer, got \(raw.typeName)"))
        }
        let transaction = Self.transaction(of: document)
        let result: Result<ValidatedCommand, CommandFailure>
        switch kind {
        case .device(let device, let operation), .deviceAttribute(let device, let operation, _):
            result = deviceCommand(
                topic: topic, device: device, operation: operation,
                members: members.filter { !$0.key.utf8Equals("transaction") }, transaction: transaction)
        case .request(let request):
            result = bridgeRequest(topic: topic, kind: request, document: document, transaction: transaction)
        case .unknownRequest(let name):
            result = .failure(CommandFailure(.invalidRequest, "unknown request '\(name)'"))
        case .homeAssistantStatus:
            result = .failure(CommandFailure(.invalidRequest, "not a command topic"))
        }
        switch result {
        case .failure(var failure):
            failure.transaction = transaction
            return .failure(failure)
        case .success(let command):
            let key = command.device ?? Self.bridgeBucket
            let rate = command.device.flatMap { policy.devices.value(exactly: $0)?.rate } ?? policy.defaultRate
            var bucket = buckets[key] ?? TokenBucket(rate: rate)
            let admitted = bucket.take(at: now)
            buckets[key] = bucket
            guard admitted else {
                return .failure(
                    CommandFailure(
                        .rateLimited,
                        "more than \(JSONValue.format(rate)) commands/s for \(command.device ?? "the bridge")",
                        transaction: transaction))
            }
            return .success(command)
        }
    }

    private func deviceCommand(
        topic: String, device: String, operation: DeviceOperation, members: [JSONMember], transaction: JSONValue?
    ) -> Result<ValidatedCommand, CommandFailure> {
        guard let rules = policy.devices.value(exactly: device) else {
            return .failure(CommandFailure(.unknownDevice, "no device '\(device)' in the configuration"))
        }
        guard !members.isEmpty else {
            return .failure(CommandFailure(.invalidRequest, "empty command: name at least one field"))
        }
        var steps: [GatewayCommand] = []
        for member in members {
            switch operation {
            case .set:
                guard let command = rules.command(named: member.key) else {
                    return .failure(
                        CommandFailure(.notAllowed, "'\(member.key)' is not a writable command of \(device)"))
                }
                guard command.operations.contains(.write) else {
                    return .failure(CommandFailure(.notAllowed, "'\(member.key)' of \(device) does not allow write"))
                }
                switch command.format.encode(member.value) {
                case .failure(let failure):
                    return .failure(CommandFailure(failure.code, "\(member.key): \(failure.message)"))
                case .success(let bytes):
                    steps.append(
                        .write(
                            device: device, characteristic: command.characteristic, value: bytes,
                            type: command.writeType, name: command.name, service: command.service))
                }
            case .get:
                if let command = rules.command(named: member.key) {
                    guard command.operations.contains(.read) else {
                        return .failure(CommandFailure(.notAllowed, "'\(member.key)' of \(device) does not allow read"))
                    }
                    steps.append(
                        .read(
                            device: device, characteristic: command.characteristic, name: command.name,
                            service: command.service))
                } else if let target = rules.readTargets.value(exactly: member.key) {
                    steps.append(
                        .read(
                            device: device, characteristic: target.characteristic, name: member.key,
                            service: target.service))
                } else {
                    return .failure(CommandFailure(.notAllowed, "'\(member.key)' is not readable on \(device)"))
                }
            }
        }
        return .success(ValidatedCommand(transaction: transaction, source: topic, device: device, steps: steps))
    }

    private func bridgeRequest(
        topic: String, kind: BridgeRequestKind, document: JSONValue, transaction: JSONValue?
    ) -> Result<ValidatedCommand, CommandFailure> {
        let allowedKeys: [String]
        switch kind {
        case .gattRead: allowedKeys = ["transaction", "device", "characteristic", "service"]
        case .gattWrite: allowedKeys = ["transaction", "device", "characteristic", "service", "value", "response"]
        case .gattNotify: allowedKeys = ["transaction", "device", "characteristic", "service", "enable"]
        case .scan: allowedKeys = ["transaction", "duration"]
        case .connect, .disconnect, .remove: allowedKeys = ["transaction", "device"]
        case .devices, .configReload, .restart: allowedKeys = ["transaction"]
        case .adopt: allowedKeys = ["transaction", "device", "id", "name", "bind_key"]
        }
        if let unknown = document.objectMembers?.first(where: { member in
            !allowedKeys.contains { $0.utf8Equals(member.key) }
        }) {
            return .failure(CommandFailure(.invalidRequest, "unknown key '\(unknown.key)' for \(kind.rawValue)"))
        }
        func single(_ step: GatewayCommand, device: String?) -> Result<ValidatedCommand, CommandFailure> {
            .success(ValidatedCommand(transaction: transaction, source: topic, device: device, steps: [step]))
        }
        switch kind {
        case .devices:
            return single(.listDevices, device: nil)
        case .configReload:
            return single(.reloadConfiguration, device: nil)
        case .restart:
            return single(.restart, device: nil)
        case .scan:
            var duration: Duration = .seconds(10)
            if let value = document["duration"] {
                // Whole seconds, or a duration string in the configuration's forms ("5s", "1m").
                let parsed =
                    value.intValue.map { Duration.seconds($0) } ?? value.stringValue.flatMap(DurationParser.parse)
                guard let parsed, parsed >= .seconds(1), parsed <= .seconds(60) else {
                    return .failure(
                        CommandFailure(
                            .invalidValue, "duration must be 1 to 60 seconds: a whole number or a string such as \"5s\""
                        ))
                }
                duration = parsed
            }
            return single(.scan(duration: duration), device: nil)
        case .adopt:
            return adoptRequest(document).flatMap { single($0, device: nil) }
        case .remove:
            return requireDevice(document).flatMap { single(.removeDevice(device: $0), device: nil) }
        case .connect, .disconnect:
            switch requireDevice(document) {
            case .failure(let failure): return .failure(failure)
            case .success(let device):
                return single(kind == .connect ? .connect(device: device) : .disconnect(device: device), device: device)
            }
        case .gattRead, .gattWrite, .gattNotify:
            guard policy.rawGATTEnabled else {
                return .failure(
                    CommandFailure(.notAllowed, "raw GATT requests are disabled (commands.raw_gatt.enabled)"))
            }
            let device: String
            switch requireDevice(document) {
            case .failure(let failure): return .failure(failure)
            case .success(let name): device = name
            }
            guard let text = document["characteristic"]?.stringValue else {
                return .failure(CommandFailure(.invalidRequest, "'characteristic' (a UUID string) is required"))
            }
            guard let characteristic = BluetoothUUID(text) else {
                return .failure(CommandFailure(.invalidValue, "'\(text)' is not a Bluetooth UUID"))
            }
            let requested: BluetoothUUID?
            switch document["service"] {
            case nil: requested = nil
            case .some(.string(let text)):
                guard let uuid = BluetoothUUID(text) else {
                    return .failure(CommandFailure(.invalidValue, "service '\(text)' is not a Bluetooth UUID"))
                }
                requested = uuid
            case .some(let other):
                return .failure(
                    CommandFailure(.invalidRequest, "'service' must be a UUID string, got \(other.typeName)"))
            }
            let operation: GATTOperation = kind == .gattRead ? .read : kind == .gattWrite ? .write : .notify
            let allowed = policy.devices.value(exactly: device)?.rawTarget(
                characteristic, service: requested, operation: operation)
            let service: BluetoothUUID?
            switch allowed {
            case .success(let target): service = target
            case .failure(let failure): return .failure(failure)
            case nil: return .failure(CommandFailure(.unknownDevice, "no device '\(device)' in the configuration"))
            }
            switch kind {
            case .gattRead:
                return single(
                    .read(device: device, characteristic: characteristic, name: nil, service: service), device: device)
            case .gattNotify:
                guard let enable = document["enable"]?.boolValue else {
                    return .failure(CommandFailure(.invalidRequest, "'enable' (true/false) is required"))
                }
                return single(
                    .notify(device: device, characteristic: characteristic, enable: enable, service: service),
                    device: device)
            default:
                guard let hex = document["value"]?.stringValue else {
                    return .failure(CommandFailure(.invalidRequest, "'value' (a hex string) is required"))
                }
                let response: Bool
                switch document["response"] {
                case nil: response = true
                case .some(.bool(let flag)): response = flag
                case .some(let other):
                    return .failure(
                        CommandFailure(.invalidRequest, "'response' must be a boolean, got \(other.typeName)"))
                }
                switch ValueFormat(.hex).encode(.string(hex)) {
                case .failure(let failure): return .failure(failure)
                case .success(let bytes):
                    return single(
                        .write(
                            device: device, characteristic: characteristic, value: bytes,
                            type: response ? .withResponse : .withoutResponse, name: nil, service: service),
                        device: device)
                }
            }
        }
    }

    /// The value of `<device>/set/<name>`: the payload as JSON when it parses (`80`, `true`,
    /// `"text"`, `{…}`), else as a string (`ON`, `high`); `<device>/get/<name>` ignores its payload.
    private func attributeValue(_ payload: [UInt8], operation: DeviceOperation, name: String)
        -> Result<JSONValue, CommandFailure>
    {
        guard !name.isEmpty else {
            return .failure(
                CommandFailure(
                    .invalidRequest, "name a command after \(operation.rawValue)/, e.g. \(operation.rawValue)/power"))
        }
        guard operation == .set else { return .success(.null) }
        let text = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            return .failure(CommandFailure(.invalidValue, "set/\(name) needs a value, e.g. ON or 80"))
        }
        return .success((try? parser.parse(Array(text.utf8))) ?? .string(text))
    }

    static func isBlank(_ payload: [UInt8]) -> Bool {
        payload.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// `bridge/request/device/adopt`: `device` and `id` required, `name` and `bind_key` (32 hex
    /// digits) optional. Whether `device` is an automatic device and `id` is free is the
    /// gateway's to check (``AdoptedDevices``).
    private func adoptRequest(_ document: JSONValue) -> Result<GatewayCommand, CommandFailure> {
        let device: String
        switch requireDevice(document) {
        case .failure(let failure): return .failure(failure)
        case .success(let name): device = name
        }
        guard let id = document["id"]?.stringValue else {
            return .failure(CommandFailure(.invalidRequest, "'id' (the new device id, a string) is required"))
        }
        var name: String?
        if let value = document["name"] {
            guard let text = value.stringValue, !text.isEmpty else {
                return .failure(CommandFailure(.invalidRequest, "'name' must be a non-empty string"))
            }
            name = text
        }
        var bindKey: [UInt8]?
        if let value = document["bind_key"] {
            guard let text = value.stringValue, text.count == 32, let key = Hex.bytes(text) else {
                return .failure(CommandFailure(.invalidValue, "'bind_key' must be 32 hex digits (the 16-byte key)"))
            }
            bindKey = key
        }
        return .success(.adopt(device: device, id: id, name: name, bindKey: bindKey))
    }

    private func requireDevice(_ document: JSONValue) -> Result<String, CommandFailure> {
        guard let value = document["device"] else {
            return .failure(CommandFailure(.invalidRequest, "'device' is required"))
        }
        guard let device = value.stringValue else {
            return .failure(CommandFailure(.invalidRequest, "'device' must be a string, got \(value.typeName)"))
        }
        guard policy.devices.value(exactly: device) != nil else {
            return .failure(CommandFailure(.unknownDevice, "no device '\(device)' in the configuration"))
        }
        return .success(device)
    }
}
