/// One libFuzzer input as bytes, with the splits the harnesses share.
public struct FuzzInput: Sendable {
    public let bytes: [UInt8]

    /// Copies libFuzzer's buffer (`data` may be nil when `size` is 0).
    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        if let data, size > 0 {
            bytes = Array(UnsafeBufferPointer(start: data, count: size))
        } else {
            bytes = []
        }
    }

    /// The first byte (a selector among variants) and the rest; nil for an empty input.
    public var selectorAndRest: (selector: UInt8, rest: [UInt8])? {
        guard let first = bytes.first else { return nil }
        return (first, Array(bytes.dropFirst()))
    }

    /// The bytes before the first NUL and those after it (all bytes and nothing without a NUL):
    /// topic and payload, layout and value, signature and body.
    public var splitAtNUL: (head: [UInt8], tail: [UInt8]) {
        guard let index = bytes.firstIndex(of: 0) else { return (bytes, []) }
        return (Array(bytes[..<index]), Array(bytes[(index + 1)...]))
    }
}
