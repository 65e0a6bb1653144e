import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The simulator's end of an `AcquireNotify`/`AcquireWrite` socket pair (`AF_UNIX`, `SOCK_SEQPACKET`,
/// as bluetoothd's `create_sock`), watched by a dedicated thread that reports packets written by
/// the client and the client closing its end.
///
/// The watcher thread owns the descriptor's lifetime: it closes it, under the same lock `send`
/// takes, so a send never reaches a descriptor number the process has reused.
final class AcquiredSocket: Sendable {
    enum Event: Sendable {
        case packet([UInt8])
        case closed
    }

    private final class Descriptor: Sendable {
        /// The descriptor while open; nil once closed.
        let fd: Mutex<Int32?>
        init(_ fd: Int32) { self.fd = Mutex(fd) }
    }

    private let descriptor: Descriptor
    let events: AsyncStream<Event>

    /// Creates the pair; returns our socket and the client's descriptor (to send in the reply).
    static func makePair() throws(BlueZError) -> (AcquiredSocket, Int32) {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw BlueZError.failed(String(cString: strerror(errno)))
        }
        return (AcquiredSocket(fd: fds[0]), fds[1])
    }

    private init(fd: Int32) {
        let descriptor = Descriptor(fd)
        self.descriptor = descriptor
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        self.events = stream
        let thread = Thread { Self.watch(fd: fd, descriptor: descriptor, continuation: continuation) }
        thread.name = "blebridge-sim-socket"
        thread.start()
    }

    /// Polls until the client closes its end or we close ours, then closes the descriptor.
    private static func watch(fd: Int32, descriptor: Descriptor, continuation: AsyncStream<Event>.Continuation) {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while descriptor.fd.withLock({ $0 != nil }) {
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&watched, 1, 100) > 0 else { continue }
            if watched.revents & Int16(POLLIN) != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 {
                    continuation.yield(.packet(Array(buffer[0..<count])))
                    continue
                }
                if count == 0 { break }
            }
            if watched.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { break }
        }
        descriptor.fd.withLock { value in
            value = nil
            Glibc.close(fd)
        }
        continuation.yield(.closed)
        continuation.finish()
    }

    /// What became of a value sent to the client's socket.
    enum SendOutcome: Sendable, Equatable {
        /// The socket took it: the client reads it unless it closes its end first.
        case taken
        /// The socket was full (the client is not reading fast enough): the value is dropped, as
        /// bluetoothd drops it (`io_send` fails with `EAGAIN` and it logs the error).
        case full
        /// The socket is closed or shut (or, for ``BlueZSimulator/deliver(_:_:)``, nobody listens):
        /// nobody is there to take it.
        case nobody
    }

    /// Sends one notification without waiting.
    @discardableResult
    func send(_ bytes: [UInt8]) -> SendOutcome {
        descriptor.fd.withLock { fd in
            guard let fd else { return .nobody }
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if sent >= 0 { return .taken }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .full : .nobody
        }
    }

    /// True when the client closed its end (checked without waiting for the watcher thread, so a
    /// call that follows the close on the bus sees the lock released, as bluetoothd would).
    var peerClosed: Bool {
        descriptor.fd.withLock { fd in
            guard let fd else { return true }
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&watched, 1, 0) > 0 else { return false }
            if watched.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return true }
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
        }
    }

    /// Shuts our end down: the client sees HUP; the watcher then closes the descriptor.
    func close() {
        descriptor.fd.withLock { fd in
            if let fd { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    deinit { close() }
}
