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
}
