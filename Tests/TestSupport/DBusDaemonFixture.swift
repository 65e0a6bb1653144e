import DBus
import Foundation

/// A private `dbus-daemon` on a Unix socket in a temporary directory, for tests.
///
/// Its policy allows everything (any name may be owned, any message sent), like a
/// session bus, so the simulator can own `org.bluez` on it.
package final class DBusDaemonFixture: Sendable {
    package let directory: TemporaryDirectory
    package let address: String
    package let process: ChildProcess

    /// The configuration file the daemon reads (rewrite it, then ``reloadConfiguration()``).
    package let configurationPath: String
    /// The daemon's socket.
    package let socketPath: String

    /// A daemon listening on `socketPath` (default: a socket in its own temporary directory), with
    /// `configuration` (default: ``PrivateBusConfiguration``'s allow-everything policy) given the
    /// socket path.
    package init(socketPath: String? = nil, configuration: ((String) -> String)? = nil) async throws {
        let directory = try TemporaryDirectory(prefix: "dbus")
        let socket = socketPath ?? directory.file("bus").path
        let config = configuration?(socket) ?? PrivateBusConfiguration.text(socketPath: socket)
        let configFile = try directory.write("bus.conf", config)
        self.configurationPath = configFile.path
        self.socketPath = socket
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
    package var environment: [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": address, "DBUS_SESSION_BUS_ADDRESS": address]
    }

    /// Makes the daemon read its configuration file again (SIGHUP), as `systemctl reload dbus` does.
    package func reloadConfiguration() {
        process.signal(SIGHUP)
    }

    package func stop() async {
        await process.stop()
    }
}
