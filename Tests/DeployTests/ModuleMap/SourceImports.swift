import Foundation

/// The modules a folder of Swift sources imports, with the access level each import is written with.
struct SourceImports {
    struct Import: Hashable {
        let module: String
        /// `internal`, `private`, `fileprivate`, `package`, `public`, or nil when none is written.
        let access: String?
        /// The file, relative to the repository root.
        let file: String
    }

    let imports: [Import]

    init(folder: String, root: URL) throws {
        var imports: [Import] = []
        for (relative, text) in try SwiftSources(folder: folder, root: root).files {
            for line in text.split(separator: "\n") where line.contains("import ") {
                if let found = Self.parse(line) {
                    imports.append(Import(module: found.module, access: found.access, file: relative))
                }
            }
        }
        self.imports = imports
    }

    var modules: Set<String> { Set(imports.map(\.module)) }

    private static let accessLevels: Set<Substring> = ["public", "internal", "package", "private", "fileprivate"]
    private static let importKinds: Set<Substring> = [
        "struct", "class", "enum", "func", "protocol", "typealias", "var", "let",
    ]

    /// An import declaration's module and access level (word by word: a regular expression over
    /// every line of the tree took minutes in a debug build).
    static func parse(_ line: Substring) -> (module: String, access: String?)? {
        let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        var words = code.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
        var access: String?
        if let first = words.first, accessLevels.contains(first) {
            access = String(first)
            words = words.dropFirst()
        }
        guard words.first == "import" else { return nil }
        words = words.dropFirst()
        if let first = words.first, importKinds.contains(first) { words = words.dropFirst() }
        guard let path = words.first, words.count == 1 else { return nil }
        let module = path.split(separator: ".").first.map(String.init) ?? ""
        guard !module.isEmpty, module.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        return (module, access)
    }
}
