/// A layout that cannot work: `path` names the part (`fields[2].length`, `fields[0].bits[1]`),
/// relative to the layout object, so that a configuration can prefix its own key path.
public struct ByteLayoutError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
