import DBus
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.timeLimit(.minutes(1))) struct DBusServerTests {
    static let name = "io.blebridge.Test"
    static let path: DBusObjectPath = "/io/blebridge/Test/obj1"
    static let interface = "io.blebridge.Test1"

    /// An interface with an echo, an adder, a method that fails by name, a slow method and a
    /// property of each access kind. `slowStarted` hears of each call of the slow method as its
    /// handler starts.
    static func testInterface(slowStarted: AsyncStream<Void>.Continuation? = nil) -> DBusInterface {
        let counterBox = Counter(7)
        return DBusInterface(
            name: interface,
            methods: [
                DBusMethod(name: "Echo", inSignature: "s", outSignature: "s") { call in
                    [call.arguments[0]]
                },
                DBusMethod(name: "Add", inSignature: "ii", outSignature: "i") { call in
                    [.int32((call.arguments[0].asInt32 ?? 0) + (call.arguments[1].asInt32 ?? 0))]
                },
                DBusMethod(name: "Busy") { _ in
                    throw DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
                },
                DBusMethod(name: "Slow", inSignature: "u") { call in
                    slowStarted?.yield()
                    // Real delay: the slow method's answer time, given by the caller.
                    try await Task.sleep(for: .milliseconds(Int(call.arguments[0].asUInt32 ?? 0)))
                    return []
                },
                DBusMethod(name: "WhoAmI", outSignature: "s") { call in [.string(call.sender)] },
                DBusMethod(name: "Lies", outSignature: "s") { _ in [.uint32(1)] },
            ],
            properties: [
                DBusProperty(name: "Name", signature: "s") { .string("thing") },
                DBusProperty(name: "Missing", signature: "n") { nil },
                DBusProperty(
                    name: "Counter", signature: "i", access: .readwrite,
                    get: { .int32(counterBox.value.withLock { $0 }) },
                    set: { value in counterBox.value.withLock { $0 = value.asInt32 ?? 0 } }),
            ],
            signals: [DBusSignalDescription(name: "Ping", signature: "s")])
    }

    final class Counter: Sendable {
        let value: Mutex<Int32>
        init(_ initial: Int32) { value = Mutex(initial) }
    }

    func serve(_ bus: BusFixture, slowStarted: AsyncStream<Void>.Continuation? = nil) async throws -> (
        server: DBusConnection, client: DBusConnection
    ) {
        let server = try await bus.connect()
        #expect(try await server.requestName(Self.name) == .primaryOwner)
        try await server.export(path: Self.path, interfaces: [Self.testInterface(slowStarted: slowStarted)])
        return (server, try await bus.connect())
    }

    func call(
        _ client: DBusConnection, _ method: String, _ arguments: [DBusValue] = [], interface: String = interface,
        path: DBusObjectPath = path
    ) async throws -> [DBusValue] {
        try await client.call(
            destination: Self.name, path: path, interface: interface, method: method, arguments: arguments)
    }

    @Test func methodsReturnValuesAndErrorsByName() async throws {
        try await withBus { bus in
            let (server, client) = try await serve(bus)
            #expect(try await call(client, "Echo", [.string("hé")]) == [.string("hé")])
            #expect(try await call(client, "Add", [.int32(40), .int32(2)]) == [.int32(42)])
            #expect(try await call(client, "WhoAmI") == [.string(client.uniqueName)])
            let busy = await expectThrows(DBusError.self) { try await call(client, "Busy") }
            #expect(busy == DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress"))
            let lies = await expectThrows(DBusError.self) { try await call(client, "Lies") }
            #expect(lies?.name == .failed)
            _ = server
        }
    }

    /// `whenAnswered` hears which answer came, before the caller resumes: nil for a reply, the error's
    /// name for an error and for a time-out (a `Peripheral` repeats a call answered `InProgress`).
    @Test func whenAnsweredIsGivenTheAnswersErrorName() async throws {
        try await withBus { bus in
            let (server, client) = try await serve(bus)
            let heard = Mutex<[DBusErrorName?]>([])
            func answered(_ method: String, _ arguments: [DBusValue], timeout: Duration = .seconds(25)) async {
                let note: @Sendable (DBusErrorName?) -> Void = { name in heard.withLock { $0.append(name) } }
                _ = try? await client.call(
                    destination: Self.name, path: Self.path, interface: Self.interface, method: method,
                    arguments: arguments, timeout: timeout, whenAnswered: note)
                #expect(heard.withLock { $0.count } == 1, "heard before the caller resumed")
            }
            await answered("Echo", [.string("x")])
            #expect(heard.withLock { $0 } == [nil])
            heard.withLock { $0 = [] }
            await answered("Busy", [])
            #expect(heard.withLock { $0 } == [DBusErrorName("org.bluez.Error.InProgress")])
            heard.withLock { $0 = [] }
            await answered("Slow", [.uint32(3000)], timeout: .milliseconds(100))
            #expect(heard.withLock { $0 } == [.noReply])
            _ = server
        }
    }

    @Test func unknownThingsAndWrongSignaturesGetStandardErrors() async throws {
        try await withBus { bus in
            let (server, client) = try await serve(bus)
            let method = await expectThrows(DBusError.self) { try await call(client, "Nope") }
            #expect(method?.name == .unknownMethod)
            let object = await expectThrows(DBusError.self) { try await call(client, "Echo", path: "/nowhere") }
            #expect(object?.name == .unknownObject)
            let arguments = await expectThrows(DBusError.self) { try await call(client, "Echo", [.uint32(1)]) }
            #expect(arguments?.name == .invalidArgs)
            let interface = await expectThrows(DBusError.self) {
                try await call(client, "Echo", [.string("x")], interface: "io.blebridge.Other")
            }
            #expect(interface?.name == .unknownMethod)
            // Still usable afterwards.
            #expect(try await call(client, "Echo", [.string("ok")]) == [.string("ok")])
            _ = server
        }
    }

    @Test func slowHandlersDoNotBlockOthers() async throws {
        try await withBus { bus in
            let (started, start) = AsyncStream.makeStream(of: Void.self)
            let (server, client) = try await serve(bus, slowStarted: start)
            // Slow answers after 120 s; only its reply counts as finished. The 20 adds once took over
            // 20 s in a full parallel run, when Slow took 20 s. If the server served calls one at a
            // time, the adds would wait for Slow's reply (or time out) and the check fails.
            let finished = Mutex(false)
            let slow = Task {
                if (try? await call(client, "Slow", [.uint32(120_000)])) != nil { finished.withLock { $0 = true } }
            }
            // The server is inside Slow's handler before the adds go out.
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            for index in 0..<20 {
                #expect(try await call(client, "Add", [.int32(Int32(index)), .int32(1)]) == [.int32(Int32(index) + 1)])
            }
            #expect(finished.withLock { $0 } == false, "the slow call should still be running")
            slow.cancel()
            _ = await slow.value
            _ = server
        }
    }

    @Test func callsTimeOut() async throws {
        try await withBus { bus in
            let (server, client) = try await serve(bus)
            let clock = ContinuousClock()
            let start = clock.now
            let error = await expectThrows(DBusError.self) {
                try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.interface, method: "Slow",
                    arguments: [.uint32(3000)], timeout: .milliseconds(200))
            }
            #expect(error?.name == .noReply)
            #expect(clock.now - start < .seconds(2))
            _ = server
        }
    }

    @Test func cancellingACallEndsIt() async throws {
        try await withBus { bus in
            let (started, start) = AsyncStream.makeStream(of: Void.self)
            let (server, client) = try await serve(bus, slowStarted: start)
            let task = Task { try await call(client, "Slow", [.uint32(3000)]) }
            // Cancelled while the call is in flight (the server is handling it).
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            _ = server
        }
    }

    @Test func propertiesGetGetAllSet() async throws {
        try await withBus { bus in
            let (server, client) = try await serve(bus)
            let properties = "org.freedesktop.DBus.Properties"
            #expect(
                try await call(client, "Get", [.string(Self.interface), .string("Name")], interface: properties)
                    == [.variant(.string("thing"))])
            let all = try await call(client, "GetAll", [.string(Self.interface)], interface: properties)
            #expect(all.first?.asDictionary == ["Name": .string("thing"), "Counter": .int32(7)])
            _ = try await call(
                client, "Set", [.string(Self.interface), .string("Counter"), .variant(.int32(99))],
                interface: properties)
            #expect(
                try await call(client, "Get", [.string(Self.interface), .string("Counter")], interface: properties)
                    == [.variant(.int32(99))])
            let readOnly = await expectThrows(DBusError.self) {
                try await call(
                    client, "Set", [.string(Self.interface), .string("Name"), .variant(.string("x"))],
                    interface: properties)
            }
            #expect(readOnly?.name == .propertyReadOnly)
            let wrongType = await expectThrows(DBusError.self) {
                try await call(
                    client, "Set", [.string(Self.interface), .string("Counter"), .variant(.string("x"))],
                    interface: properties)
            }
            // gdbus (bluetoothd) answers a variant of the wrong type with InvalidSignature.
            #expect(wrongType?.name == .invalidSignature)
            #expect(wrongType?.message == "Invalid signature for 'Counter'")
            let missing = await expectThrows(DBusError.self) {
                try await call(client, "Get", [.string(Self.interface), .string("Missing")], interface: properties)
            }
            #expect(missing?.name == .invalidArgs)
            _ = server
        }
    }

    @Test func objectManagerReportsObjectsAndEmitsAddedRemoved() async throws {
        try await withBus { bus in
            let (server, client) = try await serve(bus)
            try await server.addObjectManager(at: "/")
            let added = try await client.signals(
                matching: DBusMatchRule(sender: Self.name, interface: "org.freedesktop.DBus.ObjectManager"))
            let managed = try await call(
                client, "GetManagedObjects", interface: "org.freedesktop.DBus.ObjectManager", path: "/")
            let objects = try #require(managed.first?.asObjectPathDictionary)
            #expect(objects[Self.path]?.asDictionary?[Self.interface]?.asDictionary?["Name"] == .string("thing"))

            let second: DBusObjectPath = "/io/blebridge/Test/obj2"
            try await server.export(path: second, interfaces: [Self.testInterface()])
            let addedSignal = try #require(await next(added))
            #expect(addedSignal.member == "InterfacesAdded")
            #expect(addedSignal.path == "/")
            #expect(addedSignal.arguments.first == .objectPath(second))
            #expect(addedSignal.arguments[1].asDictionary?[Self.interface]?.asDictionary?["Counter"] == .int32(7))

            try await server.unexport(path: second)
            let removed = try #require(await next(added))
            #expect(removed.member == "InterfacesRemoved")
            #expect(removed.arguments.first == .objectPath(second))
            #expect(removed.arguments[1].asStrings?.contains(Self.interface) == true)
        }
    }

    @Test func introspectionDescribesObjectsAndChildren() async throws {
        try await withBus { bus in
            let (server, client) = try await serve(bus)
            let introspectable = "org.freedesktop.DBus.Introspectable"
            let leaf = try #require(try await call(client, "Introspect", interface: introspectable).first?.asString)
            #expect(leaf.contains("<interface name=\"io.blebridge.Test1\">"))
            #expect(leaf.contains("<method name=\"Add\"><arg type=\"i\" direction=\"in\"/>"))
            #expect(leaf.contains("<property name=\"Counter\" type=\"i\" access=\"readwrite\"/>"))
            let root = try #require(
                try await call(client, "Introspect", interface: introspectable, path: "/io/blebridge/Test").first?
                    .asString)
            #expect(root.contains("<node name=\"obj1\"/>"))
            _ = server
        }
    }

    @Test func handlersReceiveAndReturnFileDescriptors() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            _ = try await server.requestName(Self.name)
            // AcquireNotify-shaped: returns (h fd, q mtu); the handler keeps the other socket end.
            let keptBox = FDStore()
            try await server.export(
                path: Self.path,
                interfaces: [
                    DBusInterface(
                        name: Self.interface,
                        methods: [
                            DBusMethod(name: "AcquireNotify", inSignature: "a{sv}", outSignature: "hq") { _ in
                                var pair: [Int32] = [0, 0]
                                guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else {
                                    throw DBusError(.failed, "socketpair")
                                }
                                keptBox.store(DBusFileDescriptor(takingOwnershipOf: pair[0]))
                                return [.unixFD(DBusFileDescriptor(takingOwnershipOf: pair[1])), .uint16(23)]
                            },
                            DBusMethod(name: "ReadFrom", inSignature: "h", outSignature: "ay") { call in
                                guard let fd = call.arguments[0].asFileDescriptor else { return [] }
                                var buffer = [UInt8](repeating: 0, count: 64)
                                let count = read(fd.rawValue, &buffer, buffer.count)
                                return [.bytes(Array(buffer.prefix(max(0, count))))]
                            },
                        ])
                ])
            let client = try await bus.connect()
            let reply = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.interface, method: "AcquireNotify",
                arguments: [.properties([:])])
            let fd = try #require(reply.first?.asFileDescriptor)
            #expect(reply.last == .uint16(23))
            let serverEnd = try #require(keptBox.first)
            let payload: [UInt8] = [1, 2, 3]
            #expect(write(serverEnd.rawValue, payload, 3) == 3)
            var received = [UInt8](repeating: 0, count: 8)
            #expect(read(fd.rawValue, &received, 8) == 3)
            #expect(Array(received.prefix(3)) == payload)

            // And a descriptor passed in: the handler reads from it.
            var pipeEnds: [Int32] = [0, 0]
            #expect(pipe(&pipeEnds) == 0)
            let readEnd = DBusFileDescriptor(takingOwnershipOf: pipeEnds[0])
            #expect(write(pipeEnds[1], "hey", 3) == 3)
            close(pipeEnds[1])
            let reply2 = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.interface, method: "ReadFrom",
                arguments: [.unixFD(readEnd)])
            #expect(reply2.first?.asBytes == Array("hey".utf8))
            _ = server
        }
    }

    final class FDStore: Sendable {
        let descriptors = Mutex<[DBusFileDescriptor]>([])
        func store(_ fd: DBusFileDescriptor) { descriptors.withLock { $0.append(fd) } }
        var first: DBusFileDescriptor? { descriptors.withLock { $0.first } }
    }
}
