/// POSIX signals as an `AsyncStream`, so the gateway can react to SIGTERM / SIGINT / SIGHUP on its
/// own terms, off the signal handler (``SignalHub``).
package enum SignalEvents {
    /// Each delivery of `signals`, from the moment this returns: their default action no longer
    /// applies (the process is not ended by them) and none is lost, so a command creates the
    /// stream before it says it is ready ("Press Ctrl-C", READY=1). The handler stays when the
    /// stream ends; a signal nobody listens to is then dropped.
    package static func stream(_ signals: [Int32]) -> AsyncStream<Int32> {
        SignalHub.shared.subscribe(signals)
    }
}
