internal import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An owned libmosquitto property list (`mosquitto_property *`), freed on deinit.
final class MosquittoPropertyList {
    private(set) var head: OpaquePointer?

    init() {}

    /// The PUBLISH/will properties of `properties`.
    convenience init(_ properties: MQTTProperties) throws(MQTTError) {
        self.init()
        if let expiry = properties.messageExpiry {
            try add { mosquitto_property_add_int32($0, Self.id(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL), expiry) }
        }
        if let topic = properties.responseTopic {
            try MQTTTopic.validateName(topic)
            try add { mosquitto_property_add_string($0, Self.id(MQTT_PROP_RESPONSE_TOPIC), topic) }
        }
        if let data = properties.correlationData {
            guard data.count <= 65535 else {
                throw MQTTError(.invalidConfiguration, "correlation data longer than 65,535 bytes")
            }
            try add { list in
                data.withUnsafeBytes {
                    mosquitto_property_add_binary(
                        list, Self.id(MQTT_PROP_CORRELATION_DATA), $0.baseAddress, UInt16(data.count))
                }
            }
        }
        if let contentType = properties.contentType {
            try add { mosquitto_property_add_string($0, Self.id(MQTT_PROP_CONTENT_TYPE), contentType) }
        }
        for property in properties.userProperties {
            try add {
                mosquitto_property_add_string_pair($0, Self.id(MQTT_PROP_USER_PROPERTY), property.name, property.value)
            }
        }
    }

    func addSessionExpiry(_ seconds: UInt32) throws(MQTTError) {
        try add { mosquitto_property_add_int32($0, Self.id(MQTT_PROP_SESSION_EXPIRY_INTERVAL), seconds) }
    }

    func addMaximumPacketSize(_ bytes: UInt32) throws(MQTTError) {
        try add { mosquitto_property_add_int32($0, Self.id(MQTT_PROP_MAXIMUM_PACKET_SIZE), bytes) }
    }

    private func add(_ body: (UnsafeMutablePointer<OpaquePointer?>) -> Int32) throws(MQTTError) {
        let rc = withUnsafeMutablePointer(to: &head) { body($0) }
        try MosquittoResult.check(rc, "building MQTT 5 properties")
    }

    /// Gives the list to libmosquitto (which frees it); this object no longer owns it.
    func transferOwnership() -> OpaquePointer? {
        defer { head = nil }
        return head
    }

    deinit {
        if head != nil { mosquitto_property_free_all(&head) }
    }

    static func id(_ property: mqtt5_property) -> Int32 { Int32(property.rawValue) }

    /// Reads the properties BLEBridge uses from a received list (borrowed, not freed here).
    static func read(_ list: OpaquePointer?) -> MQTTProperties {
        var result = MQTTProperties()
        guard let list else { return result }
        var expiry: UInt32 = 0
        if mosquitto_property_read_int32(list, id(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL), &expiry, false) != nil {
            result.messageExpiry = expiry
        }
        result.responseTopic = readString(list, MQTT_PROP_RESPONSE_TOPIC)
        result.contentType = readString(list, MQTT_PROP_CONTENT_TYPE)
        var data: UnsafeMutableRawPointer?
        var length: UInt16 = 0
        if mosquitto_property_read_binary(list, id(MQTT_PROP_CORRELATION_DATA), &data, &length, false) != nil {
            result.correlationData = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            free(data)
        }
        var cursor: OpaquePointer? = list
        var skipFirst = false
        while true {
            var name: UnsafeMutablePointer<CChar>?
            var value: UnsafeMutablePointer<CChar>?
            cursor = mosquitto_property_read_string_pair(cursor, id(MQTT_PROP_USER_PROPERTY), &name, &value, skipFirst)
            guard cursor != nil else { break }
            result.userProperties.append(
                MQTTUserProperty(name.map { String(cString: $0) } ?? "", value.map { String(cString: $0) } ?? ""))
            free(name)
            free(value)
            skipFirst = true
        }
        return result
    }

    private static func readString(_ list: OpaquePointer, _ property: mqtt5_property) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard mosquitto_property_read_string(list, id(property), &value, false) != nil else { return nil }
        defer { free(value) }
        return value.map { String(cString: $0) } ?? ""
    }
}
