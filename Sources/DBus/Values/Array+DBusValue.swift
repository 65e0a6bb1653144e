extension [DBusValue] {
    /// The concatenated signature of a list of arguments.
    package var dbusSignature: DBusSignature {
        DBusSignature(trusted: map(\.signature.rawValue).joined())
    }
}

extension [DBusValue] {
    /// Decodes argument `index` into `type`, with the position in the error message.
    package func decode<T: DBusRepresentable>(_ index: Int, as type: T.Type = T.self) throws(DBusError) -> T {
        guard indices.contains(index) else {
            throw DBusError(.invalidArgs, "argument \(index) missing: got \(count) arguments ('\(dbusSignature)')")
        }
        do {
            return try self[index].decode(as: type)
        } catch {
            throw DBusError(error.name, "argument \(index): \(error.message)")
        }
    }
}
