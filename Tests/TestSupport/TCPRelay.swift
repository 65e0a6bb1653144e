import Foundation
import Synchronization

/// A TCP relay from a free loopback port to another loopback port, that a test cuts and heals:
/// a network partition between two programs that both keep running (e.g. the two ends of a
/// mosquitto bridge). `cut()` shuts every relayed connection down (both ends see it closed) and
/// refuses new ones until `heal()`. Its blocking calls run on its own threads, never on the
/// cooperative pool.
public final class TCPRelay: Sendable {
    public let port: UInt16
    private let target: UInt16
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var cut = false
        var closed = false
        /// The relayed sockets (both sides); only their pump thread closes them.
        var sockets: Set<Int32> = []
    }

    /// A relay to 127.0.0.1:`target`, listening on a free loopback port.
    public init(to target: UInt16) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw FixtureError("socket() failed: errno \(errno)") }
        var address = Self.loopback(0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw FixtureError("bind()/listen() failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
        self.target = target
        self.listener = listener
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Shuts every relayed connection down and refuses new ones.
    public func cut() {
        state.withLock { state in
            state.cut = true
            for fd in state.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Relays new connections again.
    public func heal() {
        state.withLock { $0.cut = false }
    }

    /// Stops listening and closes every relayed connection.
    public func stop() {
        cut()
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        // Wakes the blocked accept(), which then closes the listener.
        if first { shutdown(listener, Int32(SHUT_RDWR)) }
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            guard !state.withLock({ $0.cut || $0.closed }), let upstream = connectTarget() else {
                close(client)
                continue
            }
            state.withLock {
                _ = $0.sockets.insert(client)
                _ = $0.sockets.insert(upstream)
            }
            Thread.detachNewThread { [self] in pump(client, upstream) }
        }
    }

    private func connectTarget() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.loopback(target)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected == 0 { return fd }
        close(fd)
        return nil
    }

    /// Copies bytes both ways until either side closes or the relay is cut, then closes both.
    private func pump(_ first: Int32, _ second: Int32) {
        var fds = [
            pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 65536)
        relay: while true {
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where fds[index].revents != 0 {
                let count = read(fds[index].fd, &buffer, buffer.count)
                guard count > 0, writeAll(buffer, count, to: fds[1 - index].fd) else { break relay }
            }
        }
        state.withLock {
            _ = $0.sockets.remove(first)
            _ = $0.sockets.remove(second)
        }
        for fd in [first, second] {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    private func writeAll(_ buffer: [UInt8], _ count: Int, to fd: Int32) -> Bool {
        var written = 0
        while written < count {
            let result = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + written, count - written) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }
}
