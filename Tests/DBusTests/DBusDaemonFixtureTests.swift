import TestSupport
import Testing

@Suite struct DBusDaemonFixtureTests {
    /// The private bus the D-Bus tests rely on answers an independent client.
    @Test func privateBusAnswersDBusSend() async throws {
        let bus = try await DBusDaemonFixture()
        defer { Task { await bus.stop() } }
        let result = try await ChildProcess.run(
            "dbus-send",
            [
                "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.ListNames",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("org.freedesktop.DBus"))
    }
}
