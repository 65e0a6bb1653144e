import Foundation
import Testing

/// The module graph is what Package.swift declares, the sources import exactly that, C libraries
/// stay in their wrappers, the layers do not reach across, and docs/architecture.md shows the graph
/// as it is.
@Suite struct ModuleMapTests {
    let manifest: PackageManifest
    let imports: [String: SourceImports]

    /// Which module may import each C library (the house rule: C interop lives only in the wrapper
    /// that owns it).
    static let cLibraryOwners: [String: Set<String>] = [
        "CDBus": ["DBus"], "CMosquitto": ["MQTT"], "CSQLite": ["Outbox"], "CCrypto": ["Decoders", "MQTT"],
        "CEpoll": ["EventLoop"], "CMalloc": ["ProcessMemory"], "CTaskPool": ["TaskPool"],
    ]

    /// Direct dependencies that would undo the layering (issue 20): the gateway talks to BlueZ, not
    /// to D-Bus; the simulator does not read the gateway's configuration; the pure leaves stay pure.
    static let forbiddenEdges: [(from: String, to: String)] = [
        ("Gateway", "DBus"), ("BlueZSimulator", "Configuration"), ("BlueZSimulator", "Gateway"),
        ("Bluetooth", "DBus"), ("Decoders", "Gateway"), ("Decoders", "BlueZ"), ("Configuration", "Gateway"),
        ("Publisher", "Gateway"), ("Outbox", "MQTT"), ("MQTT", "Outbox"),
    ]

    /// The files of modules that are no product which still declare something `public`, and why:
    /// a product's public API (docs/ble-library.md) shows their types.
    static let publicOutsideProducts: [String: String] = [
        "Sources/Timekeeping/BridgeClock.swift": "`CentralManager.Options.clock` is `any BridgeClock`",
        "Sources/Timekeeping/SystemClock.swift": "`SystemClock()` is the default of `CentralManager.Options.clock`",
    ]

    /// Read once for all the tests of the suite.
    private static let tree: Result<(PackageManifest, [String: SourceImports]), any Error> = Result {
        let root = RepositoryPaths.root
        let manifest = try PackageManifest(
            text: String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8))
        var imports: [String: SourceImports] = [:]
        for target in manifest.targets where target.kind != .systemLibrary {
            imports[target.name] = try SourceImports(folder: target.path, root: root)
        }
        return (manifest, imports)
    }

    init() throws {
        (manifest, imports) = try Self.tree.get()
    }

    var projectModules: Set<String> { Set(manifest.targets.map(\.name)) }

    /// A module imported only through another's dependencies builds by luck of order, and is not
    /// rebuilt when it changes: every project module a target imports is a direct dependency.
    @Test func everyImportedModuleIsADeclaredDependency() {
        for target in manifest.targets where target.kind != .systemLibrary {
            let undeclared = (imports[target.name]?.modules ?? []).intersection(projectModules)
                .subtracting(target.dependencies).subtracting([target.name])
            #expect(undeclared.isEmpty, "\(target.name) imports \(undeclared.sorted()) without declaring them")
        }
    }

    /// The declared graph is the real one: a source module's dependencies are all imported.
    @Test func everyDeclaredDependencyOfASourceModuleIsImported() {
        for target in manifest.targets where target.kind == .target || target.kind == .executableTarget {
            let unused = Set(target.dependencies).subtracting(imports[target.name]?.modules ?? [])
            #expect(unused.isEmpty, "\(target.name) declares \(unused.sorted()) but imports none of them")
        }
    }

    @Test func cLibrariesAreImportedOnlyByTheirWrappersAndOnlyInternally() {
        for (name, found) in imports {
            for use in found.imports {
                guard let owners = Self.cLibraryOwners[use.module] else { continue }
                let isTest = manifest[name]?.kind == .testTarget
                #expect(
                    owners.contains(name) || isTest, "\(use.file) imports \(use.module), owned by \(owners.sorted())")
                if !isTest {
                    #expect(
                        use.access == "internal" || use.access == "private" || use.access == "fileprivate",
                        "\(use.file) imports \(use.module) without `internal`: its C types could leak into the API")
                }
            }
        }
        // System libraries, and C source targets (`CTaskPool`: C, no Swift file).
        let known = Set(manifest.targets.filter { $0.kind == .systemLibrary || $0.name == "CTaskPool" }.map(\.name))
        #expect(known == Set(Self.cLibraryOwners.keys), "a C library without an owner rule here: \(known.sorted())")
    }

    @Test func layersDoNotReachAcross() {
        for edge in Self.forbiddenEdges {
            let declared = manifest[edge.from]?.dependencies.contains(edge.to) ?? false
            let imported = imports[edge.from]?.modules.contains(edge.to) ?? false
            #expect(!declared && !imported, "\(edge.from) must not depend on \(edge.to)")
        }
    }

    /// docs/architecture.md carries the graph between its markers, exactly as Package.swift has it;
    /// on a mismatch the expected text is printed to paste.
    @Test func architectureDocumentShowsTheModuleGraph() throws {
        let document = try String(contentsOfFile: RepositoryPaths.file("docs/architecture.md"), encoding: .utf8)
        let begin = "<!-- module-graph:begin (generated; ModuleMapTests checks it) -->\n"
        let end = "<!-- module-graph:end -->"
        let start = try #require(document.range(of: begin), "docs/architecture.md has no module-graph markers")
        let stop = try #require(document.range(of: end, range: start.upperBound..<document.endIndex))
        let shown = String(document[start.upperBound..<stop.lowerBound])
        let expected = moduleGraphTable()
        #expect(shown == expected, "docs/architecture.md's module graph drifted; expected:\n\(expected)")
    }

    /// The library modules with their direct dependencies, in Package.swift's order.
    func moduleGraphTable() -> String {
        var lines = ["| module | depends on |", "|---|---|"]
        for target in manifest.targets where target.kind == .target || target.name == "blebridge" {
            let dependencies = target.dependencies.map { "`\($0)`" }.joined(separator: ", ")
            lines.append("| `\(target.name)` | \(dependencies.isEmpty ? "—" : dependencies) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every module of the graph has a row in the module map that says what it is for.
    @Test func moduleMapHasARowForEveryModule() throws {
        let document = try String(contentsOfFile: RepositoryPaths.file("docs/architecture.md"), encoding: .utf8)
        let mapStart = try #require(document.range(of: "## Module map"))
        let table = document[mapStart.upperBound...].split(separator: "\n").prefix { !$0.hasPrefix("## ") }
        let firstColumns = table.filter { $0.hasPrefix("| `") }.map { $0.split(separator: "|").first ?? "" }
        let named = Set(firstColumns.flatMap { $0.matches(of: #/`([^`]+)`/#).map { String($0.1) } })
        for target in manifest.targets
        where target.kind != .testTarget && !target.path.hasPrefix("Sources/Benchmarks")
            && !target.path.hasPrefix("Sources/Tools")
        {
            #expect(
                named.contains(target.name) || named.contains(target.path),
                "docs/architecture.md's module map has no row for \(target.name)")
        }
    }

    /// `public` is for other packages (Fuzz/'s harnesses, users of the BLE library) and only the
    /// library products have any: what only sibling targets use is `package` (issue 20). A module
    /// that is no product (and every executable, test and fixture target) declares nothing
    /// `public`, except where a product's public API shows one of its types (listed above).
    @Test func onlyProductsDeclarePublic() throws {
        var found: [String] = []
        var listedFiles: Set<String> = []
        for target in manifest.targets
        where target.kind != .systemLibrary && !manifest.productTargets.contains(target.name) {
            let declarations = try PublicDeclarations(folder: target.path, root: RepositoryPaths.root)
            listedFiles.formUnion(declarations.files.intersection(Self.publicOutsideProducts.keys))
            found += declarations.locations.filter { location in
                !Self.publicOutsideProducts.keys.contains { location.hasPrefix($0 + ":") }
            }
        }
        #expect(!manifest.productTargets.isEmpty, "no .library products read from Package.swift")
        #expect(found.isEmpty, "`public` outside the library products (make it `package`): \(found)")
        let stale = Set(Self.publicOutsideProducts.keys).subtracting(listedFiles)
        #expect(stale.isEmpty, "listed as public but declaring nothing public any more: \(stale.sorted())")
    }

    /// The pure model knows no BlueZ or D-Bus error name: mapping `org.bluez.Error.*` and
    /// `org.freedesktop.DBus.Error.*` to `BluetoothError` codes is the BlueZ layer's job (issue 20).
    /// Comments may name them; code may not.
    @Test func thePureModelMapsNoBlueZErrorNames() throws {
        let folder = RepositoryPaths.root.appendingPathComponent("Sources/Bluetooth")
        let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
        var found: [String] = []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                && (line.contains("org.bluez.Error") || line.contains("org.freedesktop.DBus.Error"))
            {
                found.append("Sources/Bluetooth/\(file):\(number + 1)")
            }
        }
        #expect(found.isEmpty, "BlueZ or D-Bus error names in the pure model: \(found)")
    }
}
