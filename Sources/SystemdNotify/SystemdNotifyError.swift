/// Why a notification could not be sent.
public struct SystemdNotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// `NOTIFY_SOCKET` is not an absolute path or `@abstract` name, or is too long.
        case invalidSocketAddress
        /// `socket(2)` failed.
        case socketFailed
        /// `sendto(2)` failed (systemd gone, socket removed, …).
        case sendFailed
    }

    public var code: Code
    /// `errno` when a system call failed, else 0.
    public var errno: Int32
    public var message: String

    public init(code: Code, errno: Int32 = 0, message: String) {
        self.code = code
        self.errno = errno
        self.message = message
    }

    public var description: String { message }
}
