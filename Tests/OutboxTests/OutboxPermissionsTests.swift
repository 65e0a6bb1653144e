import Foundation
import TestSupport
import Testing

@testable import Outbox

/// Issue 19, D13: outside systemd (no `UMask=0077`) the outbox was created 0644, readable by every user.
/// This in-process check proves the fix only when the tests run under a mask that leaves files
/// readable by others (022 usually; the process-wide mask is not changed here, other tests run
/// alongside): `OutboxModeEndToEndTests` starts the real binary under umask 022 itself.
@Suite struct OutboxPermissionsTests {
    @Test func aNewOutboxAndItsWALAreReadableByTheOwnerOnly() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox-mode")
        let path = directory.file("o.sqlite").path
        let store = try await OutboxStore(path: path)
        try await store.append(OutboxEntry(topic: "t", payload: [1], sampleTime: Date(), stream: "s"))
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
        }
    }

    /// An outbox made world-readable (by a version before the fix, or by hand) loses every user's
    /// access when it is opened; the group keeps what it had. Independent of the umask: the
    /// modes are set here.
    @Test func anExistingWorldReadableOutboxIsClosedToOthersAtOpen() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox-mode")
        let path = directory.file("o.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            try await store.append(OutboxEntry(topic: "t", payload: [1], sampleTime: Date(), stream: "s"))
            await store.close()
        }
        let files = [path, path + "-wal", path + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }
        for file in files { #expect(chmod(file, 0o644) == 0) }
        let lines = LogCapture(label: "outbox-mode-\(UUID().uuidString)")
        let store = try await OutboxStore(path: path, logger: lines.logger)
        #expect(await store.depth == 1)
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o640, "\(file): \(String(mode ?? 0, radix: 8))")
        }
        #expect(
            lines.captured.contains { $0.message.contains("readable by every user") },
            "\(lines.captured.map(\.message))")
        await store.close()
        // Opened again: nothing left to take away, nothing logged.
        let quiet = LogCapture(label: "outbox-mode-\(UUID().uuidString)")
        let again = try await OutboxStore(path: path, logger: quiet.logger)
        #expect(
            !quiet.captured.contains { $0.message.contains("readable by every user") },
            "\(quiet.captured.map(\.message))")
        await again.close()
    }
}
