import DBus
import TestSupport
import Testing

/// Peers that misbehave get typed errors; nothing crashes and the connection stays usable.
/// (Wrong signatures, unknown methods/objects: `DBusServerTests`; a peer vanishing mid-call:
/// `DBusInteropTests`. Truncated messages cannot cross a bus: the daemon validates every message
/// and drops the sender.)
@Suite(.timeLimit(.minutes(1))) struct DBusBadInputTests {
    static let echo = echo()

    /// `neverStarted` hears of each call of `Never` as its handler starts.
    static func echo(neverStarted: AsyncStream<Void>.Continuation? = nil) -> DBusInterface {
        DBusInterface(
            name: "io.blebridge.Echo1",
            methods: [
                DBusMethod(name: "Echo", inSignature: "ay", outSignature: "u") { call in
                    [.uint32(UInt32(call.arguments[0].asBytes?.count ?? 0))]
                },
                DBusMethod(name: "Never", outSignature: "s") { _ in
                    neverStarted?.yield()
                    // Real delay: a handler that answers only after the test is over.
                    try await Task.sleep(for: .seconds(60))
                    return [.string("late")]
                },
            ])
    }

    @Test func hugeArraysArriveOrAreRefusedWithATypedError() async throws {
        try await withBus { bus in
            let server = try await bus.connect()
            try await server.export(path: "/echo", interfaces: [Self.echo])
            let client = try await bus.connect()
            let size: UInt32 = 20 * 1024 * 1024
            let big = DBusValue.bytes([UInt8](repeating: 0xAB, count: Int(size)))
            let reply = try await client.call(
                destination: server.uniqueName, path: "/echo", interface: "io.blebridge.Echo1", method: "Echo",
                arguments: [big], timeout: .seconds(30))
            #expect(reply == [.uint32(size)])
            // Over the protocol's 64 MiB array limit: refused before anything is sent.
            let tooBig = DBusValue.bytes([UInt8](repeating: 0, count: 64 * 1024 * 1024 + 1))
            let error = await expectThrows(DBusError.self) {
                try await client.call(
                    destination: server.uniqueName, path: "/echo", interface: "io.blebridge.Echo1", method: "Echo",
                    arguments: [tooBig])
            }
            #expect(error?.name == .limitsExceeded)
            #expect(
                try await client.call(
                    destination: server.uniqueName, path: "/echo", interface: "io.blebridge.Echo1", method: "Echo",
                    arguments: [.bytes([1])]) == [.uint32(1)])
        }
    }

    @Test func aServerThatClosesMidCallGivesNoReplyAndPendingCallsFailOnClose() async throws {
        try await withBus { bus in
            let (started, start) = AsyncStream.makeStream(of: Void.self)
            var handling = started.makeAsyncIterator()
            let server = try await bus.connect()
            try await server.export(path: "/echo", interfaces: [Self.echo(neverStarted: start)])
            let client = try await bus.connect()
            let call = Task {
                try await client.call(
                    destination: server.uniqueName, path: "/echo", interface: "io.blebridge.Echo1", method: "Never")
            }
            _ = await handling.next()  // the server holds the call
            server.close()
            let error = await expectThrows(DBusError.self) { try await call.value }
            #expect(error?.name == .noReply)

            // Closing our own connection fails its pending calls with Disconnected.
            let other = try await bus.connect()
            try await other.export(path: "/echo", interfaces: [Self.echo(neverStarted: start)])
            let pending = Task {
                try await client.call(
                    destination: other.uniqueName, path: "/echo", interface: "io.blebridge.Echo1", method: "Never")
            }
            _ = await handling.next()  // the call is pending at the other server
            client.close()
            let closed = await expectThrows(DBusError.self) { try await pending.value }
            #expect(closed?.name == .disconnected)
            let after = await expectThrows(DBusError.self) {
                try await client.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    method: "GetId")
            }
            #expect(after?.name == .disconnected)
            #expect(!client.isConnected)
        }
    }

    @Test func losingTheBusEndsStreamsAndFailsCalls() async throws {
        let bus = try await BusFixture.start()
        let client = try await bus.connect()
        let stream = try await client.signals(matching: DBusMatchRule(interface: "io.blebridge.Never"))
        await bus.stop()
        let clock = ContinuousClock()
        let start = clock.now
        #expect(await next(stream, timeout: .seconds(10)) == nil)
        #expect(clock.now - start < .seconds(9), "the stream did not end when the bus went away")
        let error = await expectThrows(DBusError.self) {
            try await client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "GetId")
        }
        #expect(error?.name == .disconnected)
    }
}
