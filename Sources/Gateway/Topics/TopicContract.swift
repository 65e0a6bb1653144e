import JSON

/// Every MQTT topic the gateway publishes or subscribes to, built from the base topic.
///
/// The contract is documented in docs/mqtt.md; this type is its single source in code.
public struct TopicContract: Sendable, Hashable {
    /// `blebridge` unless configured otherwise; never ends with `/`.
    package let base: String
    /// Home Assistant's discovery prefix (`homeassistant`).
    package let discoveryPrefix: String
    /// Where Home Assistant announces itself (`homeassistant/status`).
    package let homeAssistantStatus: String
    /// This gateway's id in shared-broker mode (`mqtt.shared_broker`, docs/multi-gateway.md), nil
    /// otherwise. When set, the topics that describe one gateway (state, info, devices, health)
    /// move under ``gatewayRecord``; every other topic is the same as without it.
    package let sharedGatewayID: String?

    package init(
        base: String = "blebridge", discoveryPrefix: String = "homeassistant",
        homeAssistantStatus: String = "homeassistant/status", sharedGatewayID: String? = nil
    ) {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.discoveryPrefix = discoveryPrefix
        self.homeAssistantStatus = homeAssistantStatus
        self.sharedGatewayID = sharedGatewayID
    }

    // Bridge topics.
    /// `bridge/state`; in shared-broker mode the gateway record, which carries the state (and the last will).
    package var bridgeState: String { gatewayRecord ?? "\(base)/bridge/state" }
    package var bridgeInfo: String { perGateway("info") }
    package var bridgeDevices: String { perGateway("devices") }
    package var bridgeHealth: String { perGateway("health") }

    /// Shared-broker mode: `<base>/bridge/gateways/<gateway_id>` (retained, last will), nil otherwise.
    package var gatewayRecord: String? { sharedGatewayID.map { gatewayRecord(of: $0) } }
    /// The record topic of the gateway `id`.
    package func gatewayRecord(of id: String) -> String { "\(base)/bridge/gateways/\(id)" }
    /// The filter that receives every gateway's record (and no other topic under it).
    package var gatewayRecords: String { "\(base)/bridge/gateways/+" }

    /// The gateway id of a record topic (`<base>/bridge/gateways/<id>`), nil for any other topic.
    package func gatewayID(ofRecord topic: String) -> String? {
        guard let levels = Self.levels(of: topic, after: "\(base)/bridge/gateways/"), levels.count == 1,
            !levels[0].isEmpty
        else { return nil }
        return levels[0]
    }

    /// Shared-broker mode: this gateway's candidacy for a connected device,
    /// `<base>/bridge/gateways/<gateway_id>/candidacy/<device>` (retained); nil otherwise.
    package func candidacy(_ device: String) -> String? {
        gatewayRecord.map { "\($0)/candidacy/\(device)" }
    }
    /// The filter that receives every gateway's candidacies.
    package var candidacies: String { "\(base)/bridge/gateways/+/candidacy/+" }

    /// The gateway and the device of a candidacy topic, nil for any other topic.
    package func candidacy(ofTopic topic: String) -> (gateway: String, device: String)? {
        guard let levels = Self.levels(of: topic, after: "\(base)/bridge/gateways/"), levels.count == 3,
            levels[1].utf8Equals("candidacy"), !levels[0].isEmpty, !levels[2].isEmpty
        else { return nil }
        return (levels[0], levels[2])
    }

    /// `<base>/bridge/<name>`, or `<base>/bridge/gateways/<gateway_id>/<name>` in shared-broker mode.
    /// Room presence: a gateway's presence report for a device, `<base>/<device>/presence/<gateway_id>`.
    package func presence(_ device: String, gateway: String) -> String { "\(base)/\(device)/presence/\(gateway)" }
    /// The filter that receives every gateway's presence reports.
    package var presenceReports: String { "\(base)/+/presence/+" }
    /// Room presence: the device's room, `<base>/<device>/room` (retained).
    package func room(_ device: String) -> String { "\(base)/\(device)/room" }

    /// The device and the gateway of a presence topic, nil for any other topic.
    package func presence(ofTopic topic: String) -> (device: String, gateway: String)? {
        guard let levels = Self.levels(of: topic, after: base + "/"), levels.count == 3,
            levels[1].utf8Equals("presence"), Self.canBeDeviceID(levels[0]), !levels[2].isEmpty
        else { return nil }
        return (levels[0], levels[2])
    }

    /// The levels of `topic` after `prefix`, split at every `/` byte as the broker splits them;
    /// nil when `topic` does not start with `prefix` (byte for byte). Bytes, not characters: a
    /// character may hold any number of scalars (`/` and a combining accent are one), and
    /// walking characters costs grapheme breaking on every scalar (issue 19).
    static func levels(of topic: String, after prefix: String) -> [String]? {
        guard topic.utf8HasPrefix(prefix) else { return nil }
        return topic.utf8.dropFirst(prefix.utf8.count).split(
            separator: UInt8(ascii: "/"), omittingEmptySubsequences: false
        )
        .map { String(decoding: $0, as: UTF8.self) }
    }

    private func perGateway(_ name: String) -> String {
        gatewayRecord.map { "\($0)/\(name)" } ?? "\(base)/bridge/\(name)"
    }
    package var bridgeLog: String { "\(base)/bridge/log" }
    /// Warnings and errors of the gateway's log, as `{"level":…,"message":…}` (not retained).
    package var bridgeLogging: String { "\(base)/bridge/logging" }
    /// Device events: joined, adopted, left (not retained).
    package var bridgeEvent: String { "\(base)/bridge/event" }

    // Device topics.
    package func device(_ id: String) -> String { "\(base)/\(id)" }
    package func availability(_ id: String) -> String { "\(base)/\(id)/availability" }
    package func set(_ id: String) -> String { "\(base)/\(id)/set" }
    package func get(_ id: String) -> String { "\(base)/\(id)/get" }
    /// Zigbee2MQTT-style `<device>/set/<command>` (a plain value) and `<device>/get/<name>`.
    package func set(_ id: String, attribute: String) -> String { "\(base)/\(id)/set/\(attribute)" }
    package func get(_ id: String, attribute: String) -> String { "\(base)/\(id)/get/\(attribute)" }
    /// Optional raw per-characteristic topic (`raw_topics`): hex payload.
    package func raw(_ id: String, characteristic: String) -> String { "\(base)/\(id)/raw/\(characteristic)" }

    // Requests and responses.
    package func request(_ kind: BridgeRequestKind) -> String { "\(base)/bridge/request/\(kind.rawValue)" }
    package func response(_ kind: BridgeRequestKind) -> String { "\(base)/bridge/response/\(kind.rawValue)" }
    /// Responses to `<device>/set` and `<device>/get` when the caller gave no MQTT 5 response topic.
    /// A level that cannot be a device id (empty, `bridge`, longer than 64 bytes, or with
    /// characters outside `[A-Za-z0-9_-]`) is answered on `<base>/bridge/response/<set|get>`
    /// instead, so an answer topic stays short whatever the request's topic was.
    package func response(device id: String, _ operation: DeviceOperation) -> String {
        guard Self.canBeDeviceID(id) else { return "\(base)/bridge/response/\(operation.rawValue)" }
        return "\(base)/bridge/response/\(id)/\(operation.rawValue)"
    }

    /// Responses to an unknown request under `bridge/request/`: `<base>/bridge/response/<first
    /// level>`, or `<base>/bridge/response/invalid_request` when that level is not a short plain name.
    package func response(unknownRequest name: String) -> String {
        let first = Self.levels(of: name, after: "")?.first ?? ""
        guard Self.canBeDeviceID(first) else { return "\(base)/bridge/response/invalid_request" }
        return "\(base)/bridge/response/\(first)"
    }

    /// The configuration's device id rule (1 to 64 of `[A-Za-z0-9_-]`, not `bridge`).
    static func canBeDeviceID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id != "bridge"
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x5F || byte == 0x2D
            }
    }

    /// Home Assistant discovery config topic for one entity.
    package func discovery(component: String, nodeID: String, objectID: String) -> String {
        "\(discoveryPrefix)/\(component)/\(nodeID)/\(objectID)/config"
    }

    /// Shared-broker mode: this gateway's own request topics, `<base>/bridge/gateways/<id>/request/`
    /// (a request there is carried out and answered by this gateway alone); nil otherwise.
    package var gatewayRequestPrefix: String? { gatewayRecord.map { "\($0)/request/" } }

    /// Whether `topic` is under ``gatewayRequestPrefix``.
    package func isGatewayRequest(_ topic: String) -> Bool {
        gatewayRequestPrefix.map { topic.utf8HasPrefix($0) } ?? false
    }

    /// The answer to a request on this gateway's own topic: `<base>/bridge/gateways/<id>/response/<kind>`.
    package func gatewayResponse(_ kind: BridgeRequestKind) -> String {
        (gatewayRecord.map { "\($0)/response/" } ?? "\(base)/bridge/response/") + kind.rawValue
    }

    /// ``response(unknownRequest:)`` for a request on this gateway's own topic.
    package func gatewayResponse(unknownRequest name: String) -> String {
        let shared = response(unknownRequest: name)
        guard let record = gatewayRecord else { return shared }
        return "\(record)/response/" + shared.dropFirst("\(base)/bridge/response/".count)
    }

    /// The filters the gateway subscribes to for commands (and, in shared-broker mode, its own request topics).
    package var commandFilters: [String] {
        ["\(base)/+/set", "\(base)/+/get", "\(base)/+/set/+", "\(base)/+/get/+", "\(base)/bridge/request/#"]
            + (gatewayRequestPrefix.map { [$0 + "#"] } ?? [])
    }

    /// Classifies an incoming topic. Topics and their levels are compared byte for byte, split at
    /// every `/` byte, as the broker matched them (``levels(of:after:)``).
    public func classify(_ topic: String) -> InboundTopic? {
        if topic.utf8Equals(homeAssistantStatus) { return .homeAssistantStatus }
        if let requests = gatewayRequestPrefix, topic.utf8HasPrefix(requests) {
            let kind = String(decoding: topic.utf8.dropFirst(requests.utf8.count), as: UTF8.self)
            guard let request = BridgeRequestKind(exactly: kind) else { return .unknownRequest(kind) }
            return .request(request)
        }
        guard let parts = Self.levels(of: topic, after: base + "/") else { return nil }
        if parts.count >= 3, parts[0].utf8Equals("bridge"), parts[1].utf8Equals("request") {
            let kind = parts[2...].joined(separator: "/")
            guard let request = BridgeRequestKind(exactly: kind) else { return .unknownRequest(kind) }
            return .request(request)
        }
        // `bridge/set`, `/set` and over-long levels are classified too: they are answered `unknown_device`.
        if parts.count == 2 || parts.count == 3 {
            let operation: DeviceOperation
            if parts[1].utf8Equals("set") {
                operation = .set
            } else if parts[1].utf8Equals("get") {
                operation = .get
            } else {
                return nil
            }
            return parts.count == 2 ? .device(parts[0], operation) : .deviceAttribute(parts[0], operation, parts[2])
        }
        return nil
    }
}

/// `set` or `get` on a device topic.
public enum DeviceOperation: String, Sendable, Hashable {
    case set, get
}

/// The requests under `<base>/bridge/request/`.
public enum BridgeRequestKind: String, Sendable, Hashable, CaseIterable {
    case gattRead = "gatt/read"
    case gattWrite = "gatt/write"
    case gattNotify = "gatt/notify"
    case scan
    case connect
    case disconnect
    case devices
    /// Re-reads the configuration file, as SIGHUP does.
    case configReload = "config/reload"
    /// Stops gracefully and starts again (the same process, `blebridge run` only).
    case restart
    /// Gives an automatic device an id, a name and a bind key of the client's choosing (``AdoptedDevices``).
    case adopt = "device/adopt"
    /// Removes an adopted or automatic device (not a configured one).
    case remove = "device/remove"

    /// The request whose raw value is `name` byte for byte (`init(rawValue:)` compares canonically).
    init?(exactly name: String) {
        guard let kind = Self.allCases.first(where: { $0.rawValue.utf8Equals(name) }) else { return nil }
        self = kind
    }
}

/// What an incoming message is, by its topic.
public enum InboundTopic: Sendable, Hashable {
    case device(String, DeviceOperation)
    /// `<device>/set/<name>` with a plain value (`ON`, `80`) or `<device>/get/<name>`.
    case deviceAttribute(String, DeviceOperation, String)
    case request(BridgeRequestKind)
    /// Under `bridge/request/` but not a known request: answered with `invalid_request`.
    case unknownRequest(String)
    case homeAssistantStatus
}
