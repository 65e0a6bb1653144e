/// One D-Bus value of any type, as it travels on the wire.
///
/// Arrays and dictionaries carry their element signatures so that empty containers keep their
/// type. Dictionaries keep the order of their entries.
public enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    case unixFD(DBusFileDescriptor)
    case array(elementSignature: DBusSignature, [DBusValue])
    case dictionary(keySignature: DBusSignature, valueSignature: DBusSignature, [DBusDictEntry])
    case structure([DBusValue])
    indirect case variant(DBusValue)

    /// The value's complete type signature.
    public var signature: DBusSignature {
        switch self {
        case .byte: return DBusSignature(trusted: "y")
        case .boolean: return DBusSignature(trusted: "b")
        case .int16: return DBusSignature(trusted: "n")
        case .uint16: return DBusSignature(trusted: "q")
        case .int32: return DBusSignature(trusted: "i")
        case .uint32: return DBusSignature(trusted: "u")
        case .int64: return DBusSignature(trusted: "x")
        case .uint64: return DBusSignature(trusted: "t")
        case .double: return DBusSignature(trusted: "d")
        case .string: return DBusSignature(trusted: "s")
        case .objectPath: return DBusSignature(trusted: "o")
        case .signature: return DBusSignature(trusted: "g")
        case .unixFD: return DBusSignature(trusted: "h")
        case .array(let element, _): return DBusSignature(trusted: "a" + element.rawValue)
        case .dictionary(let key, let value, _):
            return DBusSignature(trusted: "a{" + key.rawValue + value.rawValue + "}")
        case .structure(let members):
            return DBusSignature(trusted: "(" + members.map(\.signature.rawValue).joined() + ")")
        case .variant: return DBusSignature(trusted: "v")
        }
    }

    /// True when this value has type `signature` (cheap for basic types).
    public func hasSignature(_ signature: DBusSignature) -> Bool {
        let raw = signature.rawValue.utf8
        if raw.count == 1, let code = raw.first {
            switch (self, code) {
            case (.byte, UInt8(ascii: "y")), (.boolean, UInt8(ascii: "b")), (.int16, UInt8(ascii: "n")),
                (.uint16, UInt8(ascii: "q")), (.int32, UInt8(ascii: "i")), (.uint32, UInt8(ascii: "u")),
                (.int64, UInt8(ascii: "x")), (.uint64, UInt8(ascii: "t")), (.double, UInt8(ascii: "d")),
                (.string, UInt8(ascii: "s")), (.objectPath, UInt8(ascii: "o")), (.signature, UInt8(ascii: "g")),
                (.unixFD, UInt8(ascii: "h")), (.variant, UInt8(ascii: "v")):
                return true
            default:
                return false
            }
        }
        return self.signature == signature
    }
}

/// One entry of a D-Bus dictionary (`{kv}`).
public struct DBusDictEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue

    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension [DBusValue] {
    /// The concatenated signature of a list of arguments.
    public var dbusSignature: DBusSignature {
        DBusSignature(trusted: map(\.signature.rawValue).joined())
    }
}
