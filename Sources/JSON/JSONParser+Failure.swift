extension JSONParser {
    /// Why a text is not acceptable JSON: what, where (byte offset) and at which key path.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable, Equatable {
            /// Not JSON (RFC 8259).
            case syntax
            /// An object holds the same key twice: `offset` is where the second one starts and
            /// `path` ends with it.
            case duplicateKey
            /// A number beyond `Double`'s range, or (``LargeIntegers/refused``) an integer beyond
            /// `Int64`'s: `offset` is where the number starts.
            case numberOutOfRange
            /// More objects and lists open at once than ``JSONParser/maximumDepth``.
            case tooDeep
        }

        public var kind: Kind
        public var offset: Int
        /// A sentence saying what was found and what was expected.
        public var reason: String
        /// The keys and indices leading to the failing value (empty at the top level).
        public var path: [JSONKey]

        public init(_ kind: Kind = .syntax, offset: Int, reason: String, path: [JSONKey] = []) {
            self.kind = kind
            self.offset = offset
            self.reason = reason
            self.path = path
        }

        public var description: String { "\(reason) at byte \(offset)" }

        /// Where the failure is in `bytes` (the text that was parsed): 1-based line, and 1-based
        /// column counted in characters (a multi-byte UTF-8 character is one column).
        public func location(in bytes: [UInt8]) -> (line: Int, column: Int) {
            var line = 1
            var column = 1
            for byte in bytes.prefix(offset) {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            return (line, column)
        }
    }
}
