import Bluetooth
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads an `AcquireNotify` socket (`SOCK_SEQPACKET`, one notification per packet) on a dedicated thread, so
/// the blocking wait never runs on Swift's cooperative pool. `stop()` shuts the socket down, which wakes the
/// thread; the thread closes the descriptor.
final class NotifySocketReader: Sendable {
    private let fd: Int32
    private let stopped = Atomic<Bool>(false)

    /// Takes ownership of `fd`.
    init(fd: Int32) {
        self.fd = fd
    }

    /// Starts the reader thread. `onValue` runs on it for every packet; `onEnd` once when the socket closes by
    /// itself (BlueZ closes it when the link drops or notifications stop), not after `stop()`.
    func start(onValue: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            let size = ATTLimits.maximumMTU
            var buffer = [UInt8](repeating: 0, count: size)
            // bluetoothd creates the pair non-blocking (SOCK_NONBLOCK), so wait in poll, then read.
            while true {
                var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&watched, 1, -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    break
                }
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, size) }
                if count > 0 {
                    onValue(Data(buffer[0..<count]))
                } else if count < 0 && (errno == EINTR || errno == EAGAIN) {
                    continue
                } else {
                    break
                }
            }
            close(fd)
            if !stopped.load(ordering: .acquiring) { onEnd() }
        }
        thread.name = "blebridge.notify"
        thread.start()
    }

    /// Stops reading; the thread closes the descriptor.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
