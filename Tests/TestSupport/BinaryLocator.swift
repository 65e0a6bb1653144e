import Foundation

/// Finds built executables (products of this package) for end-to-end tests.
package enum BinaryLocator {
    /// `BLEBRIDGE_BINARY` when set, else the `blebridge` beside the running test bundle
    /// (SwiftPM puts products and test bundles in the same build directory).
    package static func blebridge() throws -> String {
        try product("blebridge", overriddenBy: "BLEBRIDGE_BINARY")
    }

    /// The environment variable `variable` when set, else the executable product `name` beside
    /// the running test bundle.
    package static func product(_ name: String, overriddenBy variable: String? = nil) throws -> String {
        if let variable, let path = ProcessInfo.processInfo.environment[variable] { return path }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let hint = variable.map { " or set \($0)" } ?? ""
        throw FixtureError("\(name) binary not found next to the tests; run `swift build` first\(hint)")
    }
}
