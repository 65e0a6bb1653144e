import Gateway
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
