import Foundation

/// A loopback TCP proxy in front of a server (a broker), for network faults between two programs
/// that both keep running:
/// - ``pause()`` stops passing what clients send while keeping their connections open: what a
///   client sends meanwhile stays unread in its socket, as if the network had stalled, and is lost
///   if the client dies (the server's side is passed on throughout); ``resume()``;
/// - ``cut()`` shuts every connection down (both ends see it closed) and refuses new ones until
///   ``heal()``: a partition (e.g. between the two ends of a mosquitto bridge).
/// When either side of a connection ends, the proxy ends the other. A thread accepts and two
/// threads per connection copy the bytes (blocking calls: never on the cooperative pool).
package final class TCPProxy: Sendable {
    package let port: UInt16
    package let upstreamPort: UInt16
    private let listener: Int32
    private let gate: Gate

    /// Whether clients' bytes are passed on, the sockets open and each connection's wake-up pipe.
    // @unchecked Sendable: `paused`, `stopped`, `sockets` and `wakes` are read and written only
    // between `lock.lock()` and `lock.unlock()`; NSLock itself is thread-safe.
    private final class Gate: @unchecked Sendable {
        let lock = NSLock()
        var paused = false
        var refusing = false
        var stopped = false
        /// Whether the listener is closed: it is closed under `lock`, so `stop()` never shuts down
        /// a descriptor number handed to another socket since.
        var listenerClosed = false
        var sockets: Set<Int32> = []
        /// The write end of each connection's pipe: a byte wakes its paused copier.
        var wakes: Set<Int32> = []

        var isPaused: Bool {
            lock.lock()
            defer { lock.unlock() }
            return paused && !stopped
        }

        func set(paused: Bool) {
            lock.lock()
            defer { lock.unlock() }
            self.paused = paused
            wakeAll()
        }

        /// Under `lock` (a pipe leaves `wakes` under it before it is closed).
        func wakeAll() {
            var byte: UInt8 = 1
            for fd in wakes { _ = write(fd, &byte, 1) }
        }
    }

    /// Listens on a free loopback port and forwards each connection to 127.0.0.1:`upstreamPort`.
    package init(upstreamPort: UInt16) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket() failed: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw FixtureError("bind()/listen() failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        gate = Gate()
        let gate = self.gate
        Thread.detachNewThread { Self.accept(on: fd, upstream: upstreamPort, gate: gate) }
    }

    deinit { stop() }

    /// The URL a client uses instead of the server's.
    package var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Stops passing on what clients send (their connections stay open).
    package func pause() { gate.set(paused: true) }

    /// Passes it on again, what waited first.
    package func resume() { gate.set(paused: false) }

    /// Shuts every connection down and refuses new ones (a partition).
    package func cut() {
        gate.lock.lock()
        defer { gate.lock.unlock() }
        gate.refusing = true
        for fd in gate.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        gate.wakeAll()
    }

    /// Accepts and passes on new connections again.
    package func heal() {
        gate.lock.lock()
        gate.refusing = false
        gate.lock.unlock()
    }

    /// Closes the listener and every connection.
    package func stop() {
        gate.lock.lock()
        defer { gate.lock.unlock() }
        guard !gate.stopped else { return }
        gate.stopped = true
        if !gate.listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
        for fd in gate.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        gate.wakeAll()
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func accept(on listener: Int32, upstream: UInt16, gate: Gate) {
        defer {
            gate.lock.lock()
            gate.listenerClosed = true
            close(listener)
            gate.lock.unlock()
        }
        while true {
            let client = Glibc.accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            gate.lock.lock()
            let refusing = gate.refusing && !gate.stopped
            gate.lock.unlock()
            if refusing {
                close(client)
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: upstream)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            var pipeEnds: [Int32] = [-1, -1]
            let piped = pipe(&pipeEnds) == 0
            gate.lock.lock()
            let stopped = gate.stopped
            let open = !stopped && connected == 0 && piped
            if open {
                gate.sockets.formUnion([client, server])
                gate.wakes.insert(pipeEnds[1])
            }
            gate.lock.unlock()
            guard open else {
                for fd in [client, server] + pipeEnds where fd >= 0 { close(fd) }
                if stopped { return }
                continue
            }
            // Both copiers end the pair; the last one out closes the descriptors.
            let ends = Ends(client: client, server: server, wake: (pipeEnds[0], pipeEnds[1]), gate: gate)
            Thread.detachNewThread { copy(from: client, to: server, paused: ends, ends: ends) }
            Thread.detachNewThread { copy(from: server, to: client, paused: nil, ends: ends) }
        }
    }

    /// One connection's descriptors, closed when both copiers have finished.
    // @unchecked Sendable: `finished` is changed only under `lock`; the descriptors are constants.
    private final class Ends: @unchecked Sendable {
        let client: Int32
        let server: Int32
        let wake: (read: Int32, write: Int32)
        let gate: Gate
        let lock = NSLock()
        var finished = 0

        init(client: Int32, server: Int32, wake: (read: Int32, write: Int32), gate: Gate) {
            self.client = client
            self.server = server
            self.wake = wake
            self.gate = gate
        }

        /// Linux's POLLRDHUP (0x2000, the peer closed or shut down writing), which Glibc's module
        /// leaves out (it needs _GNU_SOURCE).
        let pollReadHangUp: Int16 = 0x2000

        /// While the proxy is paused: waits until it resumes (true) or the client ends (false),
        /// without reading what the client sent.
        func waitWhilePaused() -> Bool {
            while gate.isPaused {
                var fds = [
                    pollfd(fd: client, events: pollReadHangUp, revents: 0),
                    pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&fds, 2, -1)
                if ready < 0, errno == EINTR { continue }
                guard ready > 0 else { return false }
                if fds[0].revents & (pollReadHangUp | Int16(POLLHUP | POLLERR)) != 0 { return false }
                if fds[1].revents & Int16(POLLIN) != 0 {
                    var drained = [UInt8](repeating: 0, count: 64)
                    _ = read(wake.read, &drained, drained.count)
                }
            }
            gate.lock.lock()
            defer { gate.lock.unlock() }
            return !gate.stopped
        }

        /// One side ended: end both (the other copier's read returns), close after the second.
        func end() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
            lock.lock()
            finished += 1
            let last = finished == 2
            lock.unlock()
            guard last else { return }
            gate.lock.lock()
            gate.sockets.subtract([client, server])
            gate.wakes.remove(wake.write)
            gate.lock.unlock()
            for fd in [client, server, wake.read, wake.write] { close(fd) }
        }
    }

    private static func copy(from source: Int32, to target: Int32, paused: Ends?, ends: Ends) {
        defer { ends.end() }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            // Paused: leave the client's bytes unread (a client that dies meanwhile loses them).
            if let paused, !paused.waitWhilePaused() { return }
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes {
                    send(target, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
                }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                sent += written
            }
        }
    }
}
