import Foundation

/// The targets of `Package.swift` as written: name, kind, direct dependencies and source folder.
/// Read from the text (running `swift package dump-package` inside a test would contend for the
/// build directory's lock with the test run itself).
struct PackageManifest {
    enum Kind: String {
        case target, executableTarget, systemLibrary, testTarget
    }

    struct Target {
        let name: String
        let kind: Kind
        let dependencies: [String]
        /// The source folder, relative to the repository root.
        let path: String
    }

    let targets: [Target]
    /// The targets of the `.library` products: what another package (Fuzz/, a user of the BLE
    /// library) can import.
    let productTargets: Set<String>

    init(text: String) throws {
        productTargets = Set(
            text.matches(of: #/\.library\(\s*name:\s*"[^"]+",\s*targets:\s*\[([^\]]*)\]/#)
                .flatMap { $0.1.matches(of: #/"([^"]+)"/#).map { String($0.1) } })
        var targets: [Target] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: #/\.(target|executableTarget|systemLibrary|testTarget)\(/#) {
            let kindName = String(rest[open].dropFirst().dropLast())
            guard let kind = Kind(rawValue: kindName) else { throw ManifestError.unreadable(kindName) }
            let arguments = try Self.balancedArguments(rest[open.upperBound...])
            targets.append(try Self.target(kind: kind, arguments: arguments))
            rest = rest[arguments.endIndex...]
        }
        guard !targets.isEmpty else { throw ManifestError.unreadable("no targets found") }
        self.targets = targets
    }

    subscript(name: String) -> Target? { targets.first { $0.name == name } }

    /// The text up to the parenthesis that closes the call (string literals and comments skipped).
    private static func balancedArguments(_ text: Substring) throws -> Substring {
        var depth = 1
        var inString = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if inString {
                if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "/", text[index...].hasPrefix("//") {
                index = text[index...].firstIndex(of: "\n") ?? text.endIndex
                continue
            } else if character == "(" || character == "[" {
                depth += 1
            } else if character == ")" || character == "]" {
                depth -= 1
                if depth == 0 { return text[text.startIndex..<index] }
            }
            index = text.index(after: index)
        }
        throw ManifestError.unreadable("unbalanced parentheses")
    }

    private static func target(kind: Kind, arguments: Substring) throws -> Target {
        guard let name = arguments.firstMatch(of: #/name:\s*"([^"]+)"/#)?.1 else {
            throw ManifestError.unreadable("a target without a name")
        }
        var dependencies: [String] = []
        if let list = arguments.firstMatch(of: #/dependencies:\s*\[([^\]]*)\]/#)?.1 {
            dependencies = list.matches(of: #/"([^"]+)"/#).map { String($0.1) }
        }
        let path =
            arguments.firstMatch(of: #/path:\s*"([^"]+)"/#).map { String($0.1) }
            ?? (kind == .testTarget ? "Tests/\(name)" : "Sources/\(name)")
        return Target(name: String(name), kind: kind, dependencies: dependencies, path: path)
    }
}

enum ManifestError: Error {
    case unreadable(String)
}
