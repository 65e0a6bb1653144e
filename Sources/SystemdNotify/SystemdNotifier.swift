import Timekeeping

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Talks to systemd's notification socket (`sd_notify(3)`): a `SOCK_DGRAM` Unix socket named by
/// `NOTIFY_SOCKET`, one datagram of newline-separated `KEY=value` lines per notification.
///
/// Use ``fromEnvironment(_:)``: it returns nil when the process is not run by systemd with
/// `Type=notify` (or `NotifyAccess=`), so callers simply skip notifying.
///
/// ```swift
/// let notifier = try SystemdNotifier.fromEnvironment()
/// try notifier?.notify(.ready, .status("connected to 3 devices"))
/// scope.spawn { await notifier.runWatchdog { await gateway.isResponsive() } }
/// …
/// try notifier?.notify(.stopping)
/// watchdog?.cancel()
/// ```
package final class SystemdNotifier: Sendable {
    /// The socket address as given (`/run/systemd/notify` or `@abstract`).
    package let socketAddress: String
    /// How often to send `WATCHDOG=1`: half of `WATCHDOG_USEC`, as systemd recommends; nil when
    /// the watchdog is off or meant for another process (`WATCHDOG_PID`).
    package let watchdogInterval: Duration?
    private let descriptor: Int32

    /// Opens a datagram socket for `socketAddress`.
    package init(socketAddress: String, watchdogInterval: Duration? = nil) throws(SystemdNotifyError) {
        guard Self.makeAddress(socketAddress) != nil else {
            throw SystemdNotifyError(
                code: .invalidSocketAddress,
                message: "NOTIFY_SOCKET \"\(socketAddress)\" is not an absolute path or @abstract socket name")
        }
        #if canImport(Glibc)
            let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_DGRAM
        #endif
        let descriptor = socket(AF_UNIX, type, 0)
        guard descriptor >= 0 else {
            let code = errno
            throw SystemdNotifyError(
                code: .socketFailed, errno: code,
                message: "cannot create a notify socket: \(String(cString: strerror(code)))")
        }
        self.socketAddress = socketAddress
        self.watchdogInterval = watchdogInterval
        self.descriptor = descriptor
    }

    /// A notifier for `NOTIFY_SOCKET`, or nil when it is unset. The watchdog interval comes from
    /// `WATCHDOG_USEC` (and `WATCHDOG_PID`, which must name this process when set).
    package static func fromEnvironment(_ environment: [String: String]? = nil) throws(SystemdNotifyError)
        -> SystemdNotifier?
    {
        func value(_ name: String) -> String? {
            if let environment { return environment[name] }
            guard let raw = getenv(name) else { return nil }
            return String(cString: raw)
        }
        guard let address = value("NOTIFY_SOCKET"), !address.isEmpty else { return nil }
        var interval: Duration?
        if let text = value("WATCHDOG_USEC"), let microseconds = Int64(text), microseconds > 0 {
            let pidMatches = value("WATCHDOG_PID").map { Int32($0) == getpid() } ?? true
            if pidMatches { interval = .microseconds(microseconds / 2) }
        }
        return try SystemdNotifier(socketAddress: address, watchdogInterval: interval)
    }

    deinit {
        close(descriptor)
    }

    /// Sends the states as one datagram.
    package func notify(_ states: NotifyState...) throws(SystemdNotifyError) {
        try notify(states)
    }

    package func notify(_ states: [NotifyState]) throws(SystemdNotifyError) {
        guard !states.isEmpty else { return }
        try send(states.map(\.line).joined(separator: "\n") + "\n")
    }

    /// Sends `WATCHDOG=1` every ``watchdogInterval`` for as long as `isHealthy` returns true in time.
    ///
    /// `isHealthy` should ask the component that can hang (e.g. an `await` on the gateway actor):
    /// when it does not return, no ping is sent and systemd restarts the service after `WatchdogSec`.
    /// Returns at once when the watchdog is off, else when the calling task is cancelled (the
    /// caller runs it in a task of its own, e.g. a `TaskScope` child).
    package func runWatchdog(isHealthy: @escaping @Sendable () async -> Bool) async {
        guard let interval = watchdogInterval else { return }
        while !Task.isCancelled {
            if await isHealthy() {
                try? notify(.watchdog)
            }
            // Real delay: the watchdog's ping interval (half of WatchdogSec).
            do { try await SystemClock().sleep(for: interval) } catch { return }
        }
    }

    private func send(_ message: String) throws(SystemdNotifyError) {
        guard var address = Self.makeAddress(socketAddress) else {
            throw SystemdNotifyError(code: .invalidSocketAddress, message: "invalid NOTIFY_SOCKET \"\(socketAddress)\"")
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + Self.pathLength(socketAddress))
        let bytes = Array(message.utf8)
        var sent = -1
        repeat {
            sent = bytes.withUnsafeBytes { buffer in
                withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                        sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                    }
                }
            }
        } while sent < 0 && errno == EINTR
        guard sent == bytes.count else {
            let code = errno
            throw SystemdNotifyError(
                code: .sendFailed, errno: code,
                message: "cannot notify systemd at \(socketAddress): \(String(cString: strerror(code)))")
        }
    }

    /// Bytes of `sun_path` used: the path with its terminating NUL, or for `@name` the leading NUL
    /// and the name (abstract names are not NUL-terminated).
    private static func pathLength(_ address: String) -> Int {
        address.hasPrefix("@") ? address.utf8.count : address.utf8.count + 1
    }

    private static func makeAddress(_ address: String) -> sockaddr_un? {
        guard address.hasPrefix("/") || (address.hasPrefix("@") && address.utf8.count > 1) else { return nil }
        var result = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: result.sun_path)
        guard pathLength(address) <= capacity else { return nil }
        result.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        if address.hasPrefix("@") { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &result.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        return result
    }
}
