import BlueZSimulator
import DBus
import Foundation
import Testing

/// The simulator's `restartBluez(stop: .terminate)` against a bus capture of real bluetoothd 5.66 getting
/// SIGTERM and being started again, with a connected device, unbonded and bonded (`Reference/bluez-5.66/sigterm-*.txt`,
/// made by `Tests/VM/guest/scenario-sigterm-capture.sh` and reduced by `Tests/VM/sigterm-order.py`). Both
/// are reduced to the steps a client acts on, in bus order: the link drop, the power-off, the GATT objects,
/// the device and the adapter going, the name lost and acquired, the adapter and its stored device coming
/// back, and the power-on.
@Suite struct SigtermReferenceTests {
    static let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Reference/bluez-5.66")

    /// The step a reduced line stands for (nil: not one the comparison looks at). Lines are
    /// `Member PATH details`, paths by role (`GW`, the device `GW/DEV`, its `GW/DEV/service…`, other devices `GW/OTHER`).
    static func step(_ line: String) -> String? {
        let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count >= 2 else { return nil }
        let (member, path) = (parts[0], parts[1])
        let details = parts.count > 2 ? parts[2] : ""
        switch member {
        case "NameOwnerChanged":
            return "name \(path)"
        case "PropertiesChanged" where path == "GW/DEV" && details.contains("Connected=false"):
            return "link down"
        case "PropertiesChanged" where path == "GW" && details.contains("Powered=false"):
            return "powered off"
        case "PropertiesChanged" where path == "GW" && details.contains("Powered=true"):
            return "powered on"
        case "InterfacesRemoved" where path.hasPrefix("GW/DEV/"):
            return "GATT objects removed"
        case "InterfacesRemoved" where path == "GW/DEV" && details.contains("org.bluez.Device1"):
            return "device removed"
        case "InterfacesRemoved" where path == "GW" && details.contains("org.bluez.Adapter1"):
            return "adapter removed"
        case "InterfacesAdded" where path == "GW" && details.contains("org.bluez.Adapter1"):
            return "adapter added " + (details.split(separator: " ").last.map(String.init) ?? "")
        case "InterfacesAdded" where path == "GW/DEV" && details.contains("org.bluez.Device1"):
            return "device added"
        default:
            return nil
        }
    }

    /// The steps of `lines`, a run of the same step counted once.
    static func steps(_ lines: [String]) -> [String] {
        var result: [String] = []
        for line in lines {
            guard let step = step(line), result.last != step else { continue }
            result.append(step)
        }
        return result
    }

    /// The simulator's signal as `sigterm-order.py` prints a captured one (booleans only; other values `…`).
    static func line(_ signal: DBusSignal) -> String? {
        /// The strap is the device (`GW/DEV`), the demo's other devices are `GW/OTHER`.
        func role(_ path: String) -> String {
            path.replacingOccurrences(of: BluezStopTests.strap, with: "GW/DEV")
                .replacingOccurrences(of: "/org/bluez/hci0", with: "GW")
                .replacingOccurrences(of: #"/dev_[0-9A-F_]{17}"#, with: "/OTHER", options: .regularExpression)
        }
        switch signal.member {
        case "NameOwnerChanged":
            guard signal.arguments.first?.asString == "org.bluez" else { return nil }
            return "NameOwnerChanged " + (signal.arguments.last?.asString == "" ? "lost" : "acquired")
        case "InterfacesAdded", "InterfacesRemoved":
            let path = role(signal.arguments.first?.asObjectPath?.rawValue ?? "?")
            var interfaces: [String]
            var powered: Bool?
            if signal.member == "InterfacesAdded" {
                let added = signal.arguments.dropFirst().first?.asDictionary ?? [:]
                interfaces = Array(added.keys)
                powered = added["org.bluez.Adapter1"]?.asDictionary?["Powered"]?.unwrappedVariant.asBool
            } else {
                interfaces = signal.arguments.dropFirst().first?.asStrings ?? []
            }
            let names = interfaces.filter { $0.hasPrefix("org.bluez.") }.sorted().joined(separator: ",")
            return "\(signal.member) \(path) \(names)" + (powered.map { " Powered=\($0)" } ?? "")
        case "PropertiesChanged":
            let changed = signal.arguments.dropFirst().first?.asDictionary ?? [:]
            let parts = changed.keys.sorted().map { name in
                "\(name)=\(changed[name]?.unwrappedVariant.asBool.map { "\($0)" } ?? "…")"
            }
            return "PropertiesChanged \(role(signal.path.rawValue)) \(parts.joined(separator: ","))"
        default:
            return nil
        }
    }

    /// With the device connected, unbonded (`sigterm-unbonded.txt`) and bonded (`sigterm-bonded.txt`).
    @Test(arguments: [false, true]) func terminateAndRestartFollowBluetoothdsOrder(bonded: Bool) async throws {
        let file = bonded ? "sigterm-bonded.txt" : "sigterm-unbonded.txt"
        let captured = try String(contentsOf: Self.reference.appendingPathComponent(file), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let expected = Self.steps(captured)
        // The capture has every step: a reduction that lost one would compare nothing.
        #expect(expected.count >= 10, "\(expected)")
        let seen = try await BluezStopTests.restart(.terminate, bonded: bonded)
        let simulated = Self.steps(seen.all.compactMap(Self.line))
        #expect(simulated == expected, "simulator: \(simulated)\nbluetoothd: \(expected)")
    }
}
