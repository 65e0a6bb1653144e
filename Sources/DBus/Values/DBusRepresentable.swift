/// A Swift type with a fixed D-Bus type, convertible both ways.
///
/// Decoding checks the signature and throws `org.freedesktop.DBus.Error.InvalidArgs` with the
/// expected and the actual signature on a mismatch. A value wrapped in variants is unwrapped
/// first, so `a{sv}` entries decode directly.
package protocol DBusRepresentable: Sendable {
    init(dbusValue: DBusValue) throws(DBusError)
    var dbusValue: DBusValue { get }
    static var dbusSignature: DBusSignature { get }
}

extension DBusValue {
    /// Decodes into `type`, e.g. `try value.decode(as: [String: DBusValue].self)`.
    package func decode<T: DBusRepresentable>(as type: T.Type = T.self) throws(DBusError) -> T {
        try T(dbusValue: T.dbusSignature.rawValue == "v" ? self : unwrappedVariant)
    }
}

extension DBusRepresentable {
    static func mismatch(_ value: DBusValue) -> DBusError {
        DBusError.typeMismatch(expected: dbusSignature.rawValue, actual: value.signature.rawValue)
    }
}

extension UInt8: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "y" }
    package var dbusValue: DBusValue { .byte(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .byte(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Bool: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "b" }
    package var dbusValue: DBusValue { .boolean(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .boolean(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Int16: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "n" }
    package var dbusValue: DBusValue { .int16(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int16(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension UInt16: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "q" }
    package var dbusValue: DBusValue { .uint16(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint16(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Int32: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "i" }
    package var dbusValue: DBusValue { .int32(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int32(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension UInt32: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "u" }
    package var dbusValue: DBusValue { .uint32(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint32(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Int64: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "x" }
    package var dbusValue: DBusValue { .int64(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int64(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension UInt64: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "t" }
    package var dbusValue: DBusValue { .uint64(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint64(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Double: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "d" }
    package var dbusValue: DBusValue { .double(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .double(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension String: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "s" }
    package var dbusValue: DBusValue { .string(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .string(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusObjectPath: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "o" }
    package var dbusValue: DBusValue { .objectPath(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .objectPath(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusSignature: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "g" }
    package var dbusValue: DBusValue { .signature(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .signature(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusFileDescriptor: DBusRepresentable {
    package static var dbusSignature: DBusSignature { "h" }
    package var dbusValue: DBusValue { .unixFD(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .unixFD(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusValue: DBusRepresentable {
    /// Any value, carried as a variant.
    package static var dbusSignature: DBusSignature { "v" }
    package var dbusValue: DBusValue { .variant(self) }
    package init(dbusValue: DBusValue) throws(DBusError) {
        self = dbusValue.unwrappedVariantOnce
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    package static var dbusSignature: DBusSignature {
        DBusSignature(trusted: "a" + Element.dbusSignature.rawValue)
    }
    package var dbusValue: DBusValue {
        if let bytes = self as? [UInt8] { return .bytes(bytes) }
        return .array(elementSignature: Element.dbusSignature, map(\.dbusValue))
    }
    package init(dbusValue: DBusValue) throws(DBusError) {
        if case .bytes(let bytes) = dbusValue {
            guard let same = bytes as? [Element] else { throw Self.mismatch(dbusValue) }
            self = same
            return
        }
        guard case .array(let element, let items) = dbusValue, element == Element.dbusSignature else {
            throw Self.mismatch(dbusValue)
        }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try Element(dbusValue: item)) }
        self = result
    }
}

extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    package static var dbusSignature: DBusSignature {
        DBusSignature(trusted: "a{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}")
    }
    package var dbusValue: DBusValue {
        .dictionary(
            keySignature: Key.dbusSignature, valueSignature: Value.dbusSignature,
            map { DBusDictEntry(key: $0.key.dbusValue, value: $0.value.dbusValue) })
    }
    package init(dbusValue: DBusValue) throws(DBusError) {
        guard case .dictionary(let key, let value, let entries) = dbusValue, key == Key.dbusSignature,
            value == Value.dbusSignature
        else { throw Self.mismatch(dbusValue) }
        var result: [Key: Value] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries { result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = result
    }
}
