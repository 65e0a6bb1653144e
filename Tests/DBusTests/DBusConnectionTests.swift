import DBus
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(1))) struct DBusConnectionTests {
    @Test func connectsAndReadsTheBusDaemon() async throws {
        try await withBus { bus in
            let connection = try await bus.connect()
            #expect(connection.uniqueName.hasPrefix(":"))
            let names = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "ListNames")
            let list = try #require(names.first?.asStrings)
            #expect(list.contains("org.freedesktop.DBus"))
            #expect(list.contains(connection.uniqueName))
            connection.close()
        }
    }

    @Test func unknownServiceIsATypedError() async throws {
        try await withBus { bus in
            let connection = try await bus.connect()
            let error = await expectThrows(DBusError.self) {
                try await connection.call(
                    destination: "org.example.Nobody", path: "/", interface: "org.example.Nothing", method: "Hello")
            }
            #expect(error?.name == .serviceUnknown)
        }
    }
}
