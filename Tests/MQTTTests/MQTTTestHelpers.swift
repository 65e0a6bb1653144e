import MQTT
import TestSupport
import Testing

/// Time-bounded waits for the MQTT tests.
enum MQTTTestHelpers {
    /// Collects up to `count` elements, or what arrived before `timeout`. On a time-out the
    /// consuming task is cancelled, which ends the stream: call it once per stream unless it
    /// returns all `count` elements.
    static func collect<Element: Sendable>(
        _ stream: AsyncStream<Element>, count: Int, timeout: Duration = .seconds(5)
    ) async -> [Element] {
        await withTaskGroup(of: [Element]?.self) { group in
            group.addTask {
                var received: [Element] = []
                for await element in stream {
                    received.append(element)
                    if received.count == count { break }
                }
                return received
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            var result: [Element] = []
            while let next = await group.next() {
                if let next {
                    result = next
                    break
                }
                group.cancelAll()
            }
            group.cancelAll()
            return result
        }
    }

    /// Waits until the client's state satisfies `predicate`; returns false on time-out.
    static func waitForState(
        _ client: MQTTClient, timeout: Duration = .seconds(10),
        _ predicate: @escaping @Sendable (MQTTConnectionState) -> Bool
    ) async -> Bool {
        let states = client.connectionStates
        return await withDeadline(timeout) {
            for await state in states where predicate(state) { return true }
            return false
        } ?? false
    }

    static func configuration(
        _ broker: MosquittoFixture, clientID: String, protocolVersion: MQTTProtocolVersion = .v5,
        cleanSession: Bool = true, will: MQTTMessage? = nil
    ) throws -> MQTTConfiguration {
        try MQTTConfiguration(
            url: broker.url, clientID: clientID, protocolVersion: protocolVersion, keepAlive: .seconds(10),
            cleanSession: cleanSession, will: will, minimumReconnectDelay: .milliseconds(50),
            maximumReconnectDelay: .milliseconds(500), connectTimeout: .seconds(5))
    }

    static func connectedClient(
        _ broker: MosquittoFixture, clientID: String, protocolVersion: MQTTProtocolVersion = .v5,
        cleanSession: Bool = true, will: MQTTMessage? = nil
    ) async throws -> MQTTClient {
        let client = MQTTClient(
            configuration: try configuration(
                broker, clientID: clientID, protocolVersion: protocolVersion, cleanSession: cleanSession, will: will))
        try await client.connect()
        return client
    }
}
