import Configuration
import Foundation
import TestSupport
import Testing

/// `docs/config.schema.json` (for editors) agrees with the loader: the sample passes both, and
/// typical mistakes fail both. Validation uses Python's `jsonschema` (Debian `python3-jsonschema`).
@Suite struct SchemaTests {
    static let validator = """
        import json, sys
        from jsonschema import Draft202012Validator
        schema = json.load(open(sys.argv[1]))
        Draft202012Validator.check_schema(schema)
        invalid = 0
        for path in sys.argv[2:]:
            errors = list(Draft202012Validator(schema).iter_errors(json.load(open(path))))
            for error in errors:
                print(path + ":", "/".join(str(p) for p in error.absolute_path), error.message)
            invalid += 1 if errors else 0
        sys.exit(1 if invalid else 0)
        """

    /// Exit status of the schema validator for `files` (0: all valid); each problem is printed as
    /// `<file>: <path> <message>`.
    private func schemaStatus(_ files: String...) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run(
            "/usr/bin/python3", ["-c", Self.validator, RepositoryFiles.schema] + files, timeout: .seconds(30))
        #expect(!result.stderr.contains("Traceback"), "\(result.stderr)")
        return (result.status, result.stdout + result.stderr)
    }

    @Test func theSampleConfigurationPassesTheLoaderAndTheSchema() async throws {
        #expect(throws: Never.self) { try ConfigurationLoader().load(path: RepositoryFiles.sampleConfiguration) }
        let result = try await schemaStatus(RepositoryFiles.sampleConfiguration)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(arguments: [
        #"{"mqtt": {"qos": 1, "retain_all": true}}"#,
        #"{"bluetooth": {"max_connections": "five"}}"#,
        #"{"outbox": {"max_age": "7 days"}}"#,
        #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "subscribe": [{"characteristic": "2a37x"}]}]}"#,
        #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "subscribe": [{"characteristic": "2a19", "mode": "read"}]}]}"#,
        #"{"devices": [{"id": "a", "match": {}}]}"#,
        #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "passkey": 1000000}]}"#,
        #"{"mqtt": {"url": "http://broker"}}"#,
        #"{"commands": {"rate_limit": "fast"}}"#,
        #"{"commands": {"raw_gatt": {"allow": [{"device": "a", "characteristic": "2a19", "service": "18", "operations": ["read"]}]}}}"#,
    ])
    func mistakesFailBothTheLoaderAndTheSchema(_ json: String) async throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("bad.json", json)
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader().load(path: file.path) }
        let result = try await schemaStatus(file.path)
        #expect(result.status == 1, "\(result.output)")
    }

    /// Layouts on a subscription, an advertisement and a command pass both; layout mistakes fail
    /// both. One validator run for all the files.
    @Test func layoutsAgreeBetweenTheLoaderAndTheSchema() async throws {
        let layout =
            #"{"name": "lamp", "fields": [{"name": "power", "type": "uint8"}, {"type": "bits", "length": 1, "bits": [{"name": "on", "shift": 0}]}, {"type": "skip", "length": 1}, {"name": "label", "type": "utf8"}]}"#
        let good = #"""
            {"devices": [
              {"id": "lamp", "match": {"name_prefix": "Lamp"},
               "subscribe": [{"characteristic": "ff01", "layout": \#(layout)}],
               "commands": [{"name": "lamp", "characteristic": "ff02", "operations": ["read", "write"], "layout": \#(layout)}]},
              {"id": "tag", "match": {"name_prefix": "Tag"}, "advertisement": {"layout": \#(layout), "manufacturer_id": 1177}}]}
            """#
        let mistakes = [
            #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "subscribe": [{"characteristic": "ff01", "layout": {"fields": [{"name": "v", "type": "uint12"}]}}]}]}"#,
            #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "advertisement": {"layout": {"fields": [{"name": "v", "type": "uint8"}]}}}]}"#,
            #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "commands": [{"name": "x", "characteristic": "ff02", "layout": {"fields": [{"name": "v", "type": "uint8", "scale": 0}]}}]}]}"#,
        ]
        let directory = try TemporaryDirectory()
        let goodFile = try directory.write("layouts.json", good).path
        #expect(throws: Never.self) { try ConfigurationLoader().load(path: goodFile) }
        var badFiles: [String] = []
        for (index, json) in mistakes.enumerated() {
            let file = try directory.write("bad\(index).json", json).path
            #expect(throws: ConfigurationError.self) { try ConfigurationLoader().load(path: file) }
            badFiles.append(file)
        }
        let result = try await schemaStatus(goodFile, badFiles[0], badFiles[1], badFiles[2])
        #expect(result.status == 1)
        #expect(!result.output.contains(goodFile + ":"), "\(result.output)")
        for file in badFiles {
            #expect(result.output.contains(file + ":"), "the schema accepts \(file): \(result.output)")
        }
    }
}
