import Foundation
import MQTT
import Outbox
import Publisher
import Synchronization
import TestSupport

/// A reading as the tests encode it: `{"device":…,"seq":…,"ts":…}` with the sample time.
struct TestReading: Hashable, Sendable {
    var device: String
    var seq: Int
    var ts: String

    static func entry(device: String, seq: Int, time: Date = Date(), topic: String = "readings") -> OutboxEntry {
        // Whole milliseconds, as the `ts` text carries them.
        let time = Date(timeIntervalSince1970: (time.timeIntervalSince1970 * 1000).rounded() / 1000)
        let ts = Publisher.iso8601(time)
        let payload = #"{"device":"\#(device)","seq":\#(seq),"ts":"\#(ts)"}"#
        return OutboxEntry(topic: "\(topic)/\(device)", payload: Array(payload.utf8), sampleTime: time, stream: device)
    }

    init(device: String, seq: Int, ts: String) {
        self.device = device
        self.seq = seq
        self.ts = ts
    }

    /// Parses what the tests publish (also the probe's `{"seq":…,"ts":…}` with the device from the topic).
    init?(_ message: MQTTMessage) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
            let seq = object["seq"] as? Int, let ts = object["ts"] as? String
        else { return nil }
        self.device = object["device"] as? String ?? String(message.topic.split(separator: "/").last ?? "")
        self.seq = seq
        self.ts = ts
    }
}

/// Everything a subscription delivered, collected by a background task.
final class Received: Sendable {
    private final class Messages: Sendable {
        let list = Mutex<[MQTTMessage]>([])
    }
    private let messages = Messages()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<MQTTMessage>) {
        let messages = self.messages
        task = Task {
            for await message in stream { messages.list.withLock { $0.append(message) } }
        }
    }

    deinit { task.cancel() }

    var all: [MQTTMessage] { messages.list.withLock { $0 } }
    var readings: [TestReading] { all.compactMap(TestReading.init) }

    /// For each device, the sequence numbers in the order they first arrived.
    func firstArrivals() -> [String: [Int]] {
        var seen: Set<TestReading> = []
        var order: [String: [Int]] = [:]
        for reading in readings where seen.insert(reading).inserted {
            order[reading.device, default: []].append(reading.seq)
        }
        return order
    }

    /// Messages whose user property `property` is not exactly the payload's `ts`.
    func unstamped(property: String) -> [MQTTMessage] {
        all.filter { message in
            guard let reading = TestReading(message) else { return true }
            return message.properties.userProperties != [MQTTUserProperty(property, reading.ts)]
        }
    }

    /// Number of distinct readings received.
    var distinct: Int { Set(readings).count }
}

enum PublisherTestSupport {
    static func client(
        _ broker: MosquittoFixture, clientID: String, cleanSession: Bool = true
    ) throws -> MQTTClient {
        MQTTClient(
            configuration: try MQTTConfiguration(
                url: broker.url, clientID: clientID, cleanSession: cleanSession,
                minimumReconnectDelay: .milliseconds(50), maximumReconnectDelay: .milliseconds(300)))
    }

    /// A connected subscriber on `filter` (QoS 1); persistent session when `clientID` is stable.
    static func subscriber(
        _ broker: MosquittoFixture, filter: String, clientID: String = "sub-\(UUID().uuidString.prefix(8))",
        cleanSession: Bool = true
    ) async throws -> (MQTTClient, Received) {
        let client = try client(broker, clientID: clientID, cleanSession: cleanSession)
        try await client.connect()
        let stream = try await client.subscribe(filter, qos: .atLeastOnce)
        return (client, Received(stream))
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes; returns its last value.
    static func wait(
        timeout: Duration, _ condition: @Sendable () async throws -> Bool
    ) async rethrows -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return try await condition()
    }
}
