/// Why an ``EventLoop`` could not be made: the kernel refused one of its descriptors (out of file
/// descriptors or memory).
public struct EventLoopError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// `epoll_create1` failed.
        case epoll
        /// `eventfd` failed.
        case eventfd
    }

    public var code: Code
    /// The `errno` of the failed call.
    public var errno: Int32

    public init(_ code: Code, errno: Int32) {
        self.code = code
        self.errno = errno
    }

    public var description: String { "event loop: \(code.rawValue) failed (errno \(errno))" }
}
