import Foundation
import Outbox
import TestSupport
import Testing

/// An outbox the gateway's user cannot write is refused at start with what to fix: before, the
/// gateway started, connected, held every reading in memory and lost them all at SIGTERM (issue
/// 19's fault campaign, `make faults`, case outbox-read-only).
@Suite struct ReadOnlyOutboxTests {
    @Test func aWriteProtectedOutboxStopsTheStartWithWhatToFix() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ro-outbox-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("config.json")
        try Data(#"{"devices": []}"#.utf8).write(to: config)
        // A real outbox (schema, WAL mode) with its -wal and -shm files, as a gateway that is not
        // stopped cleanly leaves it: kept open here while the gateway starts.
        let outbox = directory.appendingPathComponent("outbox.sqlite")
        let store = try await OutboxStore(path: outbox.path)
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasPrefix("outbox") {
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o444], ofItemAtPath: directory.appendingPathComponent(file).path)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        // Root writes any file whatever its mode: run the gateway as nobody there, as a service
        // user without write access would be.
        let binary = try BinaryLocator.blebridge()
        let arguments = ["run", "-c", config.path, "--outbox", outbox.path, "--broker", "mqtt://127.0.0.1:1"]
        let result =
            getuid() == 0
            ? try await ChildProcess.run(
                "/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary] + arguments,
                timeout: .seconds(30))
            : try await ChildProcess.run(binary, arguments, timeout: .seconds(30))
        await store.close()
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("\(outbox.path) is read-only for this process (user "), "\(result.stderr)")
        #expect(result.stderr.contains("make the file and its directory writable by that user"), "\(result.stderr)")
    }
}
