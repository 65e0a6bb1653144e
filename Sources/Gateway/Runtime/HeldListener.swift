import BlueZ
import Bluetooth
import Foundation

/// A notification listener of a connected device (a configured subscription's, or a raw
/// `gatt/notify` request's), with the stream that finishes when its notifications ended by
/// themselves (the link dropped and the notify socket was read to its end).
/// ``BLELink/stop(until:)`` and ``BLELink/disconnect(_:)`` wait for it; a power-off and a link
/// drop only let it go, and the peripheral ends it after the socket's last values.
struct HeldListener: Sendable {
    let listener: NotificationListener
    let ended: AsyncStream<Void>

    /// Enables the characteristic's notifications and hands each value to `onValue` on the thread
    /// that read it (``Peripheral/notificationBytes(for:onValue:onEnd:)``: no task, stream or actor
    /// hop, so nothing sits between the socket and the pipeline when the listener is let go).
    static func listening(
        to characteristic: GATTCharacteristic, of peripheral: Peripheral,
        onValue: @escaping @Sendable ([UInt8]) -> Void
    ) async throws -> HeldListener {
        let (ended, end) = AsyncStream.makeStream(of: Void.self)
        let listener = try await peripheral.notificationBytes(
            for: characteristic, onValue: onValue, onEnd: { _ in end.finish() })
        return HeldListener(listener: listener, ended: ended)
    }
}
