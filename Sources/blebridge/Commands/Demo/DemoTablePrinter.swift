import MQTT
import Timekeeping

/// Prints ``DemoInstallation``'s table whenever its signature changes (`blebridge demo --gateways N`).
/// Changes that arrive together (a gateway's record and its candidacies) are printed as one
/// table, half a second after the first of them.
actor DemoTablePrinter {
    private let client: MQTTClient
    private let clock: any BridgeClock
    private(set) var installation: DemoInstallation
    private var printed = ""
    private var task: Task<Void, Never>?
    private var pending: Task<Void, Never>?

    private init(client: MQTTClient, installation: DemoInstallation, clock: any BridgeClock) {
        self.client = client
        self.installation = installation
        self.clock = clock
    }

    static func start(
        url: String, installation: DemoInstallation, clock: any BridgeClock = SystemClock()
    ) async throws -> DemoTablePrinter {
        let client = MQTTClient(configuration: try MQTTConfiguration(url: url, clientID: "blebridge-demo-table"))
        try await client.connect()
        let printer = DemoTablePrinter(client: client, installation: installation, clock: clock)
        var streams: [AsyncStream<MQTTMessage>] = []
        for filter in installation.filters { streams.append(try await client.subscribe(filter, qos: .atLeastOnce)) }
        await printer.follow(streams)
        return printer
    }

    private func follow(_ streams: [AsyncStream<MQTTMessage>]) {
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                for stream in streams {
                    group.addTask {
                        for await message in stream { await self.apply(message) }
                    }
                }
            }
        }
    }

    private func apply(_ message: MQTTMessage) {
        guard installation.apply(topic: message.topic, payload: message.payload), pending == nil else { return }
        pending = Task {
            // Coalesces the burst one change brings (a record and its candidacies) into one table.
            try? await Task.sleep(for: .milliseconds(500))
            self.printTable()
        }
    }

    private func printTable() {
        pending = nil
        let signature = installation.signature
        guard signature != printed else { return }
        printed = signature
        StandardStreams.out("\(DemoPrinter.time(clock))\n\(installation.table())\n\n")
    }

    func stop() async {
        task?.cancel()
        pending?.cancel()
        await client.disconnect()
    }
}
