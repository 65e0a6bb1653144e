import Foundation

/// Paths of files in the repository, found from this source file's location.
enum RepositoryFiles {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var sampleConfiguration: String { root.appendingPathComponent("config.json").path }
    static var schema: String { root.appendingPathComponent("docs/config.schema.json").path }
}
