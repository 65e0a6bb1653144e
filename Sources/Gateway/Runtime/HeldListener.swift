import BlueZ

/// A configured subscription's notification listener, with the stream that finishes when its
/// notifications ended by themselves (the link dropped and the notify socket was read to its end).
/// ``BLELink/stop(until:)`` waits for it before the pipeline stops accepting readings.
struct HeldListener: Sendable {
    let listener: NotificationListener
    let ended: AsyncStream<Void>
}
