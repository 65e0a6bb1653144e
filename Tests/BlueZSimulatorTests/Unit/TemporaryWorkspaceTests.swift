import Foundation
import Testing

@testable import BlueZSimulator

#if canImport(Glibc)
    import Glibc
#endif

/// A demo or private bus killed with SIGKILL leaves its directory; the next workspace of the same
/// prefix removes it, and never a live one's.
@Suite struct TemporaryWorkspaceTests {
    /// A parent directory of the test's own, so no other test's workspaces are swept.
    private func parent() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "workspace-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func anAbandonedDirectoryIsRemovedAndALiveOneKept() throws {
        let parent = try parent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let live = try TemporaryWorkspace(prefix: "demo", in: parent)
        // What a killed process leaves: its lock file, locked by nobody.
        let abandoned = parent.appendingPathComponent("demo-DEADBEEF")
        try FileManager.default.createDirectory(at: abandoned, withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: abandoned.appendingPathComponent(TemporaryWorkspace.lockName).path, contents: nil))
        let outbox = abandoned.appendingPathComponent("outbox.sqlite").path
        #expect(FileManager.default.createFile(atPath: outbox, contents: nil))
        // Not made by this type: no lock file.
        let foreign = parent.appendingPathComponent("demo-notours")
        try FileManager.default.createDirectory(at: foreign, withIntermediateDirectories: true)
        let otherPrefix = parent.appendingPathComponent("bus-DEADBEEF")
        try FileManager.default.createDirectory(at: otherPrefix, withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: otherPrefix.appendingPathComponent(TemporaryWorkspace.lockName).path, contents: nil))

        let next = try TemporaryWorkspace(prefix: "demo", in: parent)

        #expect(!FileManager.default.fileExists(atPath: abandoned.path), "the abandoned directory stayed")
        #expect(FileManager.default.fileExists(atPath: live.path), "a live workspace was removed")
        #expect(FileManager.default.fileExists(atPath: foreign.path))
        #expect(FileManager.default.fileExists(atPath: otherPrefix.path))
        next.remove()
        #expect(!FileManager.default.fileExists(atPath: next.path))
        live.remove()
        live.remove()
        #expect(!FileManager.default.fileExists(atPath: live.path))
    }

    /// What is not this user's own directory is never removed: a symbolic link named like a
    /// workspace (to a directory with an unlocked lock file), and, when the test may change owners
    /// (root), a directory or a lock file of another user.
    @Test func onlyThisUsersOwnDirectoriesAreSwept() throws {
        let parent = try parent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let manager = FileManager.default
        func abandoned(_ name: String) throws -> URL {
            let url = parent.appendingPathComponent(name)
            try manager.createDirectory(at: url, withIntermediateDirectories: true)
            #expect(
                manager.createFile(atPath: url.appendingPathComponent(TemporaryWorkspace.lockName).path, contents: nil))
            return url
        }
        let target = try abandoned("elsewhere")
        let link = parent.appendingPathComponent("demo-LINK0000")
        try manager.createSymbolicLink(at: link, withDestinationURL: target)
        let mine = try abandoned("demo-MINE0000")
        let theirs = try abandoned("demo-THEIRS00")
        let theirLock = try abandoned("demo-THEIRLCK")
        let mayChown = geteuid() == 0
        if mayChown {
            #expect(chown(theirs.path, 65534, 65534) == 0)
            #expect(chown(theirLock.appendingPathComponent(TemporaryWorkspace.lockName).path, 65534, 65534) == 0)
        }

        let next = try TemporaryWorkspace(prefix: "demo", in: parent)
        defer { next.remove() }

        #expect(!manager.fileExists(atPath: mine.path), "this user's abandoned directory stayed")
        #expect((try? manager.destinationOfSymbolicLink(atPath: link.path)) != nil, "the link was removed")
        #expect(manager.fileExists(atPath: target.appendingPathComponent(TemporaryWorkspace.lockName).path))
        if mayChown {
            #expect(manager.fileExists(atPath: theirs.path), "another user's directory was removed")
            #expect(manager.fileExists(atPath: theirLock.path), "a directory with another user's lock file was removed")
        }
    }

    /// The lock goes with the process, not with `remove()`: a child that holds a workspace and is
    /// killed leaves it for the next one to remove.
    @Test func aKilledOwnersDirectoryIsRemovedByTheNext() throws {
        let parent = try parent()
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("demo-CHILD000")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lockPath = directory.appendingPathComponent(TemporaryWorkspace.lockName).path
        // flock(1) holds the lock while its command runs (no fork: the command is the holder), as a
        // demo holds its workspace's.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["--exclusive", "--no-fork", lockPath, "sleep", "60"]
        try holder.run()
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        // The lock is held once flock(1) runs sleep; wait for that (bounded) by trying it.
        try #require(waitForLock(lockPath), "flock(1) did not take the lock")
        _ = try TemporaryWorkspace(prefix: "demo", in: parent)
        #expect(FileManager.default.fileExists(atPath: directory.path), "a live owner's directory was removed")

        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        _ = try TemporaryWorkspace(prefix: "demo", in: parent)
        #expect(!FileManager.default.fileExists(atPath: directory.path), "the killed owner's directory stayed")
    }

    /// True once another process holds the lock on `path` (tried every 10 ms for at most 10 s).
    private func waitForLock(_ path: String) -> Bool {
        for _ in 0..<1000 {
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            if descriptor >= 0 {
                defer { close(descriptor) }
                if flock(descriptor, LOCK_EX | LOCK_NB) != 0 { return true }
                flock(descriptor, LOCK_UN)
            }
            usleep(10_000)
        }
        return false
    }
}
