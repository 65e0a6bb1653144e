import Foundation
import Synchronization

/// A real `mosquitto` broker on a free loopback port, for tests.
///
/// `max_queued_messages 0` (no limit) so a slow test subscriber never loses QoS 1 messages
/// to the broker's queue limit. The broker can be killed and restarted on the same port
/// (persistence on, in the fixture's directory) to test outages.
public final class MosquittoFixture: Sendable {
    public let port: UInt16
    public let directory: TemporaryDirectory
    public let configFile: URL
    private let current: Mutex<ChildProcess?>

    /// `extraConfiguration` is appended to the generated mosquitto.conf (e.g. TLS listeners,
    /// a password file). The default listener allows anonymous clients on 127.0.0.1.
    /// In `listener` and `extraConfiguration`, `{port}` stands for the fixture's port and `{dir}`
    /// for its directory (e.g. `listener {port} 127.0.0.1` plus `cafile {dir}/ca.crt`).
    public init(extraConfiguration: String = "", listener: String? = nil) async throws {
        let port = try FreePort.loopback()
        let directory = try TemporaryDirectory(prefix: "mosquitto")
        // Started as root, mosquitto drops to the `mosquitto` user: without this it cannot write
        // its persistence file, and persistent sessions silently vanish across restarts.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        func expand(_ text: String) -> String {
            text.replacingOccurrences(of: "{port}", with: "\(port)").replacingOccurrences(
                of: "{dir}", with: directory.path)
        }
        let config = """
            per_listener_settings false
            \(expand(listener ?? "listener \(port) 127.0.0.1\nallow_anonymous true"))
            max_queued_messages 0
            max_inflight_messages 0
            persistence true
            persistence_location \(directory.path)/
            autosave_interval 1
            log_dest stderr
            log_type error
            log_type warning
            \(expand(extraConfiguration))
            """
        self.port = port
        self.directory = directory
        self.configFile = try directory.write("mosquitto.conf", config)
        self.current = Mutex(nil)
        try await start()
    }

    public var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Starts the broker (again) and waits until it accepts connections.
    public func start() async throws {
        let process = try ChildProcess("mosquitto", ["-c", configFile.path])
        current.withLock { $0 = process }
        let port = self.port
        let settled = await waitUntil(interval: .milliseconds(20)) {
            FreePort.isAccepting(port) || !process.isRunning
        }
        if settled && FreePort.isAccepting(port) { return }
        throw FixtureError("mosquitto did not start on port \(port): \(process.standardError)")
    }

    /// Stops the broker: gracefully (SIGTERM, persists its state) or with SIGKILL.
    public func stop(kill: Bool = false) async {
        guard let process = current.withLock({ $0 }) else { return }
        if kill {
            process.signal(SIGKILL)
            await process.waitForExit(timeout: .seconds(5))
        } else {
            await process.stop()
        }
        current.withLock { $0 = nil }
    }

    /// Freezes the broker (SIGSTOP): connections stay open but nothing is answered.
    public func pause() {
        current.withLock { $0 }?.signal(SIGSTOP)
    }

    /// Lets a paused broker run again (SIGCONT).
    public func resume() {
        current.withLock { $0 }?.signal(SIGCONT)
    }

    public var standardError: String { current.withLock { $0?.standardError ?? "" } }
}
