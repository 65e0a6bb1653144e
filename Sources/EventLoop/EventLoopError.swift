/// Why an ``EventLoop`` could not be made: the kernel refused one of its descriptors (out of file
/// descriptors or memory).
package struct EventLoopError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// `epoll_create1` failed.
        case epoll
        /// `eventfd` failed.
        case eventfd
    }

    package var code: Code
    /// The `errno` of the failed call.
    package var errno: Int32

    package init(_ code: Code, errno: Int32) {
        self.code = code
        self.errno = errno
    }

    package var description: String { "event loop: \(code.rawValue) failed (errno \(errno))" }
}
