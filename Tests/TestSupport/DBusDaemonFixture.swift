import DBus
import Foundation

/// A private `dbus-daemon` on a Unix socket in a temporary directory, for tests.
///
/// Its policy allows everything (any name may be owned, any message sent), like a
/// session bus, so the simulator can own `org.bluez` on it.
public final class DBusDaemonFixture: Sendable {
    public let directory: TemporaryDirectory
    public let address: String
    public let process: ChildProcess

    public init() async throws {
        let directory = try TemporaryDirectory(prefix: "dbus")
        let socket = directory.file("bus").path
        let config = PrivateBusConfiguration.text(socketPath: socket)
        let configFile = try directory.write("bus.conf", config)
        let process = try ChildProcess(
            "dbus-daemon", ["--config-file=\(configFile.path)", "--nofork", "--nopidfile", "--print-address=1"])
        guard await process.waitForOutput(timeout: .seconds(10), { $0.contains("\n") }) else {
            await process.stop()
            throw FixtureError("dbus-daemon did not start: \(process.standardError)")
        }
        let printed = process.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
        self.directory = directory
        self.address = printed.isEmpty ? "unix:path=\(socket)" : printed
        self.process = process
    }

    /// Environment that points libdbus clients (busctl, dbus-send, python-dbus, bleak)
    /// at this bus as both the system and the session bus.
    public var environment: [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": address, "DBUS_SESSION_BUS_ADDRESS": address]
    }

    public func stop() async {
        await process.stop()
    }
}
