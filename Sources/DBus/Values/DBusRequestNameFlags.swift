/// Flags of `RequestName`.
package struct DBusRequestNameFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    package static let allowReplacement = DBusRequestNameFlags(rawValue: 1)
    package static let replaceExisting = DBusRequestNameFlags(rawValue: 2)
    package static let doNotQueue = DBusRequestNameFlags(rawValue: 4)
}
