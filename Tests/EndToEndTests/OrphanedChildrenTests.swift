import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `blebridge demo` and `simulate` start a broker and a dbus-daemon; killed with SIGKILL (or their
/// terminal gone), they used to leave those running. Their children now end with them
/// (`ChildCommand`: `setpriv --pdeathsig TERM`).
@Suite struct OrphanedChildrenTests {
    @Test(arguments: [["demo"], ["simulate", "--scenario", "demo"]])
    func childrenEndWhenTheCommandIsKilled(command: [String]) async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let arguments =
            command == ["demo"] ? ["demo", "--config", root.appendingPathComponent("config.json").path] : command
        let child = try ChildProcess(try BinaryLocator.blebridge(), arguments)
        let ready = await child.waitForOutput(timeout: .seconds(60)) {
            $0.contains("Ctrl-C stops everything") || $0.contains("Press Ctrl-C")
        }
        try #require(ready, "\(child.standardOutput.suffix(2000))\(child.standardError.suffix(2000))")
        let children = Self.children(of: child.processIdentifier)
        #expect(children.count == (command == ["demo"] ? 2 : 1), "\(children): the broker and the bus, or the bus")
        kill(child.processIdentifier, SIGKILL)
        _ = await child.waitForExit(timeout: .seconds(10))
        let gone = await waitUntil(timeout: .seconds(10)) { children.allSatisfy { !Self.isRunning($0) } }
        #expect(gone, "still running: \(children.filter { Self.isRunning($0) })")
        for pid in children where Self.isRunning(pid) { kill(pid, SIGKILL) }
    }

    /// The PIDs of `pid`'s children, from every thread's `children` list.
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
    }

    /// Alive and not a zombie waiting for whoever adopted it to reap it.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = status.lastIndex(of: ")")
        else { return false }
        return status[status.index(close, offsetBy: 2)] != "Z"
    }
}
