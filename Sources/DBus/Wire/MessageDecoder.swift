internal import CDBus

/// Reads `DBusValue`s out of a libdbus message through `DBusMessageIter`.
enum MessageDecoder {
    static func decodeAll(_ iter: inout DBusMessageIter) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        try decodeAll(&iter, into: &values)
        return values
    }

    /// Appends the values from the iterator's position to the end.
    static func decodeAll(_ iter: inout DBusMessageIter, into values: inout [DBusValue]) throws(DBusError) {
        while dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
            values.append(try decode(&iter))
            dbus_message_iter_next(&iter)
        }
    }

    /// Decodes the value at the iterator's position (without advancing).
    static func decode(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let code = dbus_message_iter_get_arg_type(&iter)
        switch code {
        case TypeCode.byte: return .byte(basic(&iter, UInt8.self))
        case TypeCode.boolean: return .boolean(basic(&iter, dbus_bool_t.self) != 0)
        case TypeCode.int16: return .int16(basic(&iter, Int16.self))
        case TypeCode.uint16: return .uint16(basic(&iter, UInt16.self))
        case TypeCode.int32: return .int32(basic(&iter, Int32.self))
        case TypeCode.uint32: return .uint32(basic(&iter, UInt32.self))
        case TypeCode.int64: return .int64(basic(&iter, Int64.self))
        case TypeCode.uint64: return .uint64(basic(&iter, UInt64.self))
        case TypeCode.double: return .double(basic(&iter, Double.self))
        case TypeCode.string: return .string(string(&iter))
        case TypeCode.objectPath: return .objectPath(DBusObjectPath(trusted: string(&iter)))
        case TypeCode.signature: return .signature(DBusSignature(trusted: string(&iter)))
        case TypeCode.unixFD:
            let fd = basic(&iter, Int32.self)
            guard fd >= 0 else { throw DBusError(.inconsistentMessage, "a file descriptor could not be received") }
            return .unixFD(DBusFileDescriptor(takingOwnershipOf: fd))
        case TypeCode.array: return try decodeArray(&iter)
        case TypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .structure(try decodeAll(&sub))
        case TypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try decode(&sub))
        default:
            throw DBusError(.inconsistentMessage, "unsupported D-Bus type code \(code)")
        }
    }

    @inline(__always)
    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _: T.Type) -> T {
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { buffer -> T in
            dbus_message_iter_get_basic(&iter, buffer.baseAddress)
            return buffer[0]
        }
    }

    @inline(__always)
    private static func string(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &pointer)
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    /// Signatures of basic element types, shared (no allocation per array).
    private static let basicSignatures: [Int32: DBusSignature] = {
        var table: [Int32: DBusSignature] = [:]
        for code in "ybnqiuxtdhsogv".utf8 { table[Int32(code)] = DBusSignature(trusted: String(UnicodeScalar(code))) }
        return table
    }()

    private static func decodeArray(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let elementCode = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementCode == TypeCode.byte {
            var pointer: UnsafeMutableRawPointer? = nil
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&sub, $0, &count) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        }
        if let element = basicSignatures[elementCode] {
            return .array(elementSignature: element, try decodeAll(&sub))
        }
        if elementCode == TypeCode.dictEntry, let signatures = basicDictionarySignatures(&sub) {
            return .dictionary(
                keySignature: signatures.key, valueSignature: signatures.value, try decodeEntries(&sub))
        }
        // Containers: the element signature comes from the array's own signature.
        let arraySignature = fullSignature(&iter)
        let element = String(arraySignature.utf8.dropFirst())!
        if elementCode == TypeCode.dictEntry {
            let inner = element.utf8.dropFirst().dropLast()  // strip { }
            let key = String(inner.prefix(1))!
            let value = String(inner.dropFirst())!
            return .dictionary(
                keySignature: basicSignatures[Int32(key.utf8.first!)] ?? DBusSignature(trusted: key),
                valueSignature: DBusSignature(trusted: value), try decodeEntries(&sub))
        }
        return .array(elementSignature: DBusSignature(trusted: element), try decodeAll(&sub))
    }

    /// Key and value signatures of a non-empty dictionary whose value type is basic or a variant
    /// (`a{sv}`, `a{qv}`, `a{ss}`), read from its first entry without asking libdbus for (and
    /// allocating) the whole signature.
    private static func basicDictionarySignatures(_ entries: inout DBusMessageIter)
        -> (key: DBusSignature, value: DBusSignature)?
    {
        guard dbus_message_iter_get_arg_type(&entries) == TypeCode.dictEntry else { return nil }
        var pair = DBusMessageIter()
        dbus_message_iter_recurse(&entries, &pair)
        guard let key = basicSignatures[dbus_message_iter_get_arg_type(&pair)] else { return nil }
        dbus_message_iter_next(&pair)
        guard let value = basicSignatures[dbus_message_iter_get_arg_type(&pair)] else { return nil }
        return (key, value)
    }

    private static func decodeEntries(_ sub: inout DBusMessageIter) throws(DBusError) -> [DBusDictEntry] {
        var entries: [DBusDictEntry] = []
        while dbus_message_iter_get_arg_type(&sub) == TypeCode.dictEntry {
            var pair = DBusMessageIter()
            dbus_message_iter_recurse(&sub, &pair)
            let keyValue = try decode(&pair)
            dbus_message_iter_next(&pair)
            let valueValue = try decode(&pair)
            entries.append(DBusDictEntry(key: keyValue, value: valueValue))
            dbus_message_iter_next(&sub)
        }
        return entries
    }

    private static func fullSignature(_ iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }
}
