/// Actions a state machine decided, performed one at a time in the order decided, also when
/// performing one suspends and another event decides more meanwhile.
///
/// An actor that performs each event's actions with `await`s between them is re-entered at every
/// one: a second event could decide and perform its actions while the first event's rest waited,
/// and the first's then ran stale. In shared-broker mode a gateway took the lamp after releasing it
/// to the gateway that now owned it (`take` decided first, performed last), and stayed connected
/// beside the owner (`MultiGatewayBridgeEndToEndTests`, a stress run under load, 2026-12-05).
///
/// ```swift
/// if queue.add(coordinator.handle(event, at: now)) {
///     while let action = queue.next() { await perform(action) }
/// }
/// ```
struct OrderedActions<Action> {
    private var pending: [Action] = []
    private var head = 0
    /// Whether some caller is performing the actions (it performs those added meanwhile too).
    private(set) var draining = false

    /// Queues `actions` after those not yet performed. True when the caller must perform them
    /// (``next()`` until nil); false when another caller is at it and will.
    mutating func add(_ actions: [Action]) -> Bool {
        pending.append(contentsOf: actions)
        guard !draining else { return false }
        draining = true
        return true
    }

    /// The next action to perform; nil (and the drain over) when none is left.
    mutating func next() -> Action? {
        guard head < pending.count else {
            pending.removeAll(keepingCapacity: true)
            head = 0
            draining = false
            return nil
        }
        defer { head += 1 }
        return pending[head]
    }
}
