extension DBusValue {
    /// `as`
    package static func strings(_ strings: some Sequence<String>) -> DBusValue {
        .array(elementSignature: DBusSignature(trusted: "s"), strings.map { .string($0) })
    }

    /// `ao`
    package static func objectPaths(_ paths: some Sequence<DBusObjectPath>) -> DBusValue {
        .array(elementSignature: DBusSignature(trusted: "o"), paths.map { .objectPath($0) })
    }

    /// `a{sv}`, entries sorted by key (dictionaries have no order of their own).
    package static func properties(_ properties: [String: DBusValue]) -> DBusValue {
        .dictionary(
            keySignature: DBusSignature(trusted: "s"), valueSignature: DBusSignature(trusted: "v"),
            properties.sorted { $0.key < $1.key }.map { DBusDictEntry(key: .string($0.key), value: .variant($0.value)) }
        )
    }

    /// `a{sv}` in the given order.
    package static func properties(_ properties: KeyValuePairs<String, DBusValue>) -> DBusValue {
        .dictionary(
            keySignature: DBusSignature(trusted: "s"), valueSignature: DBusSignature(trusted: "v"),
            properties.map { DBusDictEntry(key: .string($0.key), value: .variant($0.value)) })
    }

    /// The value inside a variant (recursively), or the value itself.
    package var unwrappedVariant: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    package var asString: String? {
        if case .string(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asBool: Bool? {
        if case .boolean(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asByte: UInt8? {
        if case .byte(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asInt16: Int16? {
        if case .int16(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asUInt16: UInt16? {
        if case .uint16(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asInt32: Int32? {
        if case .int32(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asUInt32: UInt32? {
        if case .uint32(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asInt64: Int64? {
        if case .int64(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asUInt64: UInt64? {
        if case .uint64(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asDouble: Double? {
        if case .double(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asObjectPath: DBusObjectPath? {
        if case .objectPath(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asSignature: DBusSignature? {
        if case .signature(let value) = unwrappedVariant { return value }
        return nil
    }
    package var asFileDescriptor: DBusFileDescriptor? {
        if case .unixFD(let value) = unwrappedVariant { return value }
        return nil
    }

    /// `ay` as bytes.
    package var asBytes: [UInt8]? { unwrappedVariant.byteArray }

    /// The elements of any array (not of a dictionary); an `ay` gives `.byte` elements.
    package var asArray: [DBusValue]? {
        switch unwrappedVariant {
        case .array(_, let items): return items
        case .bytes(let bytes): return bytes.map { .byte($0) }
        default: return nil
        }
    }

    /// `as` as strings.
    package var asStrings: [String]? {
        guard let items = asArray else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for item in items {
            guard case .string(let string) = item else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// `ao` as paths.
    package var asObjectPaths: [DBusObjectPath]? {
        guard let items = asArray else { return nil }
        return items.compactMap(\.asObjectPath).count == items.count ? items.compactMap(\.asObjectPath) : nil
    }

    /// Members of a structure.
    package var asStructure: [DBusValue]? {
        if case .structure(let members) = unwrappedVariant { return members }
        return nil
    }

    /// Entries of any dictionary, in wire order.
    package var asDictionaryEntries: [DBusDictEntry]? {
        if case .dictionary(_, _, let entries) = unwrappedVariant { return entries }
        return nil
    }

    /// A dictionary with string keys (`a{sv}`, `a{sa{sv}}`, …); variant values are unwrapped one level.
    package var asDictionary: [String: DBusValue]? {
        guard case .dictionary(let key, _, let entries) = unwrappedVariant, key.rawValue == "s" else { return nil }
        var result: [String: DBusValue] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries {
            guard case .string(let name) = entry.key else { return nil }
            if case .variant(let inner) = entry.value {
                result[name] = inner
            } else {
                result[name] = entry.value
            }
        }
        return result
    }

    /// A dictionary with object path keys (`a{oa{sa{sv}}}` from GetManagedObjects).
    package var asObjectPathDictionary: [DBusObjectPath: DBusValue]? {
        guard case .dictionary(let key, _, let entries) = unwrappedVariant, key.rawValue == "o" else { return nil }
        var result: [DBusObjectPath: DBusValue] = [:]
        for entry in entries {
            guard case .objectPath(let path) = entry.key else { return nil }
            result[path] = entry.value
        }
        return result
    }
}

extension DBusValue {
    /// The value inside one variant level (for `Properties.Set`'s `v`).
    var unwrappedVariantOnce: DBusValue {
        if case .variant(let inner) = self { return inner }
        return self
    }
}
