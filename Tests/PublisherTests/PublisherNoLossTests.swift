import Foundation
import MQTT
import Outbox
import TestSupport
import Testing

@testable import Publisher

/// The issue's bars: no loss across broker restarts, and no loss across a SIGKILL of the publishing process.
@Suite(.serialized) struct PublisherNoLossTests {
    @Test(.timeLimit(.minutes(3)))
    func tenThousandReadingsSurviveThreeBrokerRestartsInOrderWithTheirTimestamps() async throws {
        // The broker is stopped with SIGTERM, which makes mosquitto save its state on the way out. A
        // SIGKILL loses readings mosquitto had already acknowledged (PUBACK) but not yet written to
        // its persistence file, and `autosave_on_changes` does not close that window: mosquitto
        // 2.0 counts a message sent straight on to a connected subscriber as no change at all
        // (docs/outbox.md, "Broker durability"). This test measures the publisher, so the broker
        // must keep what it acknowledged.
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(
            broker, filter: "readings/#", clientID: "sub-noloss", cleanSession: false)
        let client = try PublisherTestSupport.client(broker, clientID: "pub-noloss", cleanSession: false)
        try await client.connect()
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(window: 64, sampleTimeProperty: "sample_time"))
        await publisher.start()

        let devices = (1...5).map { "dev\($0)" }
        let total = 10_000
        let rate = 400.0  // readings per second: 25 s of offered load
        let clock = ContinuousClock()
        let begin = clock.now
        let killer = Task {
            // Stop the broker three times mid-stream (SIGTERM: it saves, then drops every
            // connection without acknowledging what is still unread), 1 s down each time.
            for at in [5.0, 11.0, 17.0] {
                try await Task.sleep(until: begin + .seconds(at), clock: clock)
                await broker.stop()
                try await Task.sleep(for: .seconds(1))
                try await broker.start()
            }
        }
        for seq in 0..<total {
            try await publisher.submit(
                TestReading.entry(device: devices[seq % devices.count], seq: seq / devices.count))
            let due = begin + .seconds(Double(seq + 1) / rate)
            if due > clock.now { try await Task.sleep(until: due, clock: clock) }
        }
        try await killer.value
        // On a loaded machine the subscriber (in this process) can trail the stream by thousands of
        // readings when the offered load ends; what counts is that all arrive, in order.
        let delivered = await PublisherTestSupport.wait(timeout: .seconds(60)) { received.distinct == total }
        #expect(delivered, "received \(received.distinct) of \(total)")

        let arrivals = received.firstArrivals()
        for device in devices {
            let order = arrivals[device] ?? []
            #expect(
                order == Array(0..<(total / devices.count)),
                "\(device): \(order.count) readings, first gap near \(firstGap(order))")
        }
        let unstamped = received.unstamped(property: "sample_time")
        #expect(
            unstamped.isEmpty,
            "\(unstamped.count) messages without their sample time, e.g. \(unstamped.prefix(3).map { ($0.text, $0.properties.userProperties) })"
        )
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await store.stats().depth == 0 })
        let stats = try await publisher.stats()
        #expect(stats.outbox.delivered == Int64(total))
        #expect(stats.dropped == 0)
        await publisher.stop()
        await client.disconnect()
        await subscriberClient.disconnect()
    }

    @Test(.timeLimit(.minutes(1)))
    func everyReadingAcceptedBeforeASIGKILLIsDeliveredAfterTheRestart() async throws {
        let probe = try BinaryLocator.product("outbox-probe")
        // Only the publishing process is killed here; the broker keeps running.
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let database = directory.file("probe.sqlite").path
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(
            broker, filter: "crash/#", clientID: "sub-crash", cleanSession: false)
        let common = [
            "--db", database, "--url", broker.url, "--client-id", "probe", "--topic", "crash", "--stream", "dev",
        ]

        let first = try ChildProcess(probe, common + ["--start", "0", "--count", "1000000", "--rate", "500"])
        #expect(await first.waitForOutput(timeout: .seconds(20)) { $0.contains("accepted 1500\n") })
        first.signal(SIGKILL)
        // SIGKILL is certain; the bound is how long Foundation takes to notice (over 5 s once in a
        // loaded full run).
        #expect(await first.waitForExit(timeout: .seconds(20)) != nil)
        let accepted = first.standardOutput.split(separator: "\n").compactMap { line -> Int? in
            line.hasPrefix("accepted ") ? Int(line.dropFirst("accepted ".count)) : nil
        }
        let last = try #require(accepted.max())
        #expect(last >= 1500)

        let second = try ChildProcess(probe, common + ["--count", "0"])
        let drained = await second.waitForOutput(timeout: .seconds(30)) { $0.contains("drained") }
        #expect(drained, "restarted probe: \(second.standardOutput.suffix(200)) \(second.standardError.suffix(500))")
        #expect(await PublisherTestSupport.wait(timeout: .seconds(10)) { received.distinct > last })
        let order = received.firstArrivals()["dev"] ?? []
        // Everything accepted arrived, in order; a few more may have been committed after the last line printed.
        #expect(Array(order.prefix(last + 1)) == Array(0...last), "first gap near \(firstGap(order))")
        #expect(order == Array(0..<order.count))
        await second.stop()
        await subscriberClient.disconnect()
    }
}

/// The first index where `order` stops being 0, 1, 2, …
private func firstGap(_ order: [Int]) -> Int {
    order.enumerated().first { $0.offset != $0.element }?.offset ?? order.count
}
