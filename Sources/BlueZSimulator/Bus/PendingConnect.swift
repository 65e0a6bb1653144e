import DBus

/// A `Connect` (or `Pair`'s connection) waiting for its attempt to end.
struct PendingConnect {
    var continuation: CheckedContinuation<Void, any Error>
    /// Nil when the simulator connects on its own behalf (Pair, control channel).
    var notice: DBusReplyNotice?
}
