import Foundation

extension ChildProcess {
    /// What each of the child's threads is doing, read from `/proc` (name, state, kernel wait
    /// channel, system call), and where its standard error points: for the message of a test
    /// that found the child hung, so the next failure says where.
    package var threadReport: String {
        let pid = processIdentifier
        let base = "/proc/\(pid)"
        func read(_ path: String) -> String {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "?")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let tasks = ((try? FileManager.default.contentsOfDirectory(atPath: "\(base)/task")) ?? [])
            .compactMap(Int.init).sorted()
        let standardError = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(base)/fd/2")) ?? "?"
        var lines = ["pid \(pid): stderr → \(standardError), \(tasks.count) threads"]
        for task in tasks {
            let path = "\(base)/task/\(task)"
            // stat: "tid (comm) S …": the state is the field after the closing parenthesis.
            let stat = read("\(path)/stat")
            let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
            let syscall = read("\(path)/syscall").split(separator: " ").first.map(String.init) ?? "?"
            let wchan = read("\(path)/wchan")
            lines.append("  \(task) \(read("\(path)/comm")) state=\(state) wchan=\(wchan) syscall=\(syscall)")
        }
        return lines.joined(separator: "\n")
    }
}
