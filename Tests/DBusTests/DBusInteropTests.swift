import DBus
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Both directions against independent implementations: python3-dbus, busctl (sd-bus),
/// dbus-send and the bus daemon itself.
@Suite(.timeLimit(.minutes(1))) struct DBusInteropTests {
    /// Descriptors the AcquireNotify handler keeps (its end of each socket pair).
    final class Kept: Sendable {
        let descriptors = Mutex<[DBusFileDescriptor]>([])
    }

    /// Our side of the conversation: `io.blebridge.Interop` at `/interop`, ObjectManager at `/`.
    static func serve(_ bus: BusFixture) async throws -> (DBusConnection, Kept) {
        let server = try await bus.connect()
        let kept = Kept()
        let levelBox = LevelBox()
        try await server.addObjectManager(at: "/")
        try await server.export(
            path: "/interop",
            interfaces: [
                DBusInterface(
                    name: "io.blebridge.Interop1",
                    methods: [
                        DBusMethod(name: "Add", inSignature: "ii", outSignature: "i") { call in
                            [
                                .int32(
                                    try call.arguments.decode(0, as: Int32.self)
                                        + call.arguments.decode(1, as: Int32.self))
                            ]
                        },
                        DBusMethod(name: "Sample", outSignature: "a{sv}") { _ in [InteropPeer.sample] },
                        DBusMethod(name: "Expect", inSignature: "a{sv}", outSignature: "b") { call in
                            [.boolean(call.arguments[0].asDictionary == InteropPeer.sample.asDictionary)]
                        },
                        DBusMethod(name: "Busy") { _ in
                            throw DBusError(
                                name: "org.bluez.Error.InProgress", message: "Operation already in progress")
                        },
                        DBusMethod(name: "AcquireNotify", inSignature: "a{sv}", outSignature: "hq") { _ in
                            var pair: [Int32] = [0, 0]
                            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else {
                                throw DBusError(.failed, "socketpair failed")
                            }
                            let ours = DBusFileDescriptor(takingOwnershipOf: pair[0])
                            kept.descriptors.withLock { $0.append(ours) }
                            _ = write(ours.rawValue, [0x06, 0x48] as [UInt8], 2)
                            return [.unixFD(DBusFileDescriptor(takingOwnershipOf: pair[1])), .uint16(23)]
                        },
                    ],
                    properties: [
                        DBusProperty(name: "Name", signature: "s") { .string("interop") },
                        DBusProperty(
                            name: "Level", signature: "y", access: .readwrite,
                            get: { .byte(levelBox.value.withLock { $0 }) },
                            set: { value in levelBox.value.withLock { $0 = value.asByte ?? 0 } }),
                    ])
            ])
        #expect(try await server.requestName(InteropPeer.ourName) == .primaryOwner)
        return (server, kept)
    }

    final class LevelBox: Sendable {
        let value = Mutex<UInt8>(0)
    }

    @Test func pythonClientCallsOurServer() async throws {
        try await withBus { bus in
            let (server, _) = try await Self.serve(bus)
            let directory = try TemporaryDirectory(prefix: "dbus-interop")
            let script = try InteropPeer.writeScript(in: directory)
            let result = try await ChildProcess.run(
                InteropPeer.python, [script, "client", bus.daemon.address, InteropPeer.ourName], timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            #expect(result.stdout.contains("DONE"), "\(result.stdout)\n\(result.stderr)")
            _ = server
        }
    }

    @Test func busctlAndDBusSendCallOurServer() async throws {
        try await withBus { bus in
            let (server, _) = try await Self.serve(bus)
            let address = bus.daemon.address
            func busctl(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
                try await ChildProcess.run("busctl", ["--address=\(address)"] + arguments, timeout: .seconds(20))
            }
            let add = try await busctl([
                "call", InteropPeer.ourName, "/interop", "io.blebridge.Interop1", "Add", "ii", "40", "2",
            ])
            #expect(add.stdout.trimmingWhitespace == "i 42", "\(add.stderr)")
            let name = try await busctl([
                "get-property", InteropPeer.ourName, "/interop", "io.blebridge.Interop1", "Name",
            ])
            #expect(name.stdout.trimmingWhitespace == "s \"interop\"", "\(name.stderr)")
            let set = try await busctl([
                "set-property", InteropPeer.ourName, "/interop", "io.blebridge.Interop1", "Level", "y", "7",
            ])
            #expect(set.status == 0, "\(set.stderr)")
            let level = try await busctl([
                "get-property", InteropPeer.ourName, "/interop", "io.blebridge.Interop1", "Level",
            ])
            #expect(level.stdout.trimmingWhitespace == "y 7", "\(level.stderr)")
            let sample = try await busctl(["call", InteropPeer.ourName, "/interop", "io.blebridge.Interop1", "Sample"])
            #expect(sample.stdout.contains("\"RSSI\" n -70"), "\(sample.stdout) \(sample.stderr)")
            #expect(sample.stdout.contains("\"Value\" ay 20 0 1 2 3"), "\(sample.stdout)")
            let busy = try await busctl(["call", InteropPeer.ourName, "/interop", "io.blebridge.Interop1", "Busy"])
            #expect(busy.status != 0)
            #expect(busy.stderr.contains("Operation already in progress"), "\(busy.stderr)")
            let introspect = try await busctl(["introspect", InteropPeer.ourName, "/interop"])
            #expect(introspect.stdout.contains(".AcquireNotify"), "\(introspect.stdout) \(introspect.stderr)")
            #expect(introspect.stdout.contains("org.freedesktop.DBus.Properties"))
            let tree = try await busctl(["tree", InteropPeer.ourName])
            #expect(tree.stdout.contains("/interop"), "\(tree.stdout) \(tree.stderr)")

            let send = try await ChildProcess.run(
                "dbus-send",
                [
                    "--bus=\(address)", "--print-reply", "--dest=\(InteropPeer.ourName)", "/interop",
                    "io.blebridge.Interop1.Add", "int32:-5", "int32:3",
                ])
            #expect(send.stdout.contains("int32 -2"), "\(send.stdout) \(send.stderr)")
            let unknown = try await ChildProcess.run(
                "dbus-send",
                [
                    "--bus=\(address)", "--print-reply", "--dest=\(InteropPeer.ourName)", "/nowhere",
                    "io.blebridge.Interop1.Add",
                ])
            #expect(unknown.stderr.contains("org.freedesktop.DBus.Error.UnknownObject"), "\(unknown.stderr)")
            _ = server
        }
    }

    @Test func ourClientReadsThePythonServiceAndTheBusDaemon() async throws {
        try await withBus { bus in
            let directory = try TemporaryDirectory(prefix: "dbus-interop")
            let script = try InteropPeer.writeScript(in: directory)
            let service = try ChildProcess(InteropPeer.python, [script, "service", bus.daemon.address])
            defer { service.signal(SIGKILL) }
            #expect(
                await service.waitForOutput(timeout: .seconds(20)) { $0.contains("READY") }, "\(service.standardError)")
            let client = try await bus.connect()
            let path: DBusObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/char0010"
            func py(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
                try await client.call(
                    destination: InteropPeer.serviceName, path: path, interface: "io.blebridge.Py1", method: method,
                    arguments: arguments)
            }
            // Python encodes, we decode.
            let sample = try await py("Sample")
            #expect(sample.first?.signature == "a{sv}")
            #expect(sample.first?.asDictionary == InteropPeer.sample.asDictionary)
            // We encode, Python decodes (and compares types, not just values).
            #expect(try await py("Expect", [InteropPeer.sample]) == [.string("OK")])

            // Signals from an independent emitter, BlueZ-shaped.
            let changes = try await client.signals(
                matching: .propertiesChanged(
                    sender: InteropPeer.serviceName, interface: "org.bluez.GattCharacteristic1"))
            _ = try await py("Notify", [.uint32(3)])
            for index in 0..<3 {
                let signal = try #require(await next(changes))
                #expect(signal.path == path)
                #expect(signal.arguments.first == .string("org.bluez.GattCharacteristic1"))
                #expect(
                    signal.arguments[1].asDictionary?["Value"]?.asBytes == [UInt8](repeating: UInt8(index), count: 20))
            }

            // The bus daemon's own interface.
            func daemon(_ interface: String, _ method: String, _ arguments: [DBusValue] = []) async throws
                -> [DBusValue]
            {
                try await client.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: interface,
                    method: method, arguments: arguments)
            }
            let owner = try await daemon("org.freedesktop.DBus", "GetNameOwner", [.string(InteropPeer.serviceName)])
            #expect(owner.first?.asString?.hasPrefix(":") == true)
            let id = try #require(try await daemon("org.freedesktop.DBus", "GetId").first?.asString)
            #expect(id.count == 32)
            let pid = try await daemon(
                "org.freedesktop.DBus", "GetConnectionUnixProcessID", [.string(client.uniqueName)])
            #expect(pid == [.uint32(UInt32(getpid()))])
            let features = try await daemon(
                "org.freedesktop.DBus.Properties", "Get", [.string("org.freedesktop.DBus"), .string("Interfaces")])
            #expect(features.first?.unwrappedVariant.asStrings?.contains("org.freedesktop.DBus.Monitoring") == true)
            let xml = try #require(
                try await daemon("org.freedesktop.DBus.Introspectable", "Introspect").first?.asString)
            #expect(xml.contains("<method name=\"RequestName\">"))

            // The peer disappears mid-call: a typed error, and the connection stays usable.
            let vanished = await expectThrows(DBusError.self) { try await py("Vanish") }
            #expect(vanished?.name == .noReply)
            #expect(try await client.nameOwner(InteropPeer.serviceName) == nil)
            #expect(try await daemon("org.freedesktop.DBus", "GetId").first?.asString == id)
        }
    }
}

extension String {
    var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
