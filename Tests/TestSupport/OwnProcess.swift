import Foundation

/// Runs tests alone in a new process of this test binary.
///
/// Swift Testing runs every test of the binary in one process, hundreds at a time. A
/// measurement of the whole process (resident memory, say) then counts what every other test
/// allocates meanwhile: the D-Bus leak test saw 16 MiB of "growth" in a full run and 0.5 MiB
/// alone. Such a test re-runs itself here and passes or fails with its child:
///
/// ```swift
/// @Test func memoryStaysFlat() async throws {
///     guard OwnProcess.isChild else {
///         let child = try await OwnProcess.run(filter: "LeakTests/memoryStaysFlat", timeout: .seconds(110))
///         #expect(child.status == 0, "\(child.stdout)")
///         return
///     }
///     // … the measurement, with nothing else in the process
/// }
/// ```
package enum OwnProcess {
    static let variable = "BLEBRIDGE_TEST_OWN_PROCESS"

    /// True inside a process started by ``run(filter:timeout:)``.
    package static var isChild: Bool { ProcessInfo.processInfo.environment[variable] == "1" }

    /// Runs the Swift Testing tests matching `filter` (a `--filter` pattern) in a new process of
    /// this test binary; returns its exit status (0: they passed) and output.
    package static func run(
        filter: String, timeout: Duration
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        return try await ChildProcess.run(
            binary, ["--testing-library", "swift-testing", "--filter", filter], environment: [variable: "1"],
            timeout: timeout)
    }
}
