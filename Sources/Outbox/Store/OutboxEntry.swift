import Foundation

/// One reading waiting to be published: everything the broker needs, plus the time the
/// value was sampled and the stream (for example the device id) whose order must hold.
package struct OutboxEntry: Sendable, Hashable {
    package var topic: String
    package var payload: [UInt8]
    package var qos: OutboxQoS
    package var retain: Bool
    /// When the value was sampled (kept to the microsecond; replayed unchanged).
    package var sampleTime: Date
    /// The ordering key: entries of one stream are published in the order they were appended.
    package var stream: String

    package init(
        topic: String, payload: [UInt8], qos: OutboxQoS = .atLeastOnce, retain: Bool = false,
        sampleTime: Date, stream: String
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.sampleTime = sampleTime
        self.stream = stream
    }

    /// What the entry costs against the byte cap: topic and payload bytes.
    package var size: Int { topic.utf8.count + payload.count }
}
