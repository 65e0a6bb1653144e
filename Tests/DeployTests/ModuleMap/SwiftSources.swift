import Foundation

/// The Swift files of a folder, each with its path relative to the repository root and its text:
/// what `SourceImports` and `PublicDeclarations` read.
struct SwiftSources {
    let files: [(relative: String, text: String)]

    init(folder: String, root: URL) throws {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
            throw ManifestError.unreadable("no folder \(folder)")
        }
        var files: [(relative: String, text: String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            files.append(
                (String(url.path.dropFirst(root.path.count + 1)), try String(contentsOf: url, encoding: .utf8)))
        }
        self.files = files
    }
}
