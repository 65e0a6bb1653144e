import DBus
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.timeLimit(.minutes(1))) struct DBusSignalTests {
    @Test func signalsReachMatchingStreamsOnly() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            _ = try await emitter.requestName("io.blebridge.Emitter")
            let listener = try await bus.connect()
            let pings = try await listener.signals(
                matching: DBusMatchRule(sender: "io.blebridge.Emitter", interface: "io.blebridge.Test1", member: "Ping")
            )
            let changes = try await listener.signals(
                matching: .propertiesChanged(interface: "org.bluez.GattCharacteristic1", pathNamespace: "/org/bluez"))
            try emitter.emitSignal(
                path: "/a", interface: "io.blebridge.Test1", name: "Pong", arguments: [.string("no")])
            try emitter.emitSignal(
                path: "/a", interface: "io.blebridge.Test1", name: "Ping", arguments: [.string("yes")])
            try emitter.emitPropertiesChanged(
                path: "/org/bluez/hci0/dev_1/char0001", interface: "org.bluez.Device1", changed: ["RSSI": .int16(-60)])
            try emitter.emitPropertiesChanged(
                path: "/org/other", interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([0])])
            try emitter.emitPropertiesChanged(
                path: "/org/bluez/hci0/dev_1/char0001", interface: "org.bluez.GattCharacteristic1",
                changed: ["Value": .bytes([1, 2])])
            let ping = try #require(await next(pings))
            #expect(ping.member == "Ping")
            #expect(ping.arguments == [.string("yes")])
            #expect(ping.sender == emitter.uniqueName)
            let change = try #require(await next(changes))
            #expect(change.path == "/org/bluez/hci0/dev_1/char0001")
            #expect(change.arguments[0] == .string("org.bluez.GattCharacteristic1"))
            #expect(change.arguments[1].asDictionary?["Value"]?.asBytes == [1, 2])
            #expect(change.arguments[2] == .strings([]))
        }
    }

    @Test func batchesDeliverEverySignalInOrder() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let listener = try await bus.connect()
            let batches = try await listener.signalBatches(
                matching: .propertiesChanged(sender: emitter.uniqueName, interface: "org.bluez.GattCharacteristic1"))
            let count = 2_000
            for index in 0..<count {
                try emitter.emitPropertiesChanged(
                    path: "/org/bluez/hci0/dev_1/char0001", interface: "org.bluez.GattCharacteristic1",
                    changed: ["Value": .bytes([UInt8(index % 256), UInt8(index / 256)])])
            }
            var received: [Int] = []
            var batchCount = 0
            while received.count < count, let batch = await next(batches) {
                batchCount += 1
                for signal in batch {
                    let bytes = try #require(signal.arguments[1].asDictionary?["Value"]?.asBytes)
                    received.append(Int(bytes[0]) + Int(bytes[1]) * 256)
                }
            }
            #expect(received == Array(0..<count))
            #expect(batchCount <= count)
        }
    }

    @Test func endingAStreamRemovesItsMatchRule() async throws {
        try await withBus { bus in
            // An independent observer: dbus-monitor sees the AddMatch/RemoveMatch calls on the bus.
            let monitor = try ChildProcess(
                "dbus-monitor",
                ["--address", bus.daemon.address, "type='method_call',interface='org.freedesktop.DBus'"])
            defer { monitor.signal(SIGKILL) }
            #expect(await monitor.waitForOutput { $0.contains("NameAcquired") || $0.contains("member=") })
            let listener = try await bus.connect()
            let rule = DBusMatchRule(interface: "io.blebridge.Test1", member: "Gone")
            let task = Task {
                let stream = try await listener.signals(matching: rule)
                for await _ in stream {}
            }
            #expect(await monitor.waitForOutput { $0.contains("member=AddMatch") && $0.contains("member='Gone'") })
            #expect(!monitor.standardOutput.contains("member=RemoveMatch"))
            task.cancel()
            #expect(await monitor.waitForOutput { $0.contains("member=RemoveMatch") && $0.contains("member='Gone'") })
        }
    }

    @Test func nameOwnerChangesShowAVanishingAndReturningOwner() async throws {
        try await withBus { bus in
            let watcher = try await bus.connect()
            let changes = try await watcher.nameOwnerChanges("org.bluez")
            let first = try await bus.connect()
            #expect(try await first.requestName("org.bluez") == .primaryOwner)
            #expect(try await watcher.nameOwner("org.bluez") == first.uniqueName)
            let appeared = try #require(await next(changes))
            #expect(appeared == DBusNameOwnerChange(name: "org.bluez", oldOwner: nil, newOwner: first.uniqueName))
            first.close()
            let vanished = try #require(await next(changes))
            #expect(vanished == DBusNameOwnerChange(name: "org.bluez", oldOwner: first.uniqueName, newOwner: nil))
            #expect(try await watcher.nameOwner("org.bluez") == nil)
            let second = try await bus.connect()
            #expect(try await second.requestName("org.bluez") == .primaryOwner)
            let returned = try #require(await next(changes))
            #expect(returned.newOwner == second.uniqueName)
            #expect(try await second.releaseName("org.bluez") == .released)
            let released = try #require(await next(changes))
            #expect(released.newOwner == nil)
        }
    }

    @Test func wellKnownSenderFilterFollowsTheNewOwner() async throws {
        try await withBus { bus in
            let listener = try await bus.connect()
            let stream = try await listener.signals(
                matching: DBusMatchRule(sender: "org.bluez", interface: "io.blebridge.Test1"))
            let impostor = try await bus.connect()
            let first = try await bus.connect()
            #expect(try await first.requestName("org.bluez") == .primaryOwner)
            let owners = try await listener.nameOwnerChanges("org.bluez")
            try impostor.emitSignal(
                path: "/", interface: "io.blebridge.Test1", name: "Tick", arguments: [.string("impostor")])
            try first.emitSignal(
                path: "/", interface: "io.blebridge.Test1", name: "Tick", arguments: [.string("first")])
            #expect(try #require(await next(stream)).arguments == [.string("first")])
            // `close()` hands the shutdown to the connection's thread: the bus frees the name when it
            // sees the socket close, which under load came after the next RequestName (answered
            // `exists`, so the second connection never owned the name and its signal was rightly
            // filtered). Wait for the name to vanish, as bluetoothd's successor would find it free.
            first.close()
            let vanished = await withDeadline(.seconds(20)) { () -> Bool in
                for await change in owners where change.newOwner == nil { return true }
                return false
            }
            #expect(vanished == true)
            let second = try await bus.connect()
            #expect(try await second.requestName("org.bluez") == .primaryOwner)
            try second.emitSignal(
                path: "/", interface: "io.blebridge.Test1", name: "Tick", arguments: [.string("second")])
            #expect(try #require(await next(stream)).arguments == [.string("second")])
        }
    }
}
