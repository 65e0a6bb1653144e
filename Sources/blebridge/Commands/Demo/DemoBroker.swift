import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `mosquitto` broker on a free loopback port for `blebridge demo`, stopped with the demo.
final class DemoBroker: Sendable {
    let port: UInt16
    let url: String
    private let child: DemoChild

    private init(port: UInt16, child: DemoChild) {
        self.port = port
        self.url = "mqtt://127.0.0.1:\(port)"
        self.child = child
    }

    static func executable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin"] {
            let candidate = "\(directory)/mosquitto"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CommandLineError.failure(
            "mosquitto is not installed; install it (apt-get install mosquitto, or run scripts/setup.sh)",
            status: .unavailable)
    }

    static func start(directory: String) async throws -> DemoBroker {
        let executable = try executable()
        let port = try freeLoopbackPort()
        let config = "\(directory)/mosquitto.conf"
        try """
        listener \(port) 127.0.0.1
        user \(currentUser())
        allow_anonymous true
        persistence false
        log_dest stderr
        log_type error
        log_type warning
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let broker = DemoBroker(
            port: port, child: try DemoChild(name: "mosquitto", executable: executable, arguments: ["-c", config]))
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if isAccepting(port) { return broker }
            guard broker.child.isRunning else { break }
            // Polls a child mosquitto's port until it accepts (it signals readiness no other way), bounded.
            try await Task.sleep(for: .milliseconds(20))
        }
        broker.stop()
        throw CommandLineError.failure("mosquitto did not start on 127.0.0.1:\(port)", status: .unavailable)
    }

    /// The user this process runs as. mosquitto started by root drops to its own user, and Linux
    /// clears a process's parent-death signal when its user changes: the broker would then outlive
    /// a killed demo (`ChildCommand`). So it stays the demo's user, root or not.
    private static func currentUser() -> String {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "\(geteuid())" }
        return String(cString: name)
    }

    /// SIGTERM, then SIGKILL if the broker is still there after two seconds.
    func stop() { child.stop() }

    private static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func freeLoopbackPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CommandLineError.failure("socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw CommandLineError.failure("bind() failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    private static func isAccepting(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopbackAddress(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
