import Foundation

/// A process's threads counted by name (`/proc/<pid>/task/*/comm`, at most 15 bytes each): which
/// pool runs a process's tasks, and whether one grew (docs/testing.md, "The ninth thread").
package enum ThreadNames {
    /// The kernel's name of the calling thread (`/proc/thread-self/comm`).
    package static func current() -> String {
        let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    /// `process` is a process id, or "self".
    package static func of(_ process: String = "self") -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task")) ?? []
        var names: [String: Int] = [:]
        for task in tasks {
            // A thread that ended between the listing and the read is skipped.
            guard let comm = try? String(contentsOfFile: "/proc/\(process)/task/\(task)/comm", encoding: .utf8)
            else { continue }
            names[comm.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
        }
        return names
    }
}
