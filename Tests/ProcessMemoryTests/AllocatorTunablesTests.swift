import Foundation
import ProcessMemory
import TestSupport
import Testing

/// The allocator settings the gateway starts with (`ProcessMemory.startWithTunedAllocator`):
/// which `GLIBC_TUNABLES` it starts again with, and that the binary really does.
@Suite struct AllocatorTunablesTests {
    @Test func addsTheThreadCacheBoundToWhatTheUserSet() {
        #expect(ProcessMemory.tunables(adding: nil, marked: false) == "glibc.malloc.tcache_max=256")
        #expect(ProcessMemory.tunables(adding: "", marked: false) == "glibc.malloc.tcache_max=256")
        #expect(
            ProcessMemory.tunables(adding: "glibc.malloc.check=3", marked: false)
                == "glibc.malloc.check=3:glibc.malloc.tcache_max=256")
    }

    @Test func keepsAThreadCacheSettingOfTheUsersOwn() {
        #expect(ProcessMemory.tunables(adding: "glibc.malloc.tcache_count=0", marked: false) == nil)
        #expect(ProcessMemory.tunables(adding: "glibc.malloc.check=3:glibc.malloc.tcache_max=64", marked: false) == nil)
    }

    @Test func startsAgainOnlyOnce() {
        // Marked: started again already, even if glibc dropped the variable (secure execution).
        #expect(ProcessMemory.tunables(adding: nil, marked: true) == nil)
        #expect(ProcessMemory.tunables(adding: "glibc.malloc.check=3", marked: true) == nil)
    }

    /// The binary as users run it: a long-running command, whose process image (same PID) was
    /// started with the tunables; `/proc/PID/environ` holds the environment the image started with.
    @Test(arguments: [nil, "glibc.malloc.tcache_count=3"])
    func theBinaryRunsWithTheTunables(userSetting: String?) async throws {
        try #require(ProcessInfo.processInfo.environment["BLEBRIDGE_ALLOCATOR_TUNED"] == nil)
        // An empty variable is glibc's defaults, as an unset one.
        let simulate = try ChildProcess(
            try BinaryLocator.blebridge(), ["simulate", "--scenario", "demo"],
            environment: ["GLIBC_TUNABLES": userSetting ?? ""])
        let started = await simulate.waitForOutput(timeout: .seconds(20)) { $0.contains("Press Ctrl-C") }
        #expect(started, "\(simulate.standardOutput)\(simulate.standardError)")
        let image = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(simulate.processIdentifier)/environ"))
        let variables = image.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        #expect(variables.contains("GLIBC_TUNABLES=\(userSetting ?? "glibc.malloc.tcache_max=256")"))
        #expect(variables.contains("BLEBRIDGE_ALLOCATOR_TUNED=1") == (userSetting == nil))
        simulate.signal(SIGINT)
        let status = await simulate.waitForExit(timeout: .seconds(10))
        #expect(status == 0, "exit \(String(describing: status)): \(simulate.standardOutput)\(simulate.standardError)")
    }
}
