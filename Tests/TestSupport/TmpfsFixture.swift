import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted on a fresh temporary directory, for tests of a full disk; unmounted
/// (lazily) and removed when released. Mounting needs root (CAP_SYS_ADMIN): ``mountError`` says
/// why it is impossible here, so a test can be skipped with that reason.
package final class TmpfsFixture: Sendable {
    package let directory: TemporaryDirectory
    package var path: String { directory.path }

    /// Mounts a tmpfs of `bytes` on a fresh directory.
    package init(bytes: Int) throws {
        let directory = try TemporaryDirectory(prefix: "tmpfs")
        let result = mount("tmpfs", directory.path, "tmpfs", 0, "size=\(bytes),mode=0755")
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            throw FixtureError("mounting a \(bytes)-byte tmpfs on \(directory.path) failed: \(reason)")
        }
        self.directory = directory
    }

    /// Nil when a tmpfs can be mounted here, else why not (checked once, with a 64 KiB probe).
    package static let mountError: String? = {
        do {
            _ = try TmpfsFixture(bytes: 65_536)
            return nil
        } catch {
            return "\(error)"
        }
    }()

    /// Free bytes on the tmpfs (`statvfs`, as an unprivileged writer sees them).
    package var freeBytes: Int {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return 0 }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }

    /// Writes a file of `bytes` zero bytes (really allocated), e.g. a filler taking space.
    @discardableResult
    package func fill(_ name: String, bytes: Int) throws -> URL {
        let url = directory.file(name)
        try Data(count: bytes).write(to: url)
        return url
    }

    deinit {
        umount2(directory.path, Int32(MNT_DETACH))
    }
}
