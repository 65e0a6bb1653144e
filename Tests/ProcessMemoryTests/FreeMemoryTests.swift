import Foundation
import ProcessMemory
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ProcessMemory.releaseFreeMemory()`: what the gateway calls once a burst settled. It gives back
/// the free pages inside the heap, not only its top: a burst's blocks freed between blocks that
/// stay left pages resident that no later traffic needed (the soak's steps, docs/testing.md).
@Suite struct FreeMemoryTests {
    static let childVariable = "BLEBRIDGE_FREE_MEMORY_CHILD"

    /// Runs itself again in a child copy of this test binary with one malloc arena
    /// (`glibc.malloc.arena_max=1`, as the gateway), so that the blocks it allocates come from
    /// the main arena; in this process a test thread has an arena of its own. The child's
    /// expectations fail its run, and so this one. Skipped under a sanitizer, whose allocator
    /// replaces glibc's (scripts/sanitize.sh).
    @Test func freePagesInsideTheHeapAreGivenBack() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] == "1" {
            try Self.freeTheMiddle()
            return
        }
        let child = try ChildProcess(
            "/proc/self/exe", ["--testing-library", "swift-testing", "--filter", "FreeMemoryTests"],
            environment: [Self.childVariable: "1", "GLIBC_TUNABLES": "glibc.malloc.arena_max=1"])
        let status = await child.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(child.standardOutput)\(child.standardError)")
        let output = child.standardOutput + child.standardError
        #expect(output.contains("freePagesInsideTheHeapAreGivenBack"), "the child ran no test: \(output)")
    }

    /// In the child: the gateway's allocator settings, 4 MiB in 2 KiB blocks written to (every
    /// page touched), then all but one block in 64 freed: the freed runs lie inside the heap,
    /// between blocks still in use, and the last block stays, so the heap's top is not free.
    /// glibc keeps those pages resident; the call must give most of them back.
    static func freeTheMiddle() throws {
        #expect(ProcessMemory.useCompactAllocator())
        let size = 2048
        var blocks: [UnsafeMutableRawPointer] = []
        blocks.reserveCapacity(2048)
        for _ in 0..<2048 {
            let block = try #require(malloc(size))
            memset(block, 1, size)
            blocks.append(block)
        }
        for (index, block) in blocks.enumerated() where index % 64 != 63 { free(block) }
        let before = try residentAnonymousKiB()
        ProcessMemory.releaseFreeMemory()
        let after = try residentAnonymousKiB()
        // 4,032 kB freed in runs of 126 kB: nearly all of it can go back (less the runs' edges).
        #expect(before - after > 3 * 1024, "RssAnon \(before) kB → \(after) kB")
        for (index, block) in blocks.enumerated() where index % 64 == 63 { free(block) }
    }

    /// `RssAnon` of this process (kB), from /proc/self/status.
    static func residentAnonymousKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }
}
