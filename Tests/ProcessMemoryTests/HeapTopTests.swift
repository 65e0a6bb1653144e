import Foundation
import ProcessMemory
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ProcessMemory.releaseHeapTop(keeping:)`: what the gateway calls once a burst settled.
@Suite struct HeapTopTests {
    static let childVariable = "BLEBRIDGE_HEAP_TOP_CHILD"

    /// Runs itself again in a child copy of this test binary with one malloc arena
    /// (`glibc.malloc.arena_max=1`, as the gateway), so that the blocks it allocates come from
    /// the main arena, the one with a `brk` top; in this process a test thread has an arena of its
    /// own. The child's expectations fail its run, and so this one.
    @Test func theTopBeyondWhatIsKeptIsGivenBack() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] == "1" {
            try Self.shrinkTheTop()
            return
        }
        let child = try ChildProcess(
            "/proc/self/exe", ["--testing-library", "swift-testing", "--filter", "HeapTopTests"],
            environment: [Self.childVariable: "1", "GLIBC_TUNABLES": "glibc.malloc.arena_max=1"])
        let status = await child.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(child.standardOutput)\(child.standardError)")
        let output = child.standardOutput + child.standardError
        #expect(output.contains("theTopBeyondWhatIsKeptIsGivenBack"), "the child ran no test: \(output)")
    }

    /// In the child: the gateway's allocator settings (a 1 MiB trim threshold, so glibc keeps
    /// what is freed below it), 720 kB allocated at the heap's top and freed (the top grows and
    /// stays), then the top beyond 128 KiB given back.
    /// (The lower bound leaves room for what the test runner's threads take from the top meanwhile.)
    static func shrinkTheTop() throws {
        #expect(ProcessMemory.useCompactAllocator())
        let kept = 128 * 1024
        // 40 blocks: the first ones may fill free blocks inside the heap (this process has freed
        // memory since it started); the last 12 come from the top. Those are freed first.
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<40 {
            let block = try #require(malloc(60 * 1024))
            memset(block, 1, 60 * 1024)
            blocks.append(block)
        }
        defer { for block in blocks.prefix(28) { free(block) } }
        for block in blocks.suffix(12).reversed() { free(block) }
        let grown = ProcessMemory.heapTop
        #expect(grown > 600 * 1024, "the freed blocks went back to the top: \(grown)")
        #expect(ProcessMemory.releaseHeapTop(keeping: kept))
        let shrunk = ProcessMemory.heapTop
        #expect(shrunk <= kept + 8192 && shrunk >= kept - 64 * 1024, "top \(grown) → \(shrunk)")
        // Nothing more to give back: false, and the top as it was.
        #expect(!ProcessMemory.releaseHeapTop(keeping: kept))
        #expect(ProcessMemory.heapTop == shrunk)
    }
}
