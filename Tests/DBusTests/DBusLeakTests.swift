import DBus
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// 100,000 operations (50,000 method calls through our server and 50,000 BlueZ-shaped signals)
/// leave the process's resident memory flat. Measured in a process of its own (``OwnProcess``):
/// in the shared test process, other tests' allocations showed up as 16 MiB of growth.
///
/// The child's bounds are hang guards, not figures the test checks. Alone it costs 11.1 s of CPU
/// (10.16 s user, 0.95 s system, dbus-daemon included), so its wall time grows with the load of
/// the 2-core machine: 98 s at a load of 27, and over the former 150 s (3 minutes for the test)
/// at a load of 36 with the rest of the suite beside it (`make stress`, 2026-12-02). 600 s is four
/// times that and still ends a hang.
@Suite(.serialized, .timeLimit(.minutes(11))) struct DBusLeakTests {
    /// Resident set size in bytes, from /proc/self/statm (second field, in pages).
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static let calls = 50_000
    static let signals = 50_000
    /// A leak of 64 bytes per operation would add 6.1 MiB over 100,000 operations.
    static let tolerance = 6 * 1024 * 1024

    @Test func hundredThousandCallsAndSignalsKeepMemoryFlat() async throws {
        guard OwnProcess.isChild else {
            let child = try await OwnProcess.run(
                filter: "DBusLeakTests/hundredThousandCallsAndSignalsKeepMemoryFlat", timeout: .seconds(600))
            #expect(child.status == 0, "alone in its own process:\n\(child.stdout)\(child.stderr)")
            let measured = child.stdout.split(separator: "\n").first { $0.hasPrefix("DBus leak test:") }
            #expect(measured != nil, "the child ran no measurement:\n\(child.stdout)\(child.stderr)")
            print(measured ?? "")
            return
        }
        try await withBus { bus in
            let server = try await bus.connect()
            try await server.export(
                path: "/leak",
                interfaces: [
                    DBusInterface(
                        name: "io.blebridge.Leak1",
                        methods: [
                            DBusMethod(name: "Echo", inSignature: "ua{sv}", outSignature: "u") { call in
                                [call.arguments[0]]
                            }
                        ])
                ])
            let client = try await bus.connect()
            let emitter = try await bus.connect()
            let listener = try await bus.connect()
            let stream = try await listener.signals(
                matching: .propertiesChanged(sender: emitter.uniqueName, interface: "org.bluez.GattCharacteristic1"))
            var iterator = stream.makeAsyncIterator()
            let payload = DBusValue.properties(["Value": .bytes([UInt8](repeating: 7, count: 20))])

            func callBatch(_ count: Int) async throws {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<count {
                        group.addTask {
                            let reply = try await client.call(
                                destination: server.uniqueName, path: "/leak", interface: "io.blebridge.Leak1",
                                method: "Echo", arguments: [.uint32(UInt32(index)), payload])
                            guard reply == [.uint32(UInt32(index))] else { throw DBusError(.failed, "wrong reply") }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            func signalBatch(_ count: Int) async throws {
                for _ in 0..<count {
                    try emitter.emitSignal(
                        path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011",
                        interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged",
                        arguments: [.string("org.bluez.GattCharacteristic1"), payload, .strings([])])
                }
                for _ in 0..<count {
                    guard let signal = await iterator.next(), signal.arguments.count == 3 else {
                        throw DBusError(.failed, "signal stream ended")
                    }
                }
            }
            func round(_ operations: Int) async throws {
                let batch = 500
                for _ in 0..<(operations / batch) {
                    try await callBatch(batch / 2)
                    try await signalBatch(batch / 2)
                }
            }

            try await round(10_000)  // warm-up: caches, buffers and pools reach their working size
            let before = Self.residentBytes()
            try await round(Self.calls + Self.signals)
            let after = Self.residentBytes()
            let growth = after - before
            print("DBus leak test: RSS \(before / 1024) KiB -> \(after / 1024) KiB (\(growth / 1024) KiB)")
            #expect(before > 0)
            #expect(growth < Self.tolerance, "RSS grew by \(growth / 1024) KiB over 100,000 operations")
        }
    }
}
