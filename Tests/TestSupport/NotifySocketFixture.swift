import Foundation
import Synchronization
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// Plays systemd's side of `sd_notify`: a datagram socket at a temporary path that collects what
/// a process sends to `NOTIFY_SOCKET`. Pass ``environment`` to the child.
package final class NotifySocketFixture: Sendable {
    package let path: String
    private let directory: TemporaryDirectory
    private let descriptor: Int32
    private let received = Mutex<[String]>([])

    package init() throws {
        directory = try TemporaryDirectory(prefix: "notify")
        path = directory.file("notify.sock").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw FixtureError("socket(AF_UNIX, SOCK_DGRAM) failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            throw FixtureError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (index, byte) in bytes.enumerated() { sunPath[index] = byte }
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            close(descriptor)
            throw FixtureError("bind(\(path)) failed: errno \(errno)")
        }
        // Like systemd's own notify socket, writable by the service whatever user it runs as.
        chmod(path, 0o777)
        chmod(directory.path, 0o755)
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// `NOTIFY_SOCKET` for a child; add `WATCHDOG_USEC` to turn its watchdog on.
    package func environment(watchdog: Duration? = nil) -> [String: String] {
        var environment = ["NOTIFY_SOCKET": path]
        if let watchdog {
            environment["WATCHDOG_USEC"] = "\(watchdog.inMicroseconds)"
        }
        return environment
    }

    /// Every datagram received so far, oldest first.
    package var messages: [String] {
        drain()
        return received.withLock { $0 }
    }

    /// Waits until some datagram satisfies `predicate`; false on time-out.
    package func waitForMessage(timeout: Duration = .seconds(10), _ predicate: (String) -> Bool) async -> Bool {
        await waitUntil(timeout: timeout, interval: .milliseconds(5)) { messages.contains(where: predicate) }
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            guard count > 0 else { return }
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            received.withLock { $0.append(text) }
        }
    }
}
