import JSON

extension Dictionary where Key == String {
    /// The value whose key is `key` byte for byte (``Swift/String/utf8Equals(_:)``), at a cost
    /// linear in `key`'s bytes. A subscript with a non-ASCII key normalizes it to hash it (and to
    /// compare it, canonically): a device id or field name of one letter and thousands of
    /// combining accents took ~0.5 ms a lookup that way (issue 19). Such a key is compared with
    /// each key instead, by length first; an ASCII key is hashed as usual (its bytes).
    func value(exactly key: String) -> Value? {
        guard key.utf8.allSatisfy({ $0 < 0x80 }) else {
            return first { $0.key.utf8Equals(key) }?.value
        }
        guard let index = index(forKey: key), self[index].key.utf8Equals(key) else { return nil }
        return self[index].value
    }
}
