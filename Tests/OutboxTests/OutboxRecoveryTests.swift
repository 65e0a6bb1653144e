import Foundation
import Logging
import TestSupport
import Testing

@testable import Outbox

@Suite(.serialized) struct OutboxRecoveryTests {
    private func asideFiles(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".corrupt-") }
    }

    @Test func aFileThatIsNotADatabaseIsMovedAsideAndAFreshQueueStarts() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = try directory.write("o.sqlite", String(repeating: "garbage!", count: 1000)).path
        let capture = LogCapture(label: "outbox-recovery-\(UUID().uuidString)")
        let store = try await OutboxStore(path: path, logger: capture.logger)
        let aside = try #require(await store.recoveredCorruptFile)
        #expect(aside.hasPrefix(path + ".corrupt-"))
        #expect(aside.range(of: #"\.corrupt-\d{8}T\d{6}Z$"#, options: .regularExpression) != nil)
        #expect(try String(contentsOfFile: aside, encoding: .utf8).hasPrefix("garbage!"))
        #expect(try asideFiles(in: directory).count == 1)
        let errors = capture.captured.filter { $0.level == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("CORRUPT") == true)
        #expect(errors.first?.metadata.contains { $0.0 == "moved_to" && $0.1 == aside } == true)
        try await store.append(reading("dev", 1))
        #expect(try await store.stats().depth == 1)
    }

    @Test func aDamagedPageIsFoundByTheCheckAndRepaired() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            let payload = [UInt8](repeating: 0x41, count: 300)
            try await store.append(
                (0..<2000).map { OutboxEntry(topic: "t/\($0)", payload: payload, sampleTime: Date(), stream: "dev") })
            await store.close()
        }
        // Overwrite a few interior pages (the header page stays intact).
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 4096 * 20)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 4096 * 4))
        try handle.close()

        let capture = LogCapture(label: "outbox-recovery-\(UUID().uuidString)")
        let store = try await OutboxStore(path: path, logger: capture.logger)
        #expect(await store.recoveredCorruptFile != nil)
        #expect(try await store.stats().depth == 0)
        #expect(capture.captured.contains { $0.level == .error })
    }

    @Test func aSoundFileIsLeftAlone() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            try await store.append(reading("dev", 1))
        }
        let store = try await OutboxStore(path: path)
        #expect(await store.recoveredCorruptFile == nil)
        #expect(try await store.stats().depth == 1)
        #expect(try asideFiles(in: directory).isEmpty)
    }
}
