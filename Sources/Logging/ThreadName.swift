import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Names the calling thread for `ps -L`, `top -H`, `perf` and `/proc/<pid>/task/*/comm`, where
/// the gateway's dedicated threads (notify sockets, outbox, MQTT network loop, D-Bus) are told
/// apart in diagnostics and benchmark reports. Foundation's `Thread.name` does not reach the
/// kernel on Linux; the kernel keeps the first 15 bytes.
package enum ThreadName {
    package static func setCurrent(_ name: String) {
        Thread.current.name = name
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
