import Foundation

/// Finds the built `blebridge` executable for end-to-end tests.
public enum BinaryLocator {
    /// `BLEBRIDGE_BINARY` when set, else the `blebridge` beside the running test bundle
    /// (SwiftPM puts products and test bundles in the same build directory).
    public static func blebridge() throws -> String {
        if let path = ProcessInfo.processInfo.environment["BLEBRIDGE_BINARY"] { return path }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("blebridge").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw FixtureError(
            "blebridge binary not found next to the tests; run `swift build` first or set BLEBRIDGE_BINARY")
    }
}
