#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A Unix file descriptor carried in a D-Bus message (type `h`).
///
/// The value owns its descriptor: it is closed when the last copy of the value goes away.
/// Use `duplicate()` to get a descriptor of your own to keep beyond the value's lifetime.
public struct DBusFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    private let box: Box

    /// Takes ownership of `fd` (it will be closed by this value).
    package init(takingOwnershipOf fd: Int32) {
        box = Box(fd)
    }

    /// Duplicates `fd`; the caller keeps ownership of `fd`.
    package init(duplicating fd: Int32) throws(DBusError) {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw DBusError(.failed, "cannot duplicate file descriptor \(fd): errno \(errno)")
        }
        box = Box(copy)
    }

    /// The descriptor number, valid while this value (or a copy) exists.
    package var rawValue: Int32 { box.fd }

    /// A new descriptor for the same open file, owned by the caller.
    package func duplicate() throws(DBusError) -> Int32 {
        let copy = fcntl(box.fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw DBusError(.failed, "cannot duplicate file descriptor \(box.fd): errno \(errno)")
        }
        return copy
    }

    public var description: String { "fd \(box.fd)" }

    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs.box.fd == rhs.box.fd }
    public func hash(into hasher: inout Hasher) { hasher.combine(box.fd) }

    /// Closes the descriptor when the last value referring to it is released.
    private final class Box: Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }
}
