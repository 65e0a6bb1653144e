import Foundation
import TestSupport
import Testing

/// Issue 19, D13: outside systemd (no `UMask=0077`) the outbox was created 0644, readable by every
/// user. The real binary, started under umask 022 (set for it here, so the check does not depend on
/// the mask the tests run under: under 077 every file is private anyway), creates its outbox, WAL
/// and shared-memory files 0600.
@Suite(.serialized) struct OutboxModeEndToEndTests {
    @Test func theGatewayCreatesItsOutboxForItsOwnerOnlyUnderUmask022() async throws {
        let bus = try await DBusDaemonFixture()
        let broker = try await MosquittoFixture()
        let gateway = try GatewayProcess(brokerURL: broker.url, busAddress: bus.address, umask: "022")
        let started = await gateway.process.waitForOutput(timeout: .seconds(30), stream: \.standardError) {
            $0.contains("MQTT connected")
        }
        #expect(started, "log: \(gateway.log.suffix(2000))")
        let status = try String(contentsOfFile: "/proc/\(gateway.process.processIdentifier)/status", encoding: .utf8)
        #expect(status.contains("Umask:\t0022"), "the gateway's mask: \(status.prefix(400))")
        for file in [gateway.outboxPath, gateway.outboxPath + "-wal", gateway.outboxPath + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
        }
        await gateway.process.stop()
        await broker.stop()
        await bus.stop()
    }
}
