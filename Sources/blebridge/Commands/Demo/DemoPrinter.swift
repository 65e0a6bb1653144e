import Foundation
import Gateway
import MQTT
import Timekeeping

/// Prints the gateway's topics and payloads as they flow (`blebridge demo`).
actor DemoPrinter {
    private let client: MQTTClient
    /// The time printed before each message.
    private let clock: any BridgeClock
    private var task: Task<Void, Never>?

    private init(client: MQTTClient, clock: any BridgeClock) {
        self.client = client
        self.clock = clock
    }

    static func start(url: String, quiet: Bool, clock: any BridgeClock = SystemClock()) async throws -> DemoPrinter {
        let client = MQTTClient(configuration: try MQTTConfiguration(url: url, clientID: "blebridge-demo-printer"))
        try await client.connect()
        let printer = DemoPrinter(client: client, clock: clock)
        if !quiet {
            let messages = try await client.subscribe("blebridge/#", qos: .atMostOnce)
            let discovery = try await client.subscribe("homeassistant/#", qos: .atMostOnce)
            await printer.follow(messages, discovery)
        }
        return printer
    }

    private func follow(_ messages: AsyncStream<MQTTMessage>, _ discovery: AsyncStream<MQTTMessage>) {
        let clock = clock
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        guard !message.topic.hasSuffix("/set"), !message.topic.hasSuffix("/get") else {
                            StandardStreams.out("→ \(message.topic) \(message.text)\n")
                            continue
                        }
                        StandardStreams.out("\(Self.time(clock)) \(message.topic) \(message.text)\n")
                    }
                }
                group.addTask {
                    for await message in discovery where !message.payload.isEmpty {
                        StandardStreams.out("\(Self.time(clock)) \(message.topic) (Home Assistant discovery)\n")
                    }
                }
            }
        }
    }

    /// The time of day (UTC, milliseconds) of `clock`'s now.
    static func time(_ clock: any BridgeClock) -> String {
        String(Timestamp.iso8601(clock.date).dropFirst(11).prefix(12))
    }

    func stop() async {
        task?.cancel()
        await client.disconnect()
    }
}
