import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Who may read the outbox: its owner, and the group an administrator gave it, never every user.
/// The readings (and the state kept with them) are nobody else's business (issue 19, D13).
extension OutboxDatabase {
    /// The files SQLite keeps for a database at `path`.
    static func files(_ path: String) -> [String] { [path, path + "-wal", path + "-shm"] }

    /// Creates a missing database file readable by its owner only (0600): SQLite would create it
    /// with 0644 less the umask, and its WAL and shared-memory files take the database's mode.
    /// Under systemd `UMask=0077` did this already; outside it the file was world-readable.
    static func createPrivately(_ path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) }
    }

    /// Takes every user's access away from an existing outbox made before ``createPrivately(_:)``
    /// (or by hand): 0644 becomes 0640. The group's bits stay, as an administrator may have given
    /// them (a backup user); a fresh file has none. Returns each file changed with its old and new
    /// mode (octal), for the log. A file this process does not own keeps its mode (`chmod` is
    /// refused), as does a file that is already closed to others.
    static func withdrawOthersAccess(_ path: String) -> [(file: String, from: String, to: String)] {
        files(path).compactMap { file in
            var status = stat()
            guard stat(file, &status) == 0, status.st_mode & 0o007 != 0 else { return nil }
            let mode = status.st_mode & 0o7777
            let tightened = mode & ~mode_t(0o007)
            guard chmod(file, tightened) == 0 else { return nil }
            return (file, String(mode, radix: 8), String(tightened, radix: 8))
        }
    }
}
