#if canImport(Glibc)
    import Glibc

    /// SIGABRT, SIGSEGV, SIGBUS and SIGQUIT sent by another process (`kill`, systemd's watchdog
    /// abort) end the gateway with the signal's default action (terminate, core dump), as they would
    /// any C program. Without this, Swift's crash handler prints `*** Program crashed ***` with a
    /// backtrace and, for a signal that did not come from a fault, returns: the gateway went on
    /// running and publishing. The same signals raised by the process itself (a real crash,
    /// `abort()` from a failed precondition) still go to the handler installed before (Swift's
    /// backtracer), so real crashes keep their backtrace.
    package enum ExternalFatalSignals {
        package static let signals: [Int32] = [SIGABRT, SIGSEGV, SIGBUS, SIGQUIT]

        /// Installs the handler in front of the current one; call once, early in `main`.
        package static func install() {
            for number in signals {
                var previous = sigaction()
                guard sigaction(number, nil, &previous) == 0 else { continue }
                previousActions[Int(number)] = previous
                var action = sigaction()
                action.__sigaction_handler.sa_sigaction = externalFatalSignalHandler
                action.sa_flags = SA_SIGINFO | SA_ONSTACK
                sigemptyset(&action.sa_mask)
                sigaction(number, &action, nil)
            }
        }
    }

    /// The actions found before ``ExternalFatalSignals/install()``, by signal number. Written only
    /// by `install()` before its handler is set for that signal, then only read (by the handler),
    /// so no access races; a raw buffer, because a signal handler must not retain or release.
    private nonisolated(unsafe) let previousActions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)

    /// Async-signal-safe: only sigaction(2), getpid(2), raise(3) and the previous handler.
    private func externalFatalSignalHandler(
        _ number: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?
    ) {
        let previous = previousActions[Int(number)]
        // si_code <= 0: sent with kill/sigqueue/tgkill, not by a fault; from another process if the pid differs.
        let external = info.map { $0.pointee.si_code <= 0 && $0.pointee._sifields._kill.si_pid != getpid() } ?? false
        let previousHandler = unsafeBitCast(previous.__sigaction_handler.sa_handler, to: Int.self)
        if external || (previous.sa_flags & SA_SIGINFO == 0 && previousHandler == 0) {
            // The default action; the signal is blocked while this handler runs, so it is
            // delivered (and ends the process) as soon as the handler returns.
            var fallback = sigaction()
            sigemptyset(&fallback.sa_mask)
            sigaction(number, &fallback, nil)
            raise(number)
            return
        }
        if previous.sa_flags & SA_SIGINFO != 0 {
            previous.__sigaction_handler.sa_sigaction?(number, info, context)
        } else if previousHandler != 1 {  // 1: SIG_IGN
            previous.__sigaction_handler.sa_handler?(number)
        }
    }
#endif
