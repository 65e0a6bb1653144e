/// A handler registered with ``Peripheral/notifications(for:onValue:onEnd:)``.
///
/// ```swift
/// let listener = try await peripheral.notifications(for: heartRate) { value in pipeline.received(value) }
/// …
/// listener.cancel()   // the last listener of a characteristic leaving turns its notifications off
/// ```
public struct NotificationListener: Sendable {
    private let onCancel: @Sendable () -> Void

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// Removes the handler at once: no value that arrives after this returns reaches it (one being
    /// delivered at that very moment may still finish). Its `onEnd` is not called. Cancelling twice is
    /// harmless.
    public func cancel() {
        onCancel()
    }
}
