import DBus
import TestSupport
import Testing

/// `DBusConnection.startCall`: a call leaves when it is started, its reply is awaited later.
@Suite(.timeLimit(.minutes(1))) struct DBusSentCallTests {
    static let name = "io.blebridge.SentCall"
    static let path: DBusObjectPath = "/io/blebridge/SentCall"
    static let interface = "io.blebridge.SentCall1"

    /// A server whose `Record(u)` notes its argument with the call's serial (the order it was sent
    /// in: the server runs handlers concurrently), and whose `Slow(u)` answers after that many
    /// milliseconds.
    final class Server: Sendable {
        let recorded = Recorded<(serial: UInt32, number: UInt32)>()
        /// The numbers recorded, in the order their calls were sent.
        var received: [UInt32] { recorded.all.sorted { $0.serial < $1.serial }.map(\.number) }
        let connection: DBusConnection

        init(_ bus: BusFixture) async throws {
            connection = try await bus.connect()
            #expect(try await connection.requestName(DBusSentCallTests.name) == .primaryOwner)
            let recorded = self.recorded
            try await connection.export(
                path: DBusSentCallTests.path,
                interfaces: [
                    DBusInterface(
                        name: DBusSentCallTests.interface,
                        methods: [
                            DBusMethod(name: "Record", inSignature: "u", outSignature: "u") { call in
                                let number = call.arguments[0].asUInt32 ?? 0
                                recorded.append((call.serial, number))
                                return [.uint32(number)]
                            },
                            DBusMethod(name: "Slow", inSignature: "u") { call in
                                // Real delay: the slow method's answer time, given by the caller.
                                try await Task.sleep(for: .milliseconds(Int(call.arguments[0].asUInt32 ?? 0)))
                                return []
                            },
                        ])
                ])
        }
    }

    static func start(_ client: DBusConnection, _ method: String, _ argument: UInt32) throws -> DBusSentCall {
        try client.startCall(
            destination: name, path: path, interface: interface, method: method, arguments: [.uint32(argument)])
    }

    @Test func callsLeaveInTheOrderStartedWhateverTaskAwaitsThem() async throws {
        try await withBus { bus in
            let server = try await Server(bus)
            let client = try await bus.connect()
            let calls = try (0..<50).map { try Self.start(client, "Record", UInt32($0)) }
            // Awaited last first, each by a task of its own: the order they left in is the order started.
            let replies = await withTaskGroup(of: (Int, [DBusValue]?).self) { group in
                for (index, call) in calls.enumerated().reversed() {
                    group.addTask { (index, try? await call.reply()) }
                }
                var replies: [Int: [DBusValue]] = [:]
                for await (index, reply) in group { replies[index] = reply }
                return replies
            }
            #expect(server.received == (0..<50).map { UInt32($0) })
            #expect((0..<50).allSatisfy { replies[$0] == [.uint32(UInt32($0))] })
        }
    }

    @Test func aReplyThatCameBeforeItWasAwaitedIsKept() async throws {
        try await withBus { bus in
            let server = try await Server(bus)
            let client = try await bus.connect()
            let call = try Self.start(client, "Record", 7)
            // A later call's reply comes after the first's on the same connection.
            _ = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.interface, method: "Record",
                arguments: [.uint32(8)])
            #expect(try await call.reply() == [.uint32(7)])
            #expect(server.received == [7, 8])
        }
    }

    @Test func aCancelledCallOrAwaitingTaskEndsTheWaitAtOnce() async throws {
        try await withBus { bus in
            // Held to the end: a server released at once left the name unowned, and a loaded run's
            // second call was answered `ServiceUnknown` before its cancellation.
            let server = try await Server(bus)
            defer { withExtendedLifetime(server) {} }
            let client = try await bus.connect()
            let cancelled = try Self.start(client, "Slow", 30_000)
            cancelled.cancel()
            #expect(await expectThrows(CancellationError.self) { try await cancelled.reply() } != nil)

            let abandoned = try Self.start(client, "Slow", 30_000)
            let waiter = Task { try await abandoned.reply() }
            waiter.cancel()
            #expect(await expectThrows(CancellationError.self) { try await waiter.value } != nil)
        }
    }

    @Test func aCallOnAClosedConnectionFailsDisconnected() async throws {
        try await withBus { bus in
            _ = try await Server(bus)
            let client = try await bus.connect()
            client.close()
            let call = try Self.start(client, "Record", 1)
            let error = await expectThrows(DBusError.self) { try await call.reply() }
            #expect(error?.name == .disconnected)
        }
    }
}
