/// A timer set on an ``EventLoop`` (``EventLoop/schedule(at:_:)``).
package struct EventLoopTimer: Sendable {
    let id: UInt64
    let core: EventLoopCore?

    /// Stops the timer if it has not fired yet; true when it had not (its body will not run).
    /// On the loop's thread the answer is exact; from another thread the body may be running now.
    @discardableResult
    package func cancel() -> Bool { core?.cancelTimer(id) ?? false }
}
