/// When the gateway tries Bluetooth again after failing to reach it (the bus missing, the D-Bus
/// policy refusing it): exponential from `minimum` to `maximum`, reset by a success. A pure value
/// with an injected clock, unit-tested without I/O.
///
/// A missing bluetoothd or adapter needs no retry: BlueZ's own signals (the name owner, the
/// adapter's `InterfacesAdded`) announce its return. A bus cannot announce itself, and a policy
/// change is not signalled on the bus, so those are tried again on this schedule; a change in the
/// system bus's policy directories (``PolicyDirectoryWatch``) brings the attempt forward. The cap is low (8 s) so
/// readings resume within 10 s of the bus being back; an attempt costs one `connect(2)`.
struct BluetoothRetry<C: Clock>: Sendable where C.Duration == Duration, C: Sendable {
    let clock: C
    let minimum: Duration
    let maximum: Duration
    /// Failed attempts since the last success.
    private(set) var failures = 0
    /// When the next attempt is due (nil while none is scheduled).
    private(set) var nextAttempt: C.Instant?

    init(clock: C, minimum: Duration = .seconds(1), maximum: Duration = .seconds(8)) {
        self.clock = clock
        self.minimum = minimum
        self.maximum = maximum
    }

    /// The delay after the `failures`-th failure in a row (1-based).
    func delay(afterFailures failures: Int) -> Duration {
        guard failures > 1 else { return minimum }
        var delay = minimum
        for _ in 1..<min(failures, 32) {
            delay *= 2
            if delay >= maximum { return maximum }
        }
        return delay
    }

    /// One more failed attempt: returns when to try again.
    mutating func failed() -> C.Instant {
        failures += 1
        let due = clock.now.advanced(by: delay(afterFailures: failures))
        nextAttempt = due
        return due
    }

    /// Bluetooth was reached: the next failure starts from `minimum` again.
    mutating func succeeded() {
        failures = 0
        nextAttempt = nil
    }

    /// Something that may have ended the failure changed (a D-Bus policy file: dbus-daemon
    /// reloads by itself and announces nothing): the scheduled attempt moves to `settle` from now
    /// (time for dbus-daemon to reload first) when that is sooner. Returns the new time, or nil when
    /// nothing is scheduled or the scheduled attempt comes sooner anyway.
    mutating func changed(settle: Duration = .seconds(1)) -> C.Instant? {
        guard let scheduled = nextAttempt else { return nil }
        let soon = clock.now.advanced(by: settle)
        guard soon < scheduled else { return nil }
        nextAttempt = soon
        return soon
    }

    /// Whether the scheduled attempt is due.
    func isDue() -> Bool {
        guard let nextAttempt else { return false }
        return clock.now >= nextAttempt
    }
}
