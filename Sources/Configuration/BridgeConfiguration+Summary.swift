import Bluetooth
import ByteLayouts
import Timekeeping

extension BridgeConfiguration {
    /// A one-screen description of what the gateway will do, for `blebridge check-config` and logs.
    package var summaryLines: [String] {
        var lines: [String] = []
        func row(_ label: String, _ text: String) {
            lines.append(label.padding(toLength: 15, withPad: " ", startingAt: 0) + text)
        }
        row("gateway", "\(gatewayID) (MQTT client id \(mqtt.clientID))")
        let bus: String =
            switch bluetooth.bus {
            case .system: "the system bus"
            case .session: "the session bus"
            case .address(let address): address
            }
        row(
            "bluetooth",
            "\(bluetooth.adapter) on \(bus); at most \(bluetooth.maxConnections) connections; "
                + "scan \(bluetooth.scan.mode.rawValue)"
                + (bluetooth.scan.services.isEmpty
                    ? "" : " for \(bluetooth.scan.services.map(\.description).joined(separator: ","))")
                + (bluetooth.scan.rssiMin.map { ", RSSI ≥ \($0) dBm" } ?? ""))
        var login = "no login"
        if let username = mqtt.username {
            login = "user \(username)"
            if let file = mqtt.passwordFile { login += ", password from \(file)" }
            if let variable = mqtt.passwordEnvironmentVariable { login += ", password from $\(variable)" }
        }
        let version = mqtt.protocolVersion == .v5 ? "MQTT 5" : "MQTT 3.1.1"
        row("mqtt", "\(mqtt.url) (\(version)), base topic \(mqtt.baseTopic), QoS \(mqtt.qos), \(login)")
        if mqtt.sharedBroker {
            row(
                "shared broker",
                "on: this gateway's record and bridge topics under \(mqtt.baseTopic)/bridge/gateways/\(gatewayID), "
                    + "the other gateways followed on \(mqtt.baseTopic)/bridge/gateways/+")
        }
        if let room = presence.room {
            row(
                "presence",
                "room \"\(room)\": presence on \(mqtt.baseTopic)/<device>/presence/\(gatewayID), "
                    + "the nearest gateway's room on \(mqtt.baseTopic)/<device>/room")
        }
        row(
            "outbox",
            "\(outbox.path) (\(outbox.modeSummary), synchronous \(outbox.synchronous.rawValue); keeps at most \(outbox.maxMessages) messages, "
                + "\(outbox.maxBytes / 1_048_576) MiB, \(DurationParser.format(outbox.maxAge)))")
        row("homeassistant", homeAssistant.enabled ? "discovery on, prefix \(homeAssistant.prefix)" : "discovery off")
        row(
            "commands",
            "raw GATT \(commands.rawGATT.enabled ? "on (\(commands.rawGATT.allow.count) allowed)" : "off"); "
                + "rate limit \(commands.rateLimit)")
        row("devices", devices.isEmpty ? "none" : "\(devices.count)")
        if autoDevices.enabled {
            let keys = autoDevices.bindKeys.isEmpty ? "" : ", \(autoDevices.bindKeys.count) bind key(s)"
            row(
                "auto devices",
                "on: recognised advertisers as <decoder>_<aabbcc>, at most \(autoDevices.maxDevices)\(keys); "
                    + "one unseen for \(DurationParser.format(autoDevices.evictAfter)) makes room for a new one")
            for (label, filter) in [("auto allow", autoDevices.allow), ("auto deny", autoDevices.deny)]
            where !filter.isEmpty {
                row(label, filter.summary)
            }
        }
        for device in devices {
            var publishing: [String] = []
            if device.onlyOnChange { publishing.append("only on change") }
            if let interval = device.minInterval {
                publishing.append("at most every \(DurationParser.format(interval))")
            }
            if !device.deduplicate { publishing.append("BTHome repeats kept") }
            lines.append(
                "  \(device.id) (\(device.name)): \(device.connection.rawValue), matched by \(device.match.summary)"
                    + publishing.map { "; " + $0 }.joined())
            if !device.subscribe.isEmpty {
                let items = device.subscribe.map { subscription in
                    let name =
                        AssignedNumbers.characteristicName(for: subscription.characteristic)
                        ?? subscription.characteristic.description
                    let mode =
                        subscription.mode == .read
                        ? "read every \(DurationParser.format(subscription.interval ?? .zero))"
                        : subscription.mode.rawValue
                    return "\(name) (\(mode))" + (subscription.layout.map { " " + Self.summary($0) } ?? "")
                }
                lines.append("    subscribe: " + items.joined(separator: ", "))
            }
            if let advertisement = device.advertisement {
                var text = advertisement.decoder ?? ""
                if let layout = advertisement.layout {
                    text = Self.summary(layout)
                    switch advertisement.layoutSource {
                    case .manufacturerData(let company)?: text += " on manufacturer data \(Self.hex4(company))"
                    case .anyManufacturerData?: text += " on manufacturer data of any company id"
                    case .serviceData(let service)?: text += " on service data \(service)"
                    case nil: break
                    }
                }
                lines.append("    advertisement: \(text)\(advertisement.bindKey == nil ? "" : " (encrypted)")")
            }
            if !device.commands.isEmpty {
                let items = device.commands.map { command in
                    "\(command.name) [\(command.operations.map(\.rawValue).joined(separator: ","))]"
                        + (command.layout.map { " " + Self.summary($0) } ?? "")
                }
                lines.append("    commands: " + items.joined(separator: ", "))
            }
        }
        return lines
    }

    /// `layout lamp_status (power, temperature °C, on, mode, label)`; an unnamed layout is
    /// `layout (…)`.
    static func summary(_ layout: ByteLayout) -> String {
        let names = layout.fields.flatMap { field -> [String] in
            if let bits = field.bits, field.type == .bits { return bits.map(\.name) }
            guard let name = field.name else { return [] }
            return [name + (field.unit.map { " " + $0 } ?? "")]
        }
        let name = layout.name == "layout" ? "" : " " + layout.name
        return "layout\(name) (\(names.joined(separator: ", ")))"
    }

    static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
