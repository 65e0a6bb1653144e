/// One D-Bus value of any type, as it travels on the wire.
///
/// Arrays and dictionaries carry their element signatures so that empty containers keep their
/// type. Dictionaries keep the order of their entries. Byte arrays (`ay`, e.g. a GATT value) have
/// a compact case of their own, `bytes`; `.array(elementSignature: "y", [.byte(…)])` is accepted
/// too and compares equal to the same `bytes`.
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
    /// `ay`, stored compactly (what the decoder produces for every byte array).
    case bytes([UInt8])
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
        case .bytes: return DBusSignature(trusted: "ay")
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
        if case .bytes = self { return signature.rawValue == "ay" }
        return self.signature == signature
    }

    /// The bytes of an `ay` in either representation.
    var byteArray: [UInt8]? {
        switch self {
        case .bytes(let bytes): return bytes
        case .array(let element, let items) where element.rawValue == "y":
            var bytes: [UInt8] = []
            bytes.reserveCapacity(items.count)
            for item in items {
                guard case .byte(let byte) = item else { return nil }
                bytes.append(byte)
            }
            return bytes
        default: return nil
        }
    }

    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): return a == b
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.int16(let a), .int16(let b)): return a == b
        case (.uint16(let a), .uint16(let b)): return a == b
        case (.int32(let a), .int32(let b)): return a == b
        case (.uint32(let a), .uint32(let b)): return a == b
        case (.int64(let a), .int64(let b)): return a == b
        case (.uint64(let a), .uint64(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.objectPath(let a), .objectPath(let b)): return a == b
        case (.signature(let a), .signature(let b)): return a == b
        case (.unixFD(let a), .unixFD(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.bytes(let a), .array), (.array, .bytes(let a)):
            let other = if case .bytes = lhs { rhs } else { lhs }
            return other.byteArray == a
        case (.array(let e1, let a), .array(let e2, let b)): return e1 == e2 && a == b
        case (.dictionary(let k1, let v1, let a), .dictionary(let k2, let v2, let b)):
            return k1 == k2 && v1 == v2 && a == b
        case (.structure(let a), .structure(let b)): return a == b
        case (.variant(let a), .variant(let b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        if let bytes = byteArray {
            hasher.combine(0xA7 as UInt8)
            hasher.combine(bytes)
            return
        }
        switch self {
        case .byte(let value): hasher.combine(value)
        case .boolean(let value): hasher.combine(value)
        case .int16(let value): hasher.combine(value)
        case .uint16(let value): hasher.combine(value)
        case .int32(let value): hasher.combine(value)
        case .uint32(let value): hasher.combine(value)
        case .int64(let value): hasher.combine(value)
        case .uint64(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .objectPath(let value): hasher.combine(value)
        case .signature(let value): hasher.combine(value)
        case .unixFD(let value): hasher.combine(value)
        case .bytes(let value): hasher.combine(value)
        case .array(let element, let items):
            hasher.combine(element)
            hasher.combine(items)
        case .dictionary(let key, let value, let entries):
            hasher.combine(key)
            hasher.combine(value)
            hasher.combine(entries)
        case .structure(let members): hasher.combine(members)
        case .variant(let inner): hasher.combine(inner)
        }
    }
}
