import Dispatch
import Foundation
import Synchronization
import Testing

@testable import BlueZ

#if canImport(Glibc)
    import Glibc
#endif

/// The one thread that reads every `AcquireNotify` socket, on real `SOCK_SEQPACKET` socket pairs (the kind
/// bluetoothd hands out): our end goes to the poller, the test writes on the peer end like BlueZ does.
@Suite(.serialized) struct NotifySocketPollerTests {
    /// What the poller delivered, per socket.
    final class Recorder: Sendable {
        private let state = Mutex<(values: [Int: [Data]], ended: Set<Int>, threads: Set<pthread_t>)>(([:], [], []))

        func value(_ socket: Int, _ data: Data) {
            let thread = pthread_self()
            state.withLock {
                $0.values[socket, default: []].append(data)
                $0.threads.insert(thread)
            }
        }
        /// A value lent by the poller: kept as a copy.
        func value(_ socket: Int, _ bytes: UnsafeRawBufferPointer) { value(socket, Data(bytes)) }
        /// The threads that delivered values.
        var threads: Set<pthread_t> { state.withLock { $0.threads } }
        func end(_ socket: Int) { state.withLock { _ = $0.ended.insert(socket) } }
        func values(_ socket: Int) -> [Data] { state.withLock { $0.values[socket] ?? [] } }
        var ended: Set<Int> { state.withLock { $0.ended } }

        /// Waits (up to 10 s) until `condition` holds; false on time-out.
        func wait(_ condition: (Recorder) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if condition(self) { return true }
                try? await Task.sleep(for: .milliseconds(2))
            }
            return condition(self)
        }
    }

    /// A socket pair: `ours` for the poller, `peer` plays BlueZ.
    struct Pair {
        let ours: Int32
        let peer: Int32

        init() throws {
            var fds: [Int32] = [-1, -1]
            let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
                throw PollerTestError("socketpair failed: errno \(errno)")
            }
            ours = fds[0]
            peer = fds[1]
        }

        func send(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
        }

        /// Whether the poller closed our end (the peer sees end of file).
        func peerSeesClose() -> Bool {
            var watched = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard poll(&watched, 1, 0) == 1 else { return false }
            var byte: UInt8 = 0
            return read(peer, &byte, 1) == 0
        }
    }

    struct PollerTestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The threads of this process (`/proc/self/task`) named `name`.
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    func add(_ pair: Pair, _ index: Int, to poller: NotifySocketPoller, _ recorder: Recorder)
        -> NotifySocketPoller.Registration
    {
        poller.add(fd: pair.ours, onValue: { recorder.value(index, $0) }, onEnd: { recorder.end(index) })
    }

    @Test func fortySocketsAreReadByOneThread() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-40")
        defer { poller.shutdown() }
        let recorder = Recorder()
        let pairs = try (0..<40).map { _ in try Pair() }
        defer { for pair in pairs { close(pair.peer) } }
        let registrations = pairs.enumerated().map { add($1, $0, to: poller, recorder) }
        for (index, pair) in pairs.enumerated() { pair.send([UInt8(index), 1]) }
        #expect(await recorder.wait { r in (0..<40).allSatisfy { r.values($0).count == 1 } })
        for (index, pair) in pairs.enumerated() { pair.send([UInt8(index), 2]) }
        #expect(await recorder.wait { r in (0..<40).allSatisfy { r.values($0).count == 2 } })
        for index in 0..<40 {
            #expect(recorder.values(index) == [Data([UInt8(index), 1]), Data([UInt8(index), 2])])
        }
        // One thread, named, delivered every value of every socket (not a thread per socket).
        #expect(Self.threads(named: "notify-test-40") == 1)
        #expect(recorder.threads.count == 1)
        #expect(poller.openSockets == 40)
        for registration in registrations { registration.stop() }
        #expect(await recorder.wait { _ in poller.openSockets == 0 })
        #expect(recorder.ended.isEmpty)
    }

    @Test func aSocketClosedByThePeerEndsOnlyItsChannel() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-end")
        defer { poller.shutdown() }
        let recorder = Recorder()
        let pairs = try (0..<3).map { _ in try Pair() }
        let registrations = pairs.enumerated().map { add($1, $0, to: poller, recorder) }
        pairs[1].send([7])
        close(pairs[1].peer)  // BlueZ closes the socket when the link drops
        #expect(await recorder.wait { $0.ended == [1] })
        #expect(recorder.values(1) == [Data([7])])  // what was queued before the close still arrives
        pairs[0].send([1])
        pairs[2].send([3])
        #expect(await recorder.wait { $0.values(0) == [Data([1])] && $0.values(2) == [Data([3])] })
        #expect(recorder.ended == [1])
        #expect(poller.openSockets == 2)
        registrations[1].stop()  // stopping an ended socket is harmless
        registrations[0].stop()
        registrations[2].stop()
        #expect(await recorder.wait { _ in poller.openSockets == 0 })
        #expect(recorder.ended == [1])
        close(pairs[0].peer)
        close(pairs[2].peer)
    }

    @Test func socketsAreAddedAndRemovedWhileOthersStream() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-add")
        defer { poller.shutdown() }
        let recorder = Recorder()
        let first = try Pair()
        let second = try Pair()
        defer {
            close(first.peer)
            close(second.peer)
        }
        let firstRegistration = add(first, 0, to: poller, recorder)
        for value in 0..<100 { first.send([UInt8(value)]) }
        #expect(await recorder.wait { $0.values(0).count == 100 })
        #expect(recorder.values(0) == (0..<100).map { Data([UInt8($0)]) })  // in order

        let secondRegistration = add(second, 1, to: poller, recorder)
        second.send([42])
        #expect(await recorder.wait { $0.values(1) == [Data([42])] })

        firstRegistration.stop()
        #expect(await recorder.wait { _ in first.peerSeesClose() })  // BlueZ learns we stopped
        first.send([1])
        second.send([43])
        #expect(await recorder.wait { $0.values(1) == [Data([42]), Data([43])] })
        #expect(recorder.values(0).count == 100)
        #expect(recorder.ended.isEmpty)  // stop() is not an end
        #expect(poller.openSockets == 1)
        secondRegistration.stop()
        #expect(await recorder.wait { _ in poller.openSockets == 0 })
    }

    /// A link drop reaches the gateway through D-Bus and stops the listener, often before the poller
    /// read the last notifications: what the socket already holds is still delivered, in order.
    /// Before, the poller took the stop first (commands come before reads in its loop) and closed the
    /// socket with the rest unread: the first turn reads at most 64 packets.
    @Test func stopDeliversWhatTheSocketAlreadyHolds() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-stop")
        defer { poller.shutdown() }
        let recorder = Recorder()
        let pair = try Pair()
        defer { close(pair.peer) }
        for value in 0..<200 { pair.send([UInt8(value)]) }
        let registration = add(pair, 0, to: poller, recorder)
        registration.stop()
        #expect(await recorder.wait { _ in poller.openSockets == 0 })
        #expect(recorder.values(0) == (0..<200).map { Data([UInt8($0)]) })
        #expect(recorder.ended.isEmpty)
    }

    /// A backlog read in several turns (64 packets each) through the one reused buffer, packets of
    /// every size one after another, and the peer's close right after them: each packet whole, in
    /// order, then the end.
    @Test func aBacklogEndedByThePeerArrivesWholeAndInOrderBeforeTheEnd() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-backlog")
        defer { poller.shutdown() }
        let recorder = Recorder()
        let pair = try Pair()
        let packets = (0..<150).map { index in
            (0..<(index % 16 == 5 ? 512 : index % 7 + 1)).map { UInt8((index + $0) & 0xFF) }
        }
        for packet in packets { pair.send(packet) }
        close(pair.peer)
        _ = add(pair, 0, to: poller, recorder)
        #expect(await recorder.wait { $0.ended == [0] })
        #expect(recorder.values(0) == packets.map { Data($0) })
        #expect(poller.openSockets == 0)
    }

    @Test func packetsLargerThanTheDefaultMTUArriveWhole() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-mtu")
        defer { poller.shutdown() }
        let recorder = Recorder()
        let pair = try Pair()
        defer { close(pair.peer) }
        let registration = add(pair, 0, to: poller, recorder)
        let long = (0..<512).map { UInt8($0 & 0xFF) }
        pair.send(long)
        pair.send([9])
        #expect(await recorder.wait { $0.values(0).count == 2 })
        #expect(recorder.values(0) == [Data(long), Data([9])])
        registration.stop()
    }

    @Test func shutdownClosesEverySocketWithoutEndingItsChannel() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-down")
        let recorder = Recorder()
        let pairs = try (0..<3).map { _ in try Pair() }
        defer { for pair in pairs { close(pair.peer) } }
        _ = pairs.enumerated().map { add($1, $0, to: poller, recorder) }
        pairs[0].send([1])
        #expect(await recorder.wait { $0.values(0).count == 1 })
        poller.shutdown()
        #expect(await recorder.wait { _ in pairs.allSatisfy { $0.peerSeesClose() } })
        #expect(await recorder.wait { _ in Self.threads(named: "notify-test-down") == 0 })
        #expect(recorder.ended.isEmpty)
        // A socket added after shutdown ends at once and is closed.
        let late = try Pair()
        defer { close(late.peer) }
        _ = add(late, 9, to: poller, recorder)
        #expect(recorder.ended == [9])
        #expect(late.peerSeesClose())
    }

    /// The poller is a named `EventLoop`: every value is handed out on the loop's own thread, and the
    /// loop's other work runs between the notifications in the order it was queued.
    @Test func valuesArriveOnTheLoopInOrderWithItsOtherWork() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-loop")
        defer { poller.shutdown() }
        let loop = try #require(poller.loop)
        let events = Mutex<[String]>([])
        let pair = try Pair()
        defer { close(pair.peer) }
        let registration = poller.add(
            fd: pair.ours,
            onValue: { value in
                events.withLock { $0.append(loop.isCurrentThread ? "value \(value[0])" : "value off the loop") }
            },
            onEnd: {})
        pair.send([1])
        let recorder = Recorder()
        #expect(await recorder.wait { _ in events.withLock { !$0.isEmpty } })
        await withCheckedContinuation { continuation in
            loop.execute {
                events.withLock { $0.append("work") }
                continuation.resume()
            }
        }
        pair.send([2])
        await withCheckedContinuation { continuation in
            registration.stop { continuation.resume() }  // after the stop, on the loop: [2] was delivered
        }
        #expect(events.withLock { $0 } == ["value 1", "work", "value 2"])
        #expect(poller.openSockets == 0)
    }

    /// Shutdown closes every socket (BlueZ sees each close) before the loop's thread ends; its `then`
    /// is the thread's last act, so nothing is open once it runs, and later sockets end at once.
    ///
    /// The peers are asked after `then`, for a bounded time. Inside `then`, 0 of 5 peers had
    /// seen the close in a stress run under load (2026-12-05) while the poller counted none open.
    /// Most likely (not verified) another test of this process was starting a child: the child
    /// holds a copy of every descriptor until its `exec` closes them (they are close-on-exec), so
    /// a peer sees the close a moment after our `close`. Sockets left open by the shutdown are never
    /// seen closed (the wait gives up after 10 s): the poller lives to the end of the test.
    @Test func shutdownClosesEverySocketBeforeTheThreadsLastAct() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-last")
        let loop = try #require(poller.loop)
        let recorder = Recorder()
        let pairs = try (0..<5).map { _ in try Pair() }
        defer { for pair in pairs { close(pair.peer) } }
        for (index, pair) in pairs.enumerated() { _ = add(pair, index, to: poller, recorder) }
        pairs[4].send([4])
        #expect(await recorder.wait { $0.values(4) == [Data([4])] })
        let seen = await withCheckedContinuation { continuation in
            poller.shutdown {
                continuation.resume(
                    returning: (open: poller.openSockets, onLoop: loop.isCurrentThread))
            }
        }
        #expect(await recorder.wait { _ in pairs.allSatisfy { $0.peerSeesClose() } })
        #expect(seen.open == 0)
        #expect(seen.onLoop)
        #expect(recorder.ended.isEmpty)
        #expect(!loop.execute {})  // the thread has stopped
        #expect(await recorder.wait { _ in Self.threads(named: "notify-test-last") == 0 })
    }

    /// A socket added while a shutdown is queued, or after it, is closed and ended, never left watched
    /// on a stopped loop.
    @Test func aSocketAddedDuringShutdownIsClosedAndEnded() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-race")
        let loop = try #require(poller.loop)
        let recorder = Recorder()
        let pairs = try (0..<2).map { _ in try Pair() }
        defer { for pair in pairs { close(pair.peer) } }
        // Hold the loop's thread so the add is queued but not yet started when the shutdown comes.
        let gate = DispatchSemaphore(value: 0)
        loop.execute { gate.wait() }
        _ = add(pairs[0], 0, to: poller, recorder)
        poller.shutdown()
        _ = add(pairs[1], 1, to: poller, recorder)  // after: at once, on this thread
        #expect(recorder.ended == [1])
        gate.signal()
        #expect(await recorder.wait { $0.ended == [0, 1] })
        #expect(pairs.allSatisfy { $0.peerSeesClose() })
        #expect(poller.openSockets == 0)
    }

    /// A descriptor epoll refuses (a regular file) ends at once: closed, counted out, its listener told.
    @Test func aDescriptorTheLoopRefusesEndsAtOnce() async throws {
        let poller = NotifySocketPoller(threadName: "notify-test-bad")
        defer { poller.shutdown() }
        let recorder = Recorder()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(getpid())-refused").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { unlink(path) }
        _ = poller.add(fd: fd, onValue: { recorder.value(0, $0) }, onEnd: { recorder.end(0) })
        #expect(await recorder.wait { $0.ended == [0] })
        #expect(poller.openSockets == 0)
        // Closed by the poller: the descriptor number no longer names the file.
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? ""
        #expect(link != path)
    }
}
