import BlueZSimulator
import DBus
import Synchronization
import TestSupport
import Testing

/// bluetoothd going away by SIGTERM and by SIGKILL, as a client on the bus sees it: terminated, it powers
/// off (the link drops, `Powered` false) and removes its objects before `org.bluez` loses its owner;
/// killed, the owner just vanishes (issue 16).
@Suite struct BluezStopTests {
    static let strap = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"

    /// What a client saw from the restart: the signals up to `org.bluez` losing its owner, in bus order.
    struct Seen {
        var beforeRelease: [String] = []
        var released = false
        var back = false
        /// The signals after `org.bluez` got its new owner.
        var afterBack: [String] = []
        /// Every signal, in bus order.
        var all: [DBusSignal] = []
    }

    /// `bonded`: the strap is paired (`Pair`, Just Works) before bluetoothd goes.
    static func restart(_ stop: BluezStop, bonded: Bool = false) async throws -> Seen {
        var seen = Seen()
        try await SimulatorOnBus.run(try SimulatorBusTests.fastScenario("demo"), seed: 5) { simulator, bus in
            let client = try await DBusConnection(address: bus.address)
            defer { client.close() }
            let path = try DBusObjectPath(Self.strap)
            _ = try await client.call(
                destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                method: "StartDiscovery")
            try #require(
                await waitUntil(timeout: .seconds(10)) {
                    (try? await Self.property(client, path, "Connected")) != nil
                })
            _ = try await client.call(
                destination: "org.bluez", path: path, interface: "org.bluez.Device1", method: "Connect")
            try #require(
                await waitUntil(timeout: .seconds(10)) {
                    (try? await Self.property(client, path, "ServicesResolved")) == true
                })
            if bonded {
                _ = try await client.call(
                    destination: "org.bluez", path: path, interface: "org.bluez.Device1", method: "Pair")
                try #require(try await Self.property(client, path, "Bonded") == true)
            }
            // Every signal on the bus, in the order this connection receives them (one subscription keeps it).
            let record = Mutex(Seen())
            let signals = try await client.signals(matching: DBusMatchRule())
            let consumer = Task {
                for await signal in signals {
                    record.withLock { seen in
                        seen.all.append(signal)
                        if signal.member == "NameOwnerChanged", signal.arguments.first?.asString == "org.bluez" {
                            if signal.arguments.last?.asString == "" { seen.released = true } else { seen.back = true }
                        } else if !seen.released {
                            seen.beforeRelease.append(Self.describe(signal))
                        } else if seen.back {
                            seen.afterBack.append(Self.describe(signal))
                        }
                    }
                }
            }
            try await simulator.restartBluez(downtime: .milliseconds(200), stop: stop)
            #expect(await waitUntil(timeout: .seconds(10)) { record.withLock { $0.back } })
            // Back: the adapter and the strap (stored: it was connected) are announced; after SIGTERM the
            // adapter is powered on afterwards.
            let strapBack = "InterfacesAdded @\(Self.strap) "
            _ = await waitUntil(timeout: .seconds(10)) {
                record.withLock { seen in
                    seen.afterBack.contains { $0.hasPrefix(strapBack) }
                        && (stop == .kill || seen.afterBack.contains { $0.hasPrefix("PropertiesChanged Powered=true") })
                }
            }
            consumer.cancel()
            seen = record.withLock { $0 }
        }
        return seen
    }

    static func property(_ client: DBusConnection, _ path: DBusObjectPath, _ name: String) async throws -> Bool? {
        let reply = try await client.call(
            destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.Device1"), .string(name)])
        return reply.first?.unwrappedVariant.asBool
    }

    /// `PropertiesChanged Connected=false @path`, `InterfacesRemoved @object`, or the member name.
    static func describe(_ signal: DBusSignal) -> String {
        switch signal.member {
        case "PropertiesChanged":
            let changed = signal.arguments.dropFirst().first?.asDictionary ?? [:]
            let names = changed.keys.sorted().map {
                "\($0)=\(changed[$0]?.unwrappedVariant.asBool.map { "\($0)" } ?? "…")"
            }
            return "PropertiesChanged \(names.joined(separator: ",")) @\(signal.path.rawValue)"
        case "InterfacesAdded":
            let interfaces = signal.arguments.dropFirst().first?.asDictionary ?? [:]
            let powered = interfaces["org.bluez.Adapter1"]?.asDictionary?["Powered"]?.unwrappedVariant.asBool
            return
                "InterfacesAdded @\(signal.arguments.first?.asObjectPath?.rawValue ?? "?") \(interfaces.keys.sorted())"
                + (powered.map { " Powered=\($0)" } ?? "")
        case "InterfacesRemoved":
            let interfaces = signal.arguments.dropFirst().first?.asStrings ?? []
            return "InterfacesRemoved @\(signal.arguments.first?.asObjectPath?.rawValue ?? "?") \(interfaces.sorted())"
        default:
            return signal.member
        }
    }

    @Test func terminatedBluetoothdPowersOffAndRemovesItsObjectsBeforeItsNameGoes() async throws {
        let seen = try await Self.restart(.terminate)
        #expect(seen.released && seen.back)
        let lines = seen.beforeRelease
        let disconnected = lines.firstIndex { $0.contains("Connected=false") && $0.hasSuffix("@\(Self.strap)") }
        let poweredOff = lines.firstIndex { $0.contains("Powered=false") && $0.hasSuffix("@/org/bluez/hci0") }
        let deviceRemoved = lines.firstIndex {
            $0.hasPrefix("InterfacesRemoved @\(Self.strap) ") && $0.contains("Device1")
        }
        let adapterRemoved = lines.firstIndex {
            $0.hasPrefix("InterfacesRemoved @/org/bluez/hci0 ") && $0.contains("Adapter1")
        }
        #expect(disconnected != nil, "\(lines)")
        #expect(poweredOff != nil, "\(lines)")
        #expect(deviceRemoved != nil, "\(lines)")
        #expect(adapterRemoved != nil, "\(lines)")
        if let disconnected, let deviceRemoved, let adapterRemoved {
            #expect(disconnected < deviceRemoved && deviceRemoved < adapterRemoved, "\(lines)")
        }
    }

    /// bluetoothd started again after SIGTERM registers the adapter off (its controller was powered off),
    /// loads the devices it stored, then powers the adapter (AutoEnable): `Powered` true comes after the
    /// devices. Killed, it left the controller on: the adapter comes back powered.
    @Test(arguments: BluezStop.allCases) func restartedBluetoothdAnnouncesItsDevicesBeforePoweringOn(
        _ stop: BluezStop
    ) async throws {
        let seen = try await Self.restart(stop)
        let lines = seen.afterBack
        let adapter = lines.firstIndex { $0.hasPrefix("InterfacesAdded @/org/bluez/hci0 ") }
        let strap = lines.firstIndex { $0.hasPrefix("InterfacesAdded @\(Self.strap) ") }
        let poweredOn = lines.firstIndex { $0.hasPrefix("PropertiesChanged Powered=true @/org/bluez/hci0") }
        #expect(adapter != nil && strap != nil, "\(lines)")
        if let adapter, let strap { #expect(adapter < strap, "\(lines)") }
        switch stop {
        case .terminate:
            #expect(adapter.map { lines[$0].hasSuffix("Powered=false") } ?? false, "\(lines)")
            #expect(poweredOn != nil, "\(lines)")
            if let strap, let poweredOn { #expect(strap < poweredOn, "\(lines)") }
        case .kill:
            #expect(adapter.map { lines[$0].hasSuffix("Powered=true") } ?? false, "\(lines)")
            #expect(poweredOn == nil, "\(lines)")
        }
    }

    @Test func killedBluetoothdOnlyLosesItsName() async throws {
        let seen = try await Self.restart(.kill)
        #expect(seen.released && seen.back)
        // Advertisement updates and other devices going stale may come before the kill; nothing may say the
        // strap's link or the adapter went.
        let lines = seen.beforeRelease
        #expect(!lines.contains { $0.contains("Connected=false") && $0.hasSuffix("@\(Self.strap)") }, "\(lines)")
        #expect(!lines.contains { $0.contains("Powered=false") }, "\(lines)")
        #expect(
            !lines.contains {
                $0.hasPrefix("InterfacesRemoved @\(Self.strap) ") || $0.hasPrefix("InterfacesRemoved @/org/bluez/hci0 ")
            })
    }
}
