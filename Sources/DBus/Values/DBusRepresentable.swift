/// A Swift type with a fixed D-Bus type, convertible both ways.
///
/// Decoding checks the signature and throws `org.freedesktop.DBus.Error.InvalidArgs` with the
/// expected and the actual signature on a mismatch. A value wrapped in variants is unwrapped
/// first, so `a{sv}` entries decode directly.
public protocol DBusRepresentable: Sendable {
    init(dbusValue: DBusValue) throws(DBusError)
    var dbusValue: DBusValue { get }
    static var dbusSignature: DBusSignature { get }
}

extension DBusValue {
    /// Decodes into `type`, e.g. `try value.decode(as: [String: DBusValue].self)`.
    public func decode<T: DBusRepresentable>(as type: T.Type = T.self) throws(DBusError) -> T {
        try T(dbusValue: T.dbusSignature.rawValue == "v" ? self : unwrappedVariant)
    }
}

extension DBusRepresentable {
    static func mismatch(_ value: DBusValue) -> DBusError {
        DBusError.typeMismatch(expected: dbusSignature.rawValue, actual: value.signature.rawValue)
    }
}

extension UInt8: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "y" }
    public var dbusValue: DBusValue { .byte(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .byte(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Bool: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "b" }
    public var dbusValue: DBusValue { .boolean(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .boolean(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Int16: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "n" }
    public var dbusValue: DBusValue { .int16(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int16(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension UInt16: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "q" }
    public var dbusValue: DBusValue { .uint16(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint16(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Int32: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "i" }
    public var dbusValue: DBusValue { .int32(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int32(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension UInt32: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "u" }
    public var dbusValue: DBusValue { .uint32(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint32(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Int64: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "x" }
    public var dbusValue: DBusValue { .int64(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .int64(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension UInt64: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "t" }
    public var dbusValue: DBusValue { .uint64(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .uint64(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension Double: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "d" }
    public var dbusValue: DBusValue { .double(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .double(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension String: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "s" }
    public var dbusValue: DBusValue { .string(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .string(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusObjectPath: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "o" }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .objectPath(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusSignature: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "g" }
    public var dbusValue: DBusValue { .signature(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .signature(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusFileDescriptor: DBusRepresentable {
    public static var dbusSignature: DBusSignature { "h" }
    public var dbusValue: DBusValue { .unixFD(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .unixFD(let value) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = value
    }
}

extension DBusValue: DBusRepresentable {
    /// Any value, carried as a variant.
    public static var dbusSignature: DBusSignature { "v" }
    public var dbusValue: DBusValue { .variant(self) }
    public init(dbusValue: DBusValue) throws(DBusError) {
        self = dbusValue.unwrappedVariantOnce
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusSignature: DBusSignature {
        DBusSignature(trusted: "a" + Element.dbusSignature.rawValue)
    }
    public var dbusValue: DBusValue {
        if let bytes = self as? [UInt8] { return .bytes(bytes) }
        return .array(elementSignature: Element.dbusSignature, map(\.dbusValue))
    }
    public init(dbusValue: DBusValue) throws(DBusError) {
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
    public static var dbusSignature: DBusSignature {
        DBusSignature(trusted: "a{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}")
    }
    public var dbusValue: DBusValue {
        .dictionary(
            keySignature: Key.dbusSignature, valueSignature: Value.dbusSignature,
            map { DBusDictEntry(key: $0.key.dbusValue, value: $0.value.dbusValue) })
    }
    public init(dbusValue: DBusValue) throws(DBusError) {
        guard case .dictionary(let key, let value, let entries) = dbusValue, key == Key.dbusSignature,
            value == Value.dbusSignature
        else { throw Self.mismatch(dbusValue) }
        var result: [Key: Value] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries { result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = result
    }
}
