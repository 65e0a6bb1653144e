import Foundation
import Gateway
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `SignalEvents.stream`: a signal sent once the stream exists is delivered, never ignored.
@Suite(.serialized) struct SignalEventsTests {
    /// libdispatch signal sources set the disposition to ignored and installed their handler only
    /// at registration, later, on libdispatch's thread; a signal sent in between was ignored
    /// (`blebridge simulate` lost the SIGINT sent on seeing "Press Ctrl-C" in 2 of 7 `make stress`
    /// runs, 2026-12-05; with those sources this test lost the signal in its first round). Each
    /// round sends the signal the moment the stream is returned, from this process's threads,
    /// most of which block it.
    @Test func aSignalSentAsSoonAsTheStreamExistsIsDelivered() async throws {
        for round in 0..<20 {
            let signals = SignalEvents.stream([SIGUSR2])
            kill(getpid(), SIGUSR2)
            let delivered = await withDeadline(.seconds(5)) {
                for await signal in signals { return signal }
                return nil
            }
            #expect(delivered == SIGUSR2, "round \(round): the signal was lost")
            if delivered == nil { break }
        }
    }

    /// A stream's reader cancelled while signals arrive: the cancellation ends the stream, and
    /// the hub goes on. The hub used to yield with its lock held, and the stream's end takes that
    /// lock: Swift runs a cancelled task's handlers (the stream's end) holding the task's status
    /// lock, and a yield that resumes the task takes that lock, so the hub's thread and the
    /// cancelling one each waited for the other for good (`blebridge run` hung in a restart under
    /// a flood of SIGHUP, 2026-12-05: 1 run in about 70 under load; gdb showed both stacks).
    @Test(.timeLimit(.minutes(1))) func aReaderCancelledWhileSignalsArriveEndsAndTheHubGoesOn() async throws {
        let flooding = Atomic(true)
        let flooder = Thread {
            while flooding.load(ordering: .relaxed) {
                kill(getpid(), SIGUSR2)
                usleep(20)
            }
        }
        flooder.start()
        defer { flooding.store(false, ordering: .relaxed) }
        let stuck = try await firstCancelledReaderThatDidNotEnd(rounds: 300) { SignalEvents.stream([SIGUSR2]) }
        try #require(stuck == nil, "round \(stuck ?? -1): the cancelled reader never ended")
        // The hub still delivers.
        let after = SignalEvents.stream([SIGUSR2])
        let delivered = await withDeadline(.seconds(10)) {
            for await signal in after { return signal }
            return nil
        }
        #expect(delivered == SIGUSR2)
    }

    /// Every stream that asked for a signal gets it; one that did not, does not.
    @Test func eachStreamGetsTheSignalsItAskedFor() async throws {
        let both = SignalEvents.stream([SIGUSR1, SIGUSR2])
        let first = SignalEvents.stream([SIGUSR1])
        kill(getpid(), SIGUSR2)
        kill(getpid(), SIGUSR1)
        let fromBoth = await withDeadline(.seconds(5)) {
            var received: Set<Int32> = []
            for await signal in both {
                received.insert(signal)
                if received.count == 2 { return received }
            }
            return nil
        }
        #expect(fromBoth == [SIGUSR1, SIGUSR2])
        let fromFirst = await withDeadline(.seconds(5)) {
            for await signal in first { return signal }
            return nil
        }
        #expect(fromFirst == SIGUSR1)
    }
}
