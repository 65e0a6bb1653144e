import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A directory of this process's own under the temporary directory (`<prefix>-<random>`): a private
/// bus's socket, the demo's broker configuration and outbox.
///
/// A process killed with SIGKILL cannot remove its directory. So each directory holds a lock file
/// that its process keeps locked (`flock`) while it lives, and making a new workspace removes the
/// directories of the same prefix whose lock nobody holds: the kernel drops a lock when its process
/// dies, whatever PID namespace it ran in, and a live process's directory is never taken.
package final class TemporaryWorkspace: Sendable {
    package let url: URL
    package var path: String { url.path }
    /// The open lock file (its descriptor holds the lock), or -1 once removed.
    private let lock: Mutex<Int32>

    static let lockName = ".owner.lock"

    /// Makes the directory (after sweeping the abandoned ones of `prefix`) and locks it.
    package init(prefix: String, in parent: URL = FileManager.default.temporaryDirectory) throws {
        Self.removeAbandoned(prefix: prefix, in: parent)
        let url = parent.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let descriptor = open(url.appendingPathComponent(Self.lockName).path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            if descriptor >= 0 { close(descriptor) }
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        self.url = url
        lock = Mutex(descriptor)
    }

    /// Removes the directory and what it holds (again: nothing).
    package func remove() {
        let descriptor = lock.withLock { descriptor -> Int32 in
            defer { descriptor = -1 }
            return descriptor
        }
        guard descriptor >= 0 else { return }
        try? FileManager.default.removeItem(at: url)
        close(descriptor)
    }

    deinit { remove() }

    /// Removes every `<prefix>-…` directory in `parent` that has a lock file nobody holds. Directories
    /// without one (not made by this type, or half made) are left alone, and so is anything that is
    /// not a real directory of this user with a lock file of this user: in a shared `/tmp` another
    /// user could name a symbolic link or a directory of theirs so (a demo run with `sudo` would
    /// otherwise have removed another user's directory).
    static func removeAbandoned(prefix: String, in parent: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix(prefix + "-") {
            let directory = parent.appendingPathComponent(name)
            guard isOwnDirectory(directory.path) else { continue }
            let descriptor = open(directory.appendingPathComponent(lockName).path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var file = stat()
            guard fstat(descriptor, &file) == 0, file.st_mode & S_IFMT == S_IFREG, file.st_uid == geteuid() else {
                continue
            }
            // Held: its process is alive. Taken: abandoned, and held by us while it is removed, so
            // another process sweeping at the same moment leaves it alone.
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Whether `path` is a directory (not a link to one) that this process's user owns.
    private static func isOwnDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == geteuid()
    }
}
