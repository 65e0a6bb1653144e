internal import CDBus

/// Writes `DBusValue`s into a libdbus message through `DBusMessageIter`.
///
/// Every value is checked before it reaches libdbus, which aborts the process on type errors:
/// array elements must match the array's element signature, strings must not contain NUL, and
/// nesting must stay within the protocol's 64 levels.
enum MessageEncoder {
    static let maximumDepth = 64
    static let maximumArrayBytes = 64 * 1024 * 1024

    static func append(_ value: DBusValue, to iter: inout DBusMessageIter, depth: Int = 0) throws(DBusError) {
        switch value {
        case .byte(var byte): try basic(&iter, TypeCode.byte, &byte)
        case .boolean(let bool):
            var raw: dbus_bool_t = bool ? 1 : 0
            try basic(&iter, TypeCode.boolean, &raw)
        case .int16(var number): try basic(&iter, TypeCode.int16, &number)
        case .uint16(var number): try basic(&iter, TypeCode.uint16, &number)
        case .int32(var number): try basic(&iter, TypeCode.int32, &number)
        case .uint32(var number): try basic(&iter, TypeCode.uint32, &number)
        case .int64(var number): try basic(&iter, TypeCode.int64, &number)
        case .uint64(var number): try basic(&iter, TypeCode.uint64, &number)
        case .double(var number): try basic(&iter, TypeCode.double, &number)
        case .string(let string): try text(&iter, TypeCode.string, string)
        case .objectPath(let path): try text(&iter, TypeCode.objectPath, path.rawValue)
        case .signature(let signature): try text(&iter, TypeCode.signature, signature.rawValue)
        case .unixFD(let descriptor):
            var fd = descriptor.rawValue
            try basic(&iter, TypeCode.unixFD, &fd)
        case .bytes(let bytes):
            try appendBytes(bytes, to: &iter, depth: depth)
        case .array(let element, let items):
            try appendArray(element, items, to: &iter, depth: depth)
        case .dictionary(let keySignature, let valueSignature, let entries):
            try appendDictionary(keySignature, valueSignature, entries, to: &iter, depth: depth)
        case .structure(let members):
            guard !members.isEmpty else { throw DBusError(.invalidArgs, "a structure needs at least one member") }
            try container(&iter, TypeCode.structure, nil, depth: depth + 1) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                for member in members { try append(member, to: &sub, depth: depth + 1) }
            }
        case .variant(let inner):
            let signature = inner.signature
            try container(&iter, TypeCode.variant, signature.rawValue, depth: depth + 1) {
                (sub: inout DBusMessageIter) throws(DBusError) in
                try append(inner, to: &sub, depth: depth + 1)
            }
        }
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ code: Int32, _ value: inout T)
        throws(DBusError)
    {
        guard dbus_message_iter_append_basic(&iter, code, &value) != 0 else {
            throw DBusError(.noMemory, "cannot append a value")
        }
    }

    private static func text(_ iter: inout DBusMessageIter, _ code: Int32, _ string: String) throws(DBusError) {
        var copy = string
        let ok = copy.withUTF8 { buffer -> Bool in
            !buffer.contains(0)
        }
        guard ok else { throw DBusError(.invalidArgs, "strings must not contain NUL characters") }
        let appended = copy.withCString { pointer -> Bool in
            var cString: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, code, &cString) != 0
        }
        guard appended else { throw DBusError(.noMemory, "cannot append a string") }
    }

    private static func container(
        _ iter: inout DBusMessageIter, _ code: Int32, _ signature: String?, depth: Int,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        guard depth <= Self.maximumDepth else {
            throw DBusError(.invalidArgs, "values are nested more than \(Self.maximumDepth) levels deep")
        }
        var sub = DBusMessageIter()
        guard dbus_message_iter_open_container(&iter, code, signature, &sub) != 0 else {
            throw DBusError(.noMemory, "cannot open a container")
        }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else {
            throw DBusError(.noMemory, "cannot close a container")
        }
    }

    private static func appendArray(
        _ element: DBusSignature, _ items: [DBusValue], to iter: inout DBusMessageIter, depth: Int
    )
        throws(DBusError)
    {
        guard element.isSingleCompleteType, !element.rawValue.hasPrefix("{") else {
            throw DBusError(.invalidSignature, "invalid array element signature '\(element.rawValue)'")
        }
        if element.rawValue == "y" {
            try appendByteArray(items, to: &iter, depth: depth)
            return
        }
        try container(&iter, TypeCode.array, element.rawValue, depth: depth + 1) {
            (sub: inout DBusMessageIter) throws(DBusError) in
            for item in items {
                guard item.hasSignature(element) else {
                    throw DBusError.typeMismatch(
                        expected: element.rawValue, actual: item.signature.rawValue, context: "array element")
                }
                try append(item, to: &sub, depth: depth + 1)
            }
        }
    }

    private static func appendByteArray(_ items: [DBusValue], to iter: inout DBusMessageIter, depth: Int)
        throws(DBusError)
    {
        var bytes = [UInt8]()
        bytes.reserveCapacity(items.count)
        for item in items {
            guard case .byte(let byte) = item else {
                throw DBusError.typeMismatch(expected: "y", actual: item.signature.rawValue, context: "array element")
            }
            bytes.append(byte)
        }
        try appendBytes(bytes, to: &iter, depth: depth)
    }

    private static func appendBytes(_ bytes: [UInt8], to iter: inout DBusMessageIter, depth: Int) throws(DBusError) {
        guard bytes.count <= Self.maximumArrayBytes else {
            throw DBusError(
                .limitsExceeded, "an array of \(bytes.count) bytes exceeds the D-Bus limit of \(Self.maximumArrayBytes)"
            )
        }
        try container(&iter, TypeCode.array, "y", depth: depth + 1) { (sub: inout DBusMessageIter) throws(DBusError) in
            let ok = bytes.withUnsafeBufferPointer { buffer -> Bool in
                var base = buffer.baseAddress
                return dbus_message_iter_append_fixed_array(&sub, TypeCode.byte, &base, Int32(buffer.count)) != 0
            }
            guard ok else { throw DBusError(.noMemory, "cannot append a byte array") }
        }
    }

    private static func appendDictionary(
        _ keySignature: DBusSignature, _ valueSignature: DBusSignature, _ entries: [DBusDictEntry],
        to iter: inout DBusMessageIter, depth: Int
    ) throws(DBusError) {
        guard let keyCode = keySignature.rawValue.utf8.first, keySignature.rawValue.utf8.count == 1,
            DBusSignature.isBasicTypeCode(keyCode)
        else {
            throw DBusError(
                .invalidSignature, "dictionary keys must be of a basic type, not '\(keySignature.rawValue)'")
        }
        guard valueSignature.isSingleCompleteType else {
            throw DBusError(.invalidSignature, "invalid dictionary value signature '\(valueSignature.rawValue)'")
        }
        let entrySignature = "{" + keySignature.rawValue + valueSignature.rawValue + "}"
        try container(&iter, TypeCode.array, entrySignature, depth: depth + 1) {
            (sub: inout DBusMessageIter) throws(DBusError) in
            for entry in entries {
                guard entry.key.hasSignature(keySignature) else {
                    throw DBusError.typeMismatch(
                        expected: keySignature.rawValue, actual: entry.key.signature.rawValue, context: "dictionary key"
                    )
                }
                guard entry.value.hasSignature(valueSignature) else {
                    throw DBusError.typeMismatch(
                        expected: valueSignature.rawValue, actual: entry.value.signature.rawValue,
                        context: "dictionary value")
                }
                try container(&sub, TypeCode.dictEntry, nil, depth: depth + 2) {
                    (pair: inout DBusMessageIter) throws(DBusError) in
                    try append(entry.key, to: &pair, depth: depth + 2)
                    try append(entry.value, to: &pair, depth: depth + 2)
                }
            }
        }
    }
}
