import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MQTT

/// `MQTTStateBroadcaster`: every stream gets the states in order, and a reader cancelled while
/// states are published ends without holding the publisher up.
@Suite struct MQTTStateBroadcasterTests {
    @Test func aNewStreamStartsWithTheCurrentStateAndGetsTheRestInOrder() async throws {
        let broadcaster = MQTTStateBroadcaster()
        #expect(broadcaster.publish(.connecting))
        #expect(!broadcaster.publish(.connecting), "a repeated state is not sent again")
        let states = broadcaster.stream()
        #expect(broadcaster.publish(.connected(sessionPresent: false)))
        #expect(broadcaster.publish(.disconnected(reason: nil)))
        var received: [MQTTConnectionState] = []
        for await state in states {
            received.append(state)
            if received.count == 3 { break }
        }
        #expect(received == [.connecting, .connected(sessionPresent: false), .disconnected(reason: nil)])
    }

    /// The broadcaster used to yield with its lock held, and a stream's end takes that lock.
    /// Swift runs a cancelled reader's handlers (the stream's end) holding the task's status
    /// lock, and a yield that resumes the reader takes that lock: the publishing thread and the
    /// cancelling one could wait for each other for good, as `SignalHub`'s did
    /// (`SignalEventsTests`; docs/testing.md, "Races found under load").
    @Test(.timeLimit(.minutes(1))) func aReaderCancelledWhileStatesArePublishedEnds() async throws {
        let broadcaster = MQTTStateBroadcaster()
        let publishing = Atomic(true)
        let publisher = Thread {
            var connected = false
            while publishing.load(ordering: .relaxed) {
                connected.toggle()
                broadcaster.publish(connected ? .connected(sessionPresent: false) : .connecting)
                usleep(20)
            }
        }
        publisher.start()
        defer { publishing.store(false, ordering: .relaxed) }
        let stuck = try await firstCancelledReaderThatDidNotEnd(rounds: 300) { broadcaster.stream() }
        #expect(stuck == nil, "round \(stuck ?? -1): the cancelled reader never ended")
    }
}
