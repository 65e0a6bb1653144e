import DBus
import EventLoop
import Foundation
import Synchronization
import TestSupport
import Testing

/// Actors pinned to a connection's thread (`DBusConnection.serialExecutor`), entered from signal
/// handlers with `assumeIsolated`, as `CentralManager` and `Peripheral` are.
@Suite(.timeLimit(.minutes(1))) struct DBusPinnedActorTests {
    /// Records, on the connection's thread (or a thread kept for several connections), the signals a
    /// handler hands it.
    actor Recorder {
        /// The connection or thread the actor runs on, held so the thread stays.
        nonisolated let owner: any Sendable
        nonisolated let executor: UnownedSerialExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor }
        var values: [Int] = []
        var threads: Set<String> = []

        init(connection: DBusConnection) {
            owner = connection
            executor = connection.serialExecutor
        }

        init(thread: EventLoop) {
            owner = thread
            executor = thread.asUnownedSerialExecutor()
        }

        func record(_ value: Int) {
            values.append(value)
            threads.insert(currentThreadName())
        }

        /// The thread a call from a task runs this actor on.
        func threadName() -> String { currentThreadName() }
    }

    static func value(_ signal: DBusSignal) -> Int? {
        signal.arguments.first?.asUInt32.map(Int.init)
    }

    @Test func aHandlerEntersThePinnedActorOnTheConnectionThreadInOrder() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let listener = try await bus.connect()
            let recorder = Recorder(connection: listener)
            let handler = try await listener.signalHandler(
                matching: DBusMatchRule(sender: emitter.uniqueName, interface: "io.blebridge.Test1", member: "Tick")
            ) { signals in
                // Crashes (a failed precondition of the loop's checkIsolated) off the connection's thread.
                recorder.assumeIsolated { recorder in
                    for signal in signals { if let value = Self.value(signal) { recorder.record(value) } }
                }
            }
            let count = 500
            for index in 0..<count {
                try emitter.emitSignal(
                    path: "/a", interface: "io.blebridge.Test1", name: "Tick", arguments: [.uint32(UInt32(index))])
            }
            #expect(await waitUntil { await recorder.values.count >= count })
            #expect(await recorder.values == Array(0..<count))
            #expect(await recorder.threads == ["blebridge.dbus"])
            #expect(await recorder.threadName() == "blebridge.dbus")
            handler.cancel()
        }
    }

    /// The thread stays while the connection is held, after it closed: an actor pinned to it is
    /// still served (before, the loop stopped with the connection and its jobs were dropped, so
    /// this call never returned).
    @Test func aPinnedActorIsServedAfterTheConnectionClosed() async throws {
        try await withBus { bus in
            let connection = try await bus.connect()
            let recorder = Recorder(connection: connection)
            await recorder.record(1)
            connection.close()
            #expect(await waitUntil { !connection.isConnected })
            await recorder.record(2)
            #expect(await recorder.values == [1, 2])
            #expect(await recorder.threadName() == "blebridge.dbus")
        }
    }

    /// A client that opens a new connection after each loss opens them all on one thread
    /// (`DBusConnection(address:on:)`): an actor pinned to that thread for the client's life is
    /// entered by the handlers of each connection in turn, and the first connection's closing
    /// leaves the thread (and the actor) running for the next.
    @Test func successiveConnectionsOnOneThreadServeTheSamePinnedActor() async throws {
        try await withBus { bus in
            let thread = try DBusConnection.makeThread()
            let recorder = Recorder(thread: thread)
            let emitter = try await bus.connect()
            let rule = DBusMatchRule(sender: emitter.uniqueName, interface: "io.blebridge.Test1", member: "Tick")
            func listen(on connection: DBusConnection) async throws -> DBusSignalHandler {
                try await connection.signalHandler(matching: rule) { signals in
                    // Crashes (a failed precondition of the loop's checkIsolated) off the shared thread.
                    recorder.assumeIsolated { recorder in
                        for signal in signals { if let value = Self.value(signal) { recorder.record(value) } }
                    }
                }
            }
            func tick(_ values: Range<Int>) throws {
                for value in values {
                    try emitter.emitSignal(
                        path: "/a", interface: "io.blebridge.Test1", name: "Tick", arguments: [.uint32(UInt32(value))])
                }
            }

            let first = try await DBusConnection(address: bus.daemon.address, on: thread)
            let firstHandler = try await listen(on: first)
            try tick(0..<50)
            #expect(await waitUntil { await recorder.values.count >= 50 })
            first.close()
            #expect(await waitUntil { !first.isConnected })
            firstHandler.cancel()
            #expect(await recorder.threadName() == "blebridge.dbus", "the thread outlives the first connection")

            let second = try await DBusConnection(address: bus.daemon.address, on: thread)
            let secondHandler = try await listen(on: second)
            try tick(50..<100)
            #expect(await waitUntil { await recorder.values.count >= 100 })
            #expect(await recorder.values == Array(0..<100))
            #expect(await recorder.threads == ["blebridge.dbus"])
            secondHandler.cancel()
            second.close()
        }
    }

    /// After `cancel()` the handler gets nothing more (a signal emitted later on the same
    /// connection, after a marker seen by a second handler, does not reach it).
    @Test func aCancelledHandlerGetsNothingMore() async throws {
        try await withBus { bus in
            let emitter = try await bus.connect()
            let listener = try await bus.connect()
            let rule = DBusMatchRule(sender: emitter.uniqueName, interface: "io.blebridge.Test1", member: "Tick")
            let first = Mutex<[Int]>([])
            let second = Mutex<[Int]>([])
            let handler = try await listener.signalHandler(matching: rule) { signals in
                first.withLock { $0.append(contentsOf: signals.compactMap(Self.value)) }
            }
            let other = try await listener.signalHandler(matching: rule) { signals in
                second.withLock { $0.append(contentsOf: signals.compactMap(Self.value)) }
            }
            try emitter.emitSignal(path: "/a", interface: "io.blebridge.Test1", name: "Tick", arguments: [.uint32(1)])
            #expect(await waitUntil { first.withLock { $0 } == [1] && second.withLock { $0 } == [1] })
            handler.cancel()
            // The cancel is queued on the connection's thread before this call's reply is read.
            _ = try await listener.nameOwner("org.freedesktop.DBus")
            try emitter.emitSignal(path: "/a", interface: "io.blebridge.Test1", name: "Tick", arguments: [.uint32(2)])
            #expect(await waitUntil { second.withLock { $0 } == [1, 2] })
            #expect(first.withLock { $0 } == [1])
            other.cancel()
        }
    }
}

/// The kernel's name of the calling thread.
func currentThreadName() -> String {
    let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
    return comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
}
