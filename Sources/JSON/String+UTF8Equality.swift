extension String {
    /// Whether `other` is the same text byte for byte (the same Unicode scalars): how JSON keys and
    /// MQTT topics are compared. `==` compares canonical equivalence instead, which normalizes
    /// both sides when either is not ASCII: a key of one letter and thousands of combining accents
    /// (one character) took 0.3-0.5 ms per comparison that way, a dozen of them per command
    /// (issue 19). This costs one pass over the bytes at most, none when the lengths differ.
    package func utf8Equals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && utf8.elementsEqual(other.utf8)
    }

    /// Whether the text starts with `prefix` byte for byte (`hasPrefix` compares characters,
    /// canonically: `/` followed by a combining accent is not `/` there).
    package func utf8HasPrefix(_ prefix: String) -> Bool {
        utf8.count >= prefix.utf8.count && utf8.starts(with: prefix.utf8)
    }
}
