import Foundation
import MQTT
import Synchronization
import TestSupport

/// A real MQTT client that records every message on the filters it subscribes to, for
/// end-to-end assertions with time-bounded waits.
final class MQTTRecorder: Sendable {
    let client: MQTTClient
    /// Every message recorded, with the time it reached the recorder's network thread.
    private let log = Mutex<[(message: MQTTMessage, arrival: Date)]>([])
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// With `cleanSession` false the broker keeps the subscriptions and queues messages while
    /// the recorder is away (e.g. across a broker restart).
    init(url: String, clientID: String = "e2e-\(UUID().uuidString.prefix(8))", cleanSession: Bool = true) async throws {
        client = MQTTClient(
            configuration: try MQTTConfiguration(
                url: url, clientID: clientID, protocolVersion: .v5, cleanSession: cleanSession,
                minimumReconnectDelay: .milliseconds(100), maximumReconnectDelay: .seconds(1)))
        try await client.connect()
    }

    func subscribe(_ filter: String) async throws {
        let stream = try await client.subscribe(filter, qos: .atLeastOnce)
        let task = Task { [self] in
            for await message in stream { record(message) }
        }
        tasks.withLock { $0.append(task) }
    }

    /// Records `message` with its arrival as stamped on the client's network thread: a stamp taken
    /// here, after the client actor and this task, also counted the time this process's
    /// cooperative pool was held by other tests (a reading "took" 5.0 s in full parallel runs).
    private func record(_ message: MQTTMessage) {
        let arrival = message.receivedAt ?? Date()
        log.withLock { $0.append((message, arrival)) }
    }

    var all: [MQTTMessage] { log.withLock { $0.map(\.message) } }

    /// The messages on `topic` with the time each reached the recorder's network thread.
    func arrivals(on topic: String) -> [(message: MQTTMessage, arrival: Date)] {
        log.withLock { $0.filter { $0.message.topic == topic } }
    }

    func on(_ topic: String) -> [MQTTMessage] { all.filter { $0.topic == topic } }

    /// The messages on the topics `matching` accepts, with their arrival times, in arrival order.
    func arrivals(matching: (String) -> Bool) -> [(message: MQTTMessage, arrival: Date)] {
        log.withLock { $0.filter { matching($0.message.topic) } }
    }

    func json(_ message: MQTTMessage) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any]
    }

    /// Waits until `predicate` holds for the recorded messages; returns whether it did
    /// (`timeout` counts the time this process could run, see `waitUntil`).
    @discardableResult
    func wait(timeout: Duration = .seconds(10), _ predicate: ([MQTTMessage]) -> Bool) async -> Bool {
        // Every 50 ms, not 10: predicates parse the JSON of every recorded message on each poll,
        // and a dozen end-to-end tests polling that often held the cooperative pool the simulator
        // and the recorders need (see PublisherTests' `Received` for the same effect measured).
        await waitUntil(timeout: timeout, interval: .milliseconds(50)) { predicate(all) }
    }

    /// The first message on `topic` whose payload satisfies `predicate`, waiting for it.
    func first(
        on topic: String, timeout: Duration = .seconds(10),
        where predicate: @escaping (MQTTMessage) -> Bool = { _ in true }
    ) async -> MQTTMessage? {
        await wait(timeout: timeout) { $0.contains { $0.topic == topic && predicate($0) } }
        return all.first { $0.topic == topic && predicate($0) }
    }

    func publish(
        _ topic: String, _ text: String, properties: MQTTProperties = MQTTProperties(), retain: Bool = false
    ) async throws {
        try await client.publish(
            MQTTMessage(topic: topic, text: text, qos: .atLeastOnce, retain: retain, properties: properties))
    }

    func clear() { log.withLock { $0.removeAll() } }

    func close() async {
        tasks.withLock { $0.forEach { $0.cancel() } }
        await client.disconnect()
    }
}
