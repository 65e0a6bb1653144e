import Foundation

/// Files of the repository, found from this source file.
enum RepositoryPaths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func file(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}
