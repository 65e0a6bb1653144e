import Foundation

/// The declarations and imports of a folder of Swift sources written with the `public` modifier,
/// as `file:line`. Word by word, as `SourceImports` reads imports: attributes (`@inlinable`,
/// `@available(…)`) and other modifiers (`final`, `static`, `nonisolated`, …) may come first.
/// Comments are skipped; `.public` (an enum case) and "public" in text are not declarations.
struct PublicDeclarations {
    /// Relative to the repository root, as `path:line`.
    let locations: [String]
    /// The files holding them, relative to the repository root.
    var files: Set<String> { Set(locations.map { String($0[..<($0.lastIndex(of: ":") ?? $0.endIndex)]) }) }

    init(folder: String, root: URL) throws {
        var locations: [String] = []
        for (relative, text) in try SwiftSources(folder: folder, root: root).files {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where line.contains("public") && Self.declaresPublic(line) {
                locations.append("\(relative):\(index + 1)")
            }
        }
        self.locations = locations.sorted()
    }

    private static let modifiers: Set<Substring> = [
        "final", "static", "class", "nonisolated", "override", "convenience", "required", "indirect", "mutating",
        "nonmutating", "dynamic", "lazy", "weak", "unowned", "optional", "distributed",
    ]

    /// Whether the line's declaration (or import) is written `public`.
    static func declaresPublic(_ line: Substring) -> Bool {
        let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        var words = code.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        var openParentheses = 0
        while let first = words.first {
            if openParentheses > 0 || first.hasPrefix("@") {
                openParentheses += first.filter { $0 == "(" }.count - first.filter { $0 == ")" }.count
            } else if !modifiers.contains(first) {
                break
            }
            words = words.dropFirst()
        }
        return words.first == "public" || words.first?.hasPrefix("public(") == true
    }
}
