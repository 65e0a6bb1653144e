/// A descriptor watched by an ``EventLoop`` (``EventLoop/watch(fd:interest:_:)``). The descriptor
/// stays the caller's: cancel the watch before closing it.
package struct FDWatch: Sendable {
    let token: UInt64
    let core: EventLoopCore?

    /// Stops watching. On the loop's thread the handler is never called again once this returns
    /// (not even for an event already reported in the same wake-up), so the descriptor may be
    /// closed right after; from another thread the removal is queued behind the work already
    /// queued.
    package func cancel() { core?.unwatch(token) }

    /// Changes what the handler is told about (for example `.writable` only while output waits).
    package func setInterest(_ interest: Readiness) { core?.setInterest(token, interest) }
}
