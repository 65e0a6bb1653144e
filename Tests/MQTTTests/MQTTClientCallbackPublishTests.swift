import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MQTT

/// `publish(_:onOutcome:)`: the non-suspending publish the outbox publisher uses on its hot path.
@Suite struct MQTTClientCallbackPublishTests {
    /// Records every outcome a callback publish reports, in the order they arrive.
    final class Outcomes: Sendable {
        private let results = Mutex<[Result<Void, MQTTError>]>([])

        var handler: @Sendable (Result<Void, MQTTError>) -> Void {
            { result in self.results.withLock { $0.append(result) } }
        }

        var all: [Result<Void, MQTTError>] { results.withLock { $0 } }
        var count: Int { results.withLock { $0.count } }

        /// Waits until at least `count` outcomes arrived; false on time-out.
        func wait(for count: Int, timeout: Duration = .seconds(10)) async -> Bool {
            await waitUntil(timeout: timeout) { self.count >= count }
        }
    }

    /// A broker, a subscriber to `filter` (and its stream) and a connected publisher.
    static func connectedPair(subscribedTo filter: String, qos: MQTTQoS) async throws -> (
        MosquittoFixture, MQTTClient, AsyncStream<MQTTMessage>, MQTTClient
    ) {
        let broker = try await MosquittoFixture()
        let subscriber = try await MQTTTestHelpers.connectedClient(broker, clientID: "sub")
        let stream = try await subscriber.subscribe(filter, qos: qos)
        return (broker, subscriber, stream, try await MQTTTestHelpers.connectedClient(broker, clientID: "pub"))
    }

    @Test func qos1OutcomeIsSuccessOnlyAfterTheBrokerAcknowledged() async throws {
        let (broker, subscriber, stream, publisher) = try await Self.connectedPair(
            subscribedTo: "cb/#", qos: .atLeastOnce)
        let outcomes = Outcomes()

        broker.pause()  // the PUBLISH is written, the PUBACK withheld
        try publisher.publish(
            MQTTMessage(topic: "cb/1", text: "acked", qos: .atLeastOnce), onOutcome: outcomes.handler)
        // Without the broker nothing can have acknowledged it: give a wrong early outcome a chance to show.
        await sleepRunnable(for: .milliseconds(200))
        #expect(outcomes.count == 0)
        broker.resume()

        #expect(await outcomes.wait(for: 1))
        #expect(outcomes.count == 1)
        #expect(outcomes.all.first.map { (try? $0.get()) != nil } == true)
        #expect(await MQTTTestHelpers.collect(stream, count: 1).map(\.text) == ["acked"])
        await publisher.disconnect()
        await subscriber.disconnect()
    }

    @Test func qos0OutcomeIsReportedBeforePublishReturns() async throws {
        let (broker, subscriber, stream, publisher) = try await Self.connectedPair(
            subscribedTo: "cb/#", qos: .atMostOnce)
        let outcomes = Outcomes()
        broker.pause()  // nothing from the broker can be what completes it
        try publisher.publish(MQTTMessage(topic: "cb/0", text: "fire", qos: .atMostOnce), onOutcome: outcomes.handler)
        #expect(outcomes.count == 1)
        #expect(outcomes.all.first.map { (try? $0.get()) != nil } == true)
        broker.resume()
        #expect(await MQTTTestHelpers.collect(stream, count: 1).map(\.text) == ["fire"])
        await publisher.disconnect()
        await subscriber.disconnect()
    }

    @Test func notConnectedThrowsNoConnectionAtOnceAndNeverCallsBack() async throws {
        let broker = try await MosquittoFixture()
        let neverStarted = MQTTClient(configuration: try MQTTTestHelpers.configuration(broker, clientID: "idle"))
        let stopped = try await MQTTTestHelpers.connectedClient(broker, clientID: "stopped")
        await stopped.disconnect()
        let outcomes = Outcomes()
        for client in [neverStarted, stopped] {
            for qos in MQTTQoS.allCases {
                let error = expectThrows(MQTTError.self) {
                    try client.publish(MQTTMessage(topic: "cb/x", text: "x", qos: qos), onOutcome: outcomes.handler)
                }
                #expect(error?.code == .noConnection)
                #expect(outcomes.count == 0)
            }
        }
        // A connected client afterwards: its outcome is the only one, so a late callback of the
        // refused publishes would show up before or beside it.
        let connected = try await MQTTTestHelpers.connectedClient(broker, clientID: "later")
        try connected.publish(MQTTMessage(topic: "cb/y", text: "y", qos: .atLeastOnce), onOutcome: outcomes.handler)
        #expect(await outcomes.wait(for: 1))
        #expect(outcomes.count == 1)
        await connected.disconnect()
    }

    @Test func waitingOutcomesFailWithTheStoppedErrorWhenTheClientStops() async throws {
        let broker = try await MosquittoFixture()
        let client = try await MQTTTestHelpers.connectedClient(broker, clientID: "stopper")
        let outcomes = Outcomes()
        broker.pause()
        try client.publish(MQTTMessage(topic: "lost/1", text: "a", qos: .atLeastOnce), onOutcome: outcomes.handler)
        try client.publish(MQTTMessage(topic: "lost/2", text: "b", qos: .exactlyOnce), onOutcome: outcomes.handler)
        #expect(outcomes.count == 0)
        await client.disconnect()
        #expect(await outcomes.wait(for: 2))
        broker.resume()
        let errors = outcomes.all.map { result -> MQTTError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(errors == [MQTTLifecycle.stoppedError, MQTTLifecycle.stoppedError])
        #expect(errors.allSatisfy { $0?.code == .connectionLost })
        // Exactly once each: nothing more arrives once the client is gone.
        #expect(await !waitUntil(timeout: .milliseconds(200)) { outcomes.count > 2 })
    }

    @Test func publishesMadeOneAfterAnotherFromOneThreadArriveInOrder() async throws {
        let (broker, subscriber, stream, publisher) = try await Self.connectedPair(
            subscribedTo: "order/#", qos: .atLeastOnce)
        let outcomes = Outcomes()
        let count = 1_000
        let failures = Mutex<[MQTTError]>([])
        // One plain thread, as the outbox thread does it: no task, no suspension between the calls.
        let thread = Thread {
            for index in 0..<count {
                do throws(MQTTError) {
                    try publisher.publish(
                        MQTTMessage(topic: "order/\(index % 7)", text: "\(index)", qos: .atLeastOnce),
                        onOutcome: outcomes.handler)
                } catch {
                    failures.withLock { $0.append(error) }
                }
            }
        }
        thread.start()
        let received = await MQTTTestHelpers.collect(stream, count: count, timeout: .seconds(20))
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(received.count == count)
        #expect(received.map(\.text) == (0..<count).map { "\($0)" })
        #expect(await outcomes.wait(for: count))
        #expect(outcomes.all.allSatisfy { (try? $0.get()) != nil })
        await publisher.disconnect()
        await subscriber.disconnect()
        await broker.stop()
    }
}
