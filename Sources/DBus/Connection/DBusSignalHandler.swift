/// A match rule whose signals are handed to a closure on the connection's thread
/// (``DBusConnection/signalHandler(matching:_:)``). The rule stays on the bus until ``cancel()`` or
/// until the handler is released; the closure is not called after `cancel()` returned on the
/// connection's thread.
package final class DBusSignalHandler: Sendable {
    private let loop: ConnectionLoop
    private let id: UInt64

    init(loop: ConnectionLoop, id: UInt64) {
        self.loop = loop
        self.id = id
    }

    deinit { cancel() }

    /// Removes the rule and the handler. Safe to call more than once.
    package func cancel() {
        let id = self.id
        loop.submit { $0.removeSubscription(id, finishStream: false) }
    }
}
