/// Why a test fixture (daemon, broker, subprocess) could not be set up.
package struct FixtureError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}
