/// A coding key for any object key or list index: what strict decoders use to see every key an
/// object holds, and how a place in a document is named (`devices[2].services[0].uuid`).
public struct JSONKey: CodingKey, Hashable, Sendable {
    public var stringValue: String
    public var intValue: Int?

    /// An object key.
    package init(_ key: String) {
        stringValue = key
        intValue = nil
    }

    public init?(stringValue: String) {
        self.init(stringValue)
    }

    /// A list index.
    public init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    /// `devices[2].services[0].uuid`; empty for the document itself.
    package static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
}
