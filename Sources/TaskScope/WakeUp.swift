import Timekeeping

/// A pure state machine's next deadline (`nextDeadline`) as one timer: armed at that instant,
/// re-armed only when the instant moves, so a caller can re-arm after every event at no cost.
/// Owned by an actor (a value type: the actor's isolation guards it). The timer is a child of the
/// owner's ``TaskScope``, so it ends with the owner's other tasks.
package struct WakeUp: Sendable {
    /// The instant the timer is armed for; nil when none is.
    package private(set) var deadline: ContinuousClock.Instant?
    private var task: ScopedTask?

    package init() {}

    /// Arms the timer for `deadline` (nil: disarms it), unless it is armed for that instant
    /// already; `fire` runs once `deadline` has passed on `clock`, unless re-armed or cancelled
    /// first. `fire` should call ``fired()`` first. Nothing is armed once `scope` is closed.
    package mutating func arm(
        at deadline: ContinuousClock.Instant?, clock: any BridgeClock, in scope: TaskScope,
        _ fire: @escaping @Sendable () async -> Void
    ) {
        guard deadline != self.deadline else { return }
        self.deadline = deadline
        task?.cancel()
        task = nil
        guard let deadline else { return }
        // The state machine's next deadline (it has no other way to learn that time passed).
        task = scope.spawnTimer(at: deadline, clock: clock, fire)
    }

    /// The timer fired: it is armed for nothing (the next ``arm(at:clock:in:_:)`` arms it, even for
    /// the same instant).
    package mutating func fired() {
        deadline = nil
        task = nil
    }

    /// Disarms the timer.
    package mutating func cancel() {
        task?.cancel()
        task = nil
        deadline = nil
    }
}
