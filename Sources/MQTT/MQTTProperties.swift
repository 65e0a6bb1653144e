/// The MQTT 5 properties of a PUBLISH that BLEBridge uses, on sent and received messages.
///
/// Ignored (must be empty) with MQTT 3.1.1: publishing a message that carries properties over
/// 3.1.1 throws ``MQTTError/Code/unsupported``.
package struct MQTTProperties: Sendable, Hashable {
    /// Message expiry interval in seconds (the broker drops the message when it is older).
    package var messageExpiry: UInt32?
    /// Where a request's response should be published.
    package var responseTopic: String?
    /// Opaque bytes that tie a response to its request.
    package var correlationData: [UInt8]?
    /// User properties in order; a name may repeat.
    package var userProperties: [MQTTUserProperty]
    /// The payload's MIME type, e.g. `application/json`.
    package var contentType: String?

    package init(
        messageExpiry: UInt32? = nil, responseTopic: String? = nil, correlationData: [UInt8]? = nil,
        userProperties: [MQTTUserProperty] = [], contentType: String? = nil
    ) {
        self.messageExpiry = messageExpiry
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.userProperties = userProperties
        self.contentType = contentType
    }

    /// True when no property is set.
    package var isEmpty: Bool {
        messageExpiry == nil && responseTopic == nil && correlationData == nil && userProperties.isEmpty
            && contentType == nil
    }
}

/// One MQTT 5 user property (a name/value pair; names may repeat within a message).
package struct MQTTUserProperty: Sendable, Hashable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
