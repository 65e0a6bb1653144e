/// The order in which one connection read its signals, so that a method call can be handled after
/// the signals its sender sent before it.
///
/// Every signal delivered to a subscription gets the next number (``DBusSignal/sequence``); a
/// method call records the number of the last signal its sender sent before it
/// (``DBusMethodCall/signalsBefore``). D-Bus keeps one sender's messages in order, but here a
/// signal goes to its subscriber's stream and a call to its handler's own task, so a handler may
/// run before the stream's consumer saw the signals that came first (bluetoothd sends a device's
/// `PropertiesChanged`, then calls `DeviceFound`). A handler that needs them waits until its
/// consumer has handled the signal numbered `signalsBefore` (those signals reach the streams at the
/// end of the dispatch round that read them, the handler's task may start before). Confined to
/// the connection thread.
struct SignalOrder {
    private(set) var count: UInt64 = 0
    private var lastBySender: [String: UInt64] = [:]
    /// Senders remembered at most; past it the table starts again (a call from a forgotten sender
    /// then waits for nothing: `signalsBefore` 0). A connection hears a few (bluetoothd, the bus).
    static let senderLimit = 256

    /// A signal from `sender` was delivered to at least one subscription: its number.
    mutating func delivered(from sender: String) -> UInt64 {
        count += 1
        if lastBySender[sender] == nil, lastBySender.count >= Self.senderLimit { lastBySender.removeAll() }
        lastBySender[sender] = count
        return count
    }

    /// The number of the last signal `sender` sent before now, 0 when none.
    func lastSignal(from sender: String) -> UInt64 { lastBySender[sender] ?? 0 }
}
