import Foundation
import TestSupport
import Testing

/// Every command's options three ways: what its source parses (`arguments.option("…")`,
/// `arguments.flag("…")`), what its `--help` lists (synopsis and option lines), and what the
/// manual page (deploy/debian/blebridge.1) documents. Each list must match the others.
@Suite struct HelpConsistencyTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    struct Option: Hashable, CustomStringConvertible {
        var long: String
        var short: String?
        var description: String { short.map { "-\($0)/--\(long)" } ?? "--\(long)" }
    }

    /// The commands listed by `blebridge --help`.
    static func commandNames() async throws -> [String] {
        let result = try await ChildProcess.run(try BinaryLocator.blebridge(), ["--help"], timeout: .seconds(20))
        let section = result.stdout.components(separatedBy: "Commands:\n").last?.components(separatedBy: "\n\n").first
        return (section ?? "").split(separator: "\n").compactMap { line in
            let name = line.split(separator: " ").first.map(String.init)
            return name == "help" ? nil : name
        }
    }

    /// The options the command's source file parses.
    static func parsedOptions(of command: String) throws -> Set<Option> {
        let directory = root.appendingPathComponent("Sources/blebridge/Commands")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".swift")
        }
        let source = try files.map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
            .first { $0.contains("static let name = \"\(command)\"") }
        let text = try #require(source, "no source file declares the command \(command)")
        let pattern = try NSRegularExpression(
            pattern: #"\.(?:options?|flag)\(\s*"([a-z-]+)"(?:,\s*short:\s*"([a-z])")?"#)
        let matches = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
        return Set(
            matches.map { match in
                let long = String(text[Range(match.range(at: 1), in: text)!])
                let short = Range(match.range(at: 2), in: text).map { String(text[$0]) }
                return Option(long: long, short: short)
            })
    }

    @Test func everyCommandsHelpSourceAndManualPageAgree() async throws {
        let names = try await Self.commandNames()
        #expect(names.count >= 6, "\(names)")
        let manual = try String(
            contentsOf: Self.root.appendingPathComponent("deploy/debian/blebridge.1"), encoding: .utf8
        )
        .replacingOccurrences(of: "\\-", with: "-")
        for name in names {
            let parsed = try Self.parsedOptions(of: name)
            let help = try await ChildProcess.run(
                try BinaryLocator.blebridge(), [name, "--help"], timeout: .seconds(20)
            ).stdout
            let synopsis = help.components(separatedBy: "\n\n").first ?? ""
            let optionLines = help.split(separator: "\n").filter { $0.hasPrefix("  -") }.map(String.init)
            for option in parsed {
                #expect(
                    synopsis.contains("[options]") || synopsis.contains("--\(option.long)")
                        || option.short.map { synopsis.contains("-\($0) ") } == true,
                    "\(name): \(option) is missing from the synopsis:\n\(synopsis)")
                let line = optionLines.first { $0.range(of: "--\(option.long)\\b", options: .regularExpression) != nil }
                #expect(line != nil, "\(name): \(option) has no line in --help")
                if let short = option.short {
                    #expect(line?.contains("-\(short), --\(option.long)") == true, "\(name): -\(short) not in its line")
                }
            }
            // Every option line names something the command parses.
            let listed = Set(
                optionLines.compactMap { line -> String? in
                    guard let range = line.range(of: #"--[a-z-]+"#, options: .regularExpression) else { return nil }
                    return String(line[range].dropFirst(2))
                })
            #expect(listed == Set(parsed.map(\.long)), "\(name): --help lists \(listed.sorted()), parses \(parsed)")
            #expect(help.contains("Exit status:"), "\(name): --help has no exit-status section")
            // The manual page's entry for the command, up to its `.RE`.
            let entry = manual.components(separatedBy: ".TP\n.B \(name)").dropFirst().first?
                .components(separatedBy: ".RE").first
            let documented = try #require(entry, "\(name) has no entry in the manual page")
            let manualOptions = Set(
                documented.matches(of: /--([a-z-]+)/).map { String($0.1) })
            #expect(
                manualOptions == Set(parsed.map(\.long)), "\(name): the manual page lists \(manualOptions.sorted())")
            for option in parsed where option.short != nil {
                #expect(
                    documented.contains("-\(option.short!), --\(option.long)"),
                    "\(name): manual page lacks -\(option.short!)")
            }
        }
    }

    @Test func theGlobalOptionsAreInTheManualPage() throws {
        let manual = try String(
            contentsOf: Self.root.appendingPathComponent("deploy/debian/blebridge.1"), encoding: .utf8
        )
        .replacingOccurrences(of: "\\-", with: "-")
        for option in ["-h, --help", "--version", "--log-level"] { #expect(manual.contains(option)) }
    }
}
