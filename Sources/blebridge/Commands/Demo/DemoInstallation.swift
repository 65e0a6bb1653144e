import Gateway
import JSON

/// What `blebridge demo --gateways N` shows of a shared-broker installation, from the retained
/// topics the gateways publish (docs/multi-gateway.md): which gateways are online, each one's
/// candidacy for each device (its RSSI and whether it holds the device), and each device's room.
/// Pure: ``apply(topic:payload:)`` takes one MQTT message, ``table()`` renders the state.
struct DemoInstallation: Sendable, Equatable {
    let baseTopic: String
    /// The gateways in column order, and their rooms (empty: none configured).
    let gateways: [(id: String, room: String)]
    /// The devices in row order.
    let devices: [String]
    private(set) var online: [String: Bool] = [:]
    private(set) var candidacies: [String: [String: OwnershipCandidacy]] = [:]
    private(set) var rooms: [String: String] = [:]

    init(baseTopic: String, gateways: [(id: String, room: String)], devices: [String]) {
        self.baseTopic = baseTopic
        self.gateways = gateways
        self.devices = devices
    }

    static func == (left: DemoInstallation, right: DemoInstallation) -> Bool {
        left.table() == right.table()
    }

    /// What a change must touch to be worth a new table: the gateways' states, the owners, which
    /// gateways hear each device, the rooms. Not the RSSI figures, which move by a dB or two all
    /// the time (candidacies are republished on a 1 dB change).
    var signature: String {
        let states = gateways.map { "\($0.id)=\(online[$0.id].map(String.init) ?? "?")" }
        let owners = devices.map { device in
            let hearing = gateways.filter { online[$0.id] == true && candidacies[device]?[$0.id] != nil }.map(\.id)
            return "\(device):\(owner(of: device) ?? "-"):\(hearing):\(rooms[device] ?? "-")"
        }
        return (states + owners).joined(separator: " ")
    }

    /// The topic filters that feed ``apply(topic:payload:)``.
    var filters: [String] { ["\(baseTopic)/bridge/gateways/#", "\(baseTopic)/+/room"] }

    /// Takes one message; tells whether it changed the ``signature``.
    @discardableResult
    mutating func apply(topic: String, payload: [UInt8]) -> Bool {
        let before = signature
        let gatewaysPrefix = "\(baseTopic)/bridge/gateways/"
        if topic.hasPrefix(gatewaysPrefix) {
            let parts = topic.dropFirst(gatewaysPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
            let gateway = String(parts[0])
            if parts.count == 1 {
                online[gateway] = GatewayRecord(payload: payload, gatewayID: gateway)?.state == .online
            } else if parts.count == 3, parts[1] == "candidacy" {
                candidacies[String(parts[2]), default: [:]][gateway] = OwnershipCandidacy(payload: payload)
            }
        } else if topic.hasPrefix("\(baseTopic)/"), topic.hasSuffix("/room") {
            let device = String(topic.dropFirst(baseTopic.count + 1).dropLast("/room".count))
            rooms[device] = Self.room(in: payload)
        }
        return signature != before
    }

    /// The gateway that holds `device`: an online gateway whose candidacy says it holds it (the
    /// first in column order if, during a hand-over, two say so).
    func owner(of device: String) -> String? {
        gateways.first { online[$0.id] == true && candidacies[device]?[$0.id]?.holding == true }?.id
    }

    /// The table: one line per gateway (state, room), then one row per device with its owner,
    /// each gateway's RSSI (`*` marks the holder, `-` no candidacy) and the device's room.
    func table() -> String {
        let showRooms = gateways.contains { !$0.room.isEmpty } || !rooms.isEmpty
        var lines = [
            "gateways: "
                + gateways.map { gateway in
                    let state = online[gateway.id].map { $0 ? "online" : "offline" } ?? "starting"
                    return gateway.room.isEmpty ? "\(gateway.id) \(state)" : "\(gateway.id) \(state) (\(gateway.room))"
                }.joined(separator: ", ")
        ]
        var header = [pad("device", 14), pad("owner", 8)] + gateways.map { pad($0.id, 8) }
        if showRooms { header.append("room") }
        lines.append(header.joined().trimmingTrailingSpaces())
        for device in devices {
            var row = [pad(device, 14), pad(owner(of: device) ?? "-", 8)]
            for gateway in gateways {
                guard let candidacy = candidacies[device]?[gateway.id], online[gateway.id] == true else {
                    row.append(pad("-", 8))
                    continue
                }
                row.append(pad("\(Int(candidacy.rssi.rounded()))" + (candidacy.holding ? "*" : ""), 8))
            }
            if showRooms { row.append(rooms[device] ?? "-") }
            lines.append(row.joined().trimmingTrailingSpaces())
        }
        return lines.joined(separator: "\n")
    }

    /// The room of a `<device>/room` payload: a JSON object's `room`, or the text itself.
    static func room(in payload: [UInt8]) -> String? {
        guard !payload.isEmpty else { return nil }
        if let value = try? JSONParser().parse(payload), case .object = value {
            return value["room"]?.stringValue
        }
        return String(decoding: payload, as: UTF8.self)
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width - 1 ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
