import Foundation
import Gateway
import MQTT
import Timekeeping

/// Prints the gateway's topics and payloads as they flow (`blebridge demo`).
actor DemoPrinter {
    private let client: MQTTClient
    private var task: Task<Void, Never>?

    private init(client: MQTTClient) {
        self.client = client
    }

    static func start(url: String, quiet: Bool) async throws -> DemoPrinter {
        let client = MQTTClient(configuration: try MQTTConfiguration(url: url, clientID: "blebridge-demo-printer"))
        try await client.connect()
        let printer = DemoPrinter(client: client)
        if !quiet {
            let messages = try await client.subscribe("blebridge/#", qos: .atMostOnce)
            let discovery = try await client.subscribe("homeassistant/#", qos: .atMostOnce)
            await printer.follow(messages, discovery)
        }
        return printer
    }

    private func follow(_ messages: AsyncStream<MQTTMessage>, _ discovery: AsyncStream<MQTTMessage>) {
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in messages {
                        guard !message.topic.hasSuffix("/set"), !message.topic.hasSuffix("/get") else {
                            StandardStreams.out("→ \(message.topic) \(message.text)\n")
                            continue
                        }
                        StandardStreams.out("\(Self.time()) \(message.topic) \(message.text)\n")
                    }
                }
                group.addTask {
                    for await message in discovery where !message.payload.isEmpty {
                        StandardStreams.out("\(Self.time()) \(message.topic) (Home Assistant discovery)\n")
                    }
                }
            }
        }
    }

    private static func time() -> String {
        String(Timestamp.iso8601(Date()).dropFirst(11).prefix(12))
    }

    func stop() async {
        task?.cancel()
        await client.disconnect()
    }
}
