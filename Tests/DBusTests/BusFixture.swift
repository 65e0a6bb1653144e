import DBus
import TestSupport

/// A private dbus-daemon plus connections to it, stopped when the test ends.
struct BusFixture {
    let daemon: DBusDaemonFixture

    static func start() async throws -> BusFixture {
        BusFixture(daemon: try await DBusDaemonFixture())
    }

    func connect() async throws -> DBusConnection {
        try await DBusConnection(address: daemon.address)
    }

    /// dbus-daemon takes seconds to honour SIGTERM; tests need no graceful shutdown.
    func stop() async {
        await daemon.process.stop(grace: .milliseconds(20))
    }
}

/// Runs `body` with a fresh private bus, stopping it afterwards even when `body` throws.
func withBus(_ body: (BusFixture) async throws -> Void) async throws {
    let bus = try await BusFixture.start()
    do {
        try await body(bus)
    } catch {
        await bus.stop()
        throw error
    }
    await bus.stop()
}

/// The next element of a stream, or nil after `timeout`.
func next<Element: Sendable>(
    _ stream: AsyncStream<Element>, timeout: Duration = .seconds(5)
) async -> Element? {
    await withDeadline(timeout) {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}
