import Foundation
import Synchronization

/// A real `mosquitto` broker on a free loopback port, for tests.
///
/// `max_queued_messages 0` (no limit) so a slow test subscriber never loses QoS 1 messages
/// to the broker's queue limit. The broker can be killed and restarted on the same port
/// (persistence on, in the fixture's directory) to test outages.
package final class MosquittoFixture: Sendable {
    package let port: UInt16
    package let directory: TemporaryDirectory
    package let configFile: URL
    private let current: Mutex<ChildProcess?>

    /// `extraConfiguration` is appended to the generated mosquitto.conf (e.g. TLS listeners,
    /// a password file). The default listener allows anonymous clients on 127.0.0.1.
    /// In `listener` and `extraConfiguration`, `{port}` stands for the fixture's port and `{dir}`
    /// for its directory (e.g. `listener {port} 127.0.0.1` plus `cafile {dir}/ca.crt`).
    package init(extraConfiguration: String = "", listener: String? = nil) async throws {
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

    package var url: String { "mqtt://127.0.0.1:\(port)" }

    /// A broker whose bridge connects to `remote` (a mosquitto bridge, as between two sites):
    /// ``bridgeConfiguration(to:topics:cleanSession:name:)`` appended to the usual configuration.
    package convenience init(
        bridgingTo remote: MosquittoFixture, topics: [String], cleanSession: Bool = false, name: String = "site"
    ) async throws {
        try await self.init(
            extraConfiguration: Self.bridgeConfiguration(
                to: remote.port, topics: topics, cleanSession: cleanSession, name: name))
    }

    /// A mosquitto bridge connection to the broker on loopback `port`, carrying `topics` (filters)
    /// both ways at QoS 1. `try_private` marks the connection as a bridge (mosquitto then keeps
    /// the retain flag of what it forwards and sends nothing back where it came from, so the
    /// bridge loops nothing); `restart_timeout 1 2` retries a lost connection every 1–2 s (measured 2–3 s with mosquitto 2.0.11).
    /// `cleanSession` false (the default here, as docs/multi-gateway.md advises) keeps the bridge's
    /// sessions on both brokers across a cut, so what was published during it is delivered when
    /// the bridge is back.
    package static func bridgeConfiguration(
        to port: UInt16, topics: [String], cleanSession: Bool = false, name: String = "site"
    ) -> String {
        (["connection \(name)", "address 127.0.0.1:\(port)", "remote_clientid bridge-\(name)-\(port)"]
            + topics.map { "topic \($0) both 1" }
            + ["cleansession \(cleanSession)", "try_private true", "restart_timeout 1 2", "start_type automatic"])
            .joined(separator: "\n")
    }

    /// Starts the broker (again) and waits until it accepts connections.
    package func start() async throws {
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
    package func stop(kill: Bool = false) async {
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
    package func pause() {
        current.withLock { $0 }?.signal(SIGSTOP)
    }

    /// The running broker's process id (0 when stopped).
    package var processIdentifier: Int32 { current.withLock { $0?.processIdentifier ?? 0 } }

    /// Lets a paused broker run again (SIGCONT).
    package func resume() {
        current.withLock { $0 }?.signal(SIGCONT)
    }

    package var standardError: String { current.withLock { $0?.standardError ?? "" } }
}
