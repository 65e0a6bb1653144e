/// Lets events numbered 1, 2, 3, … go in their numbers' order, whatever order they arrive in: an
/// event that arrives before one numbered lower waits (as a `Waiter`) until that one has gone.
///
/// ``BLELink`` numbers its events in the order it decided them, and each reaches the ``Gateway``
/// actor through Swift's pool, where two tasks' events can overtake each other. With this, the
/// gateway starts handling each in the link's order, as a direct call would have; an event's
/// handler that then awaits (a PUBACK) does not hold up the next, which is only held until the
/// earlier ones have arrived.
///
/// ```swift
/// if !order.isTurn(number) { await withCheckedContinuation { order.park(number, $0) } }
/// order.went(number)?.resume()
/// ```
struct ArrivalOrder<Waiter> {
    /// The number whose turn it is.
    private var next = 1
    private var parked: [Int: Waiter] = [:]

    /// Whether `number` may go now: every number below it has gone.
    func isTurn(_ number: Int) -> Bool { number <= next }

    /// `number` arrived before its turn: `waiter` is handed back by ``went(_:)`` when it comes.
    mutating func park(_ number: Int, _ waiter: Waiter) {
        precondition(number > next && parked[number] == nil, "event \(number) parked twice or out of turn")
        parked[number] = waiter
    }

    /// `number` went: the waiter of the next number, if that one arrived already.
    mutating func went(_ number: Int) -> Waiter? {
        next = max(next, number + 1)
        return parked.removeValue(forKey: next)
    }

    /// How many events wait for an earlier one.
    var waiting: Int { parked.count }
}

extension ArrivalOrder: Sendable where Waiter: Sendable {}
