import DBus

/// A `Disconnect` waiting for the link to go down, and how to learn that its reply was queued.
struct PendingDisconnect {
    var continuation: CheckedContinuation<Void, Never>
    /// Nil for disconnects the simulator starts itself (RemoveDevice).
    var notice: DBusReplyNotice?
}
