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
        errors = list(Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
        for error in errors:
            print("/".join(str(p) for p in error.absolute_path), error.message)
        sys.exit(1 if errors else 0)
        """

    /// Exit status of the schema validator for `file` (0: valid).
    private func schemaStatus(_ file: String) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run(
            "/usr/bin/python3", ["-c", Self.validator, RepositoryFiles.schema, file], timeout: .seconds(30))
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
        #"{"mqtt": {"url": "http://broker"}}"#,
        #"{"commands": {"rate_limit": "fast"}}"#,
    ])
    func mistakesFailBothTheLoaderAndTheSchema(_ json: String) async throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("bad.json", json)
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader().load(path: file.path) }
        let result = try await schemaStatus(file.path)
        #expect(result.status == 1, "\(result.output)")
    }
}
