import Foundation
import TestSupport
import Testing

/// `ChildProcess` closes the pipes it reads a child's output from once the child has exited,
/// while the `ChildProcess` itself is still held: the test process used to keep them until the
/// `Process` was freed, and reached 2,000 open descriptors in a full run (`OutputBuffer.collect`).
@Suite struct ChildProcessPipeTests {
    @Test func anExitedChildsOutputPipesAreClosedWhileItIsStillHeld() async throws {
        let child = try ChildProcess("/bin/sh", ["-c", "echo out; echo err >&2"], registry: nil)
        #expect(await child.waitForExit() == 0)
        #expect(child.standardOutput == "out\n" && child.standardError == "err\n")
        let inodes = child.outputPipeInodes
        #expect(inodes.count == 2, "the pipes' inodes were not recorded")
        let open = Set(try Self.openPipeInodes())
        #expect(inodes.allSatisfy { !open.contains($0) }, "still open: \(inodes.filter(open.contains))")
        withExtendedLifetime(child) {}
    }

    /// The inodes of the pipes this process has open (`pipe:[N]` links in `/proc/self/fd`).
    private static func openPipeInodes() throws -> [UInt64] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                target.hasPrefix("pipe:[")
            else { return nil }
            return UInt64(target.dropFirst("pipe:[".count).dropLast())
        }
    }
}
