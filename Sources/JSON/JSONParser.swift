/// The project's one strict RFC 8259 parser: command payloads, the configuration file, byte
/// layouts and simulator scenarios all go through it. It refuses what Foundation's
/// `JSONDecoder` lets pass or cannot place: duplicate keys, comments, trailing commas, invalid
/// UTF-8, lone surrogates, numbers no Swift type holds. A failure says what was expected, where
/// (byte offset, and line and column through ``Failure/location(in:)``) and at which key path.
/// Limits on nesting (and the callers' limits on size) keep a hostile payload from exhausting
/// the gateway.
public struct JSONParser: Sendable {
    /// What an integer beyond `Int64` becomes.
    public enum LargeIntegers: Sendable, Equatable {
        /// A `Double` (command payloads: a number is a number).
        case asDouble
        /// A ``Failure/Kind/numberOutOfRange`` failure (files decoded into Swift integers, where
        /// `JSONDecoder` would refuse it without saying where).
        case refused
    }

    /// How many objects and lists may be open at once.
    public var maximumDepth: Int
    public var largeIntegers: LargeIntegers

    public init(maximumDepth: Int = 16, largeIntegers: LargeIntegers = .asDouble) {
        self.maximumDepth = maximumDepth
        self.largeIntegers = largeIntegers
    }

    /// For files a person writes and Swift types decode (the configuration, scenarios, layouts):
    /// 64 levels deep, integers beyond `Int64` refused.
    public static let files = JSONParser(maximumDepth: 64, largeIntegers: .refused)

    public func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var cursor = Cursor(bytes: bytes, maximumDepth: maximumDepth, largeIntegers: largeIntegers)
        cursor.skipWhitespace()
        let value = try cursor.value(depth: 0)
        cursor.skipWhitespace()
        guard cursor.isAtEnd else {
            throw cursor.failure("unexpected \(cursor.describeCurrent()) after the end of the JSON value")
        }
        return value
    }

    public func parse(_ text: String) throws(Failure) -> JSONValue {
        try parse(Array(text.utf8))
    }
}
