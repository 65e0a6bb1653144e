/// bluetoothd's release, as `bluetoothd --version` prints it (`5.66`): what its advertisement
/// monitors compare a pattern with changed in 5.69 and 5.71 (docs/configuration.md, "What each
/// version gives"), and BlueZ does not say its version on D-Bus (``BluetoothdVersionProbe``).
public struct BluetoothdVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let major: Int
    public let minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// The first line of `bluetoothd --version`: `major.minor` (a further `.patch` is ignored),
    /// surrounding white space allowed; nil for anything else.
    public init?(parsing text: String) {
        guard let line = text.split(whereSeparator: \.isNewline).first else { return nil }
        let words = line.split(whereSeparator: \.isWhitespace)
        guard words.count == 1 else { return nil }
        let parts = words[0].split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) && $0.count <= 4 }),
            let major = Int(parts[0]), let minor = Int(parts[1])
        else { return nil }
        self.init(major: major, minor: minor)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    public var description: String { "\(major).\(minor)" }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
