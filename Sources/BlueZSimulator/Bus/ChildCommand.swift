import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A command started so that it ends with the process that started it: `setpriv --pdeathsig
/// TERM -- …` (util-linux, essential on Debian and Raspberry Pi OS) has Linux send it SIGTERM
/// when its parent dies, SIGKILL included. So a `blebridge demo` or `simulate` that is killed, or
/// whose terminal went away, leaves no broker, bus or gateway behind.
///
/// Linux sends the signal when the *thread* that started the child ends, not the process. In the
/// `blebridge` binary, tasks run on the `blebridge.pool` threads, which never end before the
/// process (`TaskPool`), so callers pass `TaskPool.isInstalled`: elsewhere (libdispatch's workers
/// leave when idle, as in the test process) the command runs as given.
package enum ChildCommand {
    static let setpriv = "/usr/bin/setpriv"

    /// `executable` and `arguments`, behind `setpriv --pdeathsig TERM` when `bound` and setpriv is
    /// there. The child keeps its PID (setpriv executes the command in place).
    package static func endingWithParent(
        _ executable: String, _ arguments: [String], bound: Bool
    ) -> (executable: String, arguments: [String]) {
        guard bound, FileManager.default.isExecutableFile(atPath: setpriv) else { return (executable, arguments) }
        return (setpriv, ["--pdeathsig", "TERM", "--", executable] + arguments)
    }

    /// Starts `process` with an empty signal mask. A child inherits the spawning thread's mask,
    /// and the pool's threads block every asynchronous signal: spawned from one, a child would
    /// never see SIGTERM (neither a stop's nor the parent-death one) until SIGKILL. Synchronous,
    /// so the mask is restored on the same thread.
    package static func run(_ process: Process) throws {
        var empty = sigset_t()
        var previous = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
    }
}
