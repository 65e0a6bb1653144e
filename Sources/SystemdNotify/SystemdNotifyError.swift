/// Why a notification could not be sent.
package struct SystemdNotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: Sendable, Hashable {
        /// `NOTIFY_SOCKET` is not an absolute path or `@abstract` name, or is too long.
        case invalidSocketAddress
        /// `socket(2)` failed.
        case socketFailed
        /// `sendto(2)` failed (systemd gone, socket removed, …).
        case sendFailed
    }

    package var code: Code
    /// `errno` when a system call failed, else 0.
    package var errno: Int32
    package var message: String

    package init(code: Code, errno: Int32 = 0, message: String) {
        self.code = code
        self.errno = errno
        self.message = message
    }

    package var description: String { message }
}
