import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Tells when a file in the D-Bus policy directories changes (inotify), so the gateway can try
/// BlueZ again soon after an administrator fixed a policy that refused it, instead of at its next
/// scheduled retry: dbus-daemon announces nothing on the bus when it reloads its policy (it reloads
/// by itself on such a change, and on `systemctl reload dbus`).
///
/// One thread per watch blocks in `poll(2)` on the inotify descriptor and a wake-up pipe (a
/// blocking call, so never on the cooperative pool); ``cancel()`` writes to the pipe, and the
/// thread closes the three descriptors and ends the stream. The thread closes them under
/// `wake`'s lock and marks it closed, so `cancel()` never writes to a closed (or reused)
/// descriptor, nor to a pipe without a reader (SIGPIPE).
final class PolicyDirectoryWatch: Sendable {
    /// The directories dbus-daemon reads system-bus policies from (Debian, Raspberry Pi OS).
    static let systemBusDirectories = ["/etc/dbus-1/system.d", "/usr/share/dbus-1/system.d", "/etc/dbus-1"]

    /// One element per batch of changes (coalesced while the consumer is busy).
    let changes: AsyncStream<Void>
    /// The pipe's write end, shared with the thread.
    private let wake: WakeEnd

    /// The write end of the wake-up pipe, nil once the thread closed it.
    private final class WakeEnd: Sendable {
        let descriptor: Mutex<Int32?>
        init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }
    }

    /// Watches the directories of `directories` that exist; nil when none does or inotify is
    /// unavailable (then only the scheduled retries remain).
    init?(directories: [String]) {
        #if canImport(Glibc)
            let inotify = inotify_init1(Int32(IN_CLOEXEC))
            guard inotify >= 0 else { return nil }
            let mask = UInt32(IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB)
            let watched = directories.filter { inotify_add_watch(inotify, $0, mask) >= 0 }
            var pipeEnds: [Int32] = [0, 0]
            guard !watched.isEmpty, pipe(&pipeEnds) == 0 else {
                close(inotify)
                return nil
            }
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            let wake = WakeEnd(pipeEnds[1])
            self.wake = wake
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            changes = stream
            let wakeRead = pipeEnds[0]
            let thread = Thread {
                Self.run(inotify: inotify, wakeRead: wakeRead, continuation: continuation)
                wake.descriptor.withLock { end in
                    if let descriptor = end { close(descriptor) }
                    end = nil
                }
            }
            thread.name = "dbus-policy-watch"
            thread.start()
        #else
            return nil
        #endif
    }

    /// Stops watching (idempotent); the stream ends.
    func cancel() {
        #if canImport(Glibc)
            wake.descriptor.withLock { end in
                guard let descriptor = end else { return }
                var byte: UInt8 = 1
                _ = write(descriptor, &byte, 1)
            }
        #endif
    }

    deinit {
        cancel()
    }

    #if canImport(Glibc)
        private static func run(inotify: Int32, wakeRead: Int32, continuation: AsyncStream<Void>.Continuation) {
            var descriptors = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                descriptors[0].revents = 0
                descriptors[1].revents = 0
                let ready = poll(&descriptors, 2, -1)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0, descriptors[1].revents == 0, descriptors[0].revents & Int16(POLLIN) != 0 else { break }
                let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                guard count > 0 || (count < 0 && errno == EINTR) else { break }
                continuation.yield()
            }
            continuation.finish()
            close(inotify)
            close(wakeRead)
        }
    #endif
}
