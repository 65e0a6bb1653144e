import DBus
import EventLoop

/// The thread a client's successive bus connections run on (`blebridge.dbus`), kept by the client
/// for its whole life: a gateway that opens a new ``BlueZBus`` after each refusal or loss opens
/// every one on the same thread, so an actor pinned to it (``executor``) stays pinned while the
/// connections come and go. The ``CentralManager``, its peripherals and its pairing agent on a bus
/// opened here run on this thread too, so the pinned actor reaches them without a hop.
package final class BlueZBusThread: Sendable {
    let loop: EventLoop

    /// Starts the thread; it runs until the last holder (this object, a bus opened on it) lets go.
    package init() throws {
        loop = try DBusConnection.makeThread()
    }

    /// The thread's executor, for an actor pinned to it
    /// (`nonisolated var unownedExecutor: UnownedSerialExecutor { thread.executor }`). Such an actor
    /// must never block: every signal and reply of the bus waits while it runs.
    package var executor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// True on the thread.
    package var isCurrentThread: Bool { loop.isCurrentThread }
}
