/// Why a test fixture (daemon, broker, subprocess) could not be set up.
public struct FixtureError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
