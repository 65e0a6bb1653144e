import BlueZSimulator
import Configuration
import Foundation
import Gateway
import JSON
import Logging
import MQTT
import TaskPool
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// `blebridge demo --gateways N`: the shared-broker mode (docs/multi-gateway.md) on one machine.
/// One mosquitto; per gateway a private bus, a simulated adapter that hears the demo's devices at
/// its own RSSI (each device is nearest one gateway), and a `blebridge run` child process with
/// `mqtt.shared_broker` on. Prints the table of owners (and rooms) whenever it changes; a gateway
/// that stops (`--stop-after`, or a `kill` by the user) is started again after `restartDelay`, so
/// both the failover and the hand-back show.
struct MultiGatewayDemo {
    let configurationPath: String
    let configuration: BridgeConfiguration
    let count: Int
    let stopAfter: Duration?
    let restartDelay: Duration

    /// Names and rooms of up to five gateways.
    static let names = ["gw-a", "gw-b", "gw-c", "gw-d", "gw-e"]
    static let rooms = ["lounge", "kitchen", "bedroom", "hall", "office"]

    private enum Event: Sendable {
        case signal(Int32)
        case exited(index: Int, signalled: Bool, status: Int32)
        case stopOne
        case restart(index: Int)
    }

    func run() async throws -> ExitStatus {
        let logger = Logger(label: "demo")
        let signals = SignalEvents.stream([SIGTERM, SIGINT])
        // A SIGKILLed demo's directory is removed by the next demo (TemporaryWorkspace).
        let workspace = try TemporaryWorkspace(prefix: "blebridge-demo")
        defer { workspace.remove() }
        let document = try Self.document(at: configurationPath)
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path

        let broker = try await DemoBroker.start(directory: workspace.path)
        defer { broker.stop() }
        let gateways = Array(zip(Self.names, Self.rooms).prefix(count))
        var buses: [PrivateBus] = []
        var simulators: [BlueZSimulator] = []
        defer { for bus in buses { bus.stop() } }
        let scenario = try Scenario.load("demo")
        for index in gateways.indices {
            let bus: PrivateBus
            do {
                bus = try await PrivateBus.start(endingWithParent: TaskPool.isInstalled)
            } catch {
                throw CommandLineError.failure("could not start dbus-daemon: \(error)", status: .unavailable)
            }
            buses.append(bus)
            let simulator = BlueZSimulator(scenario: Self.scenario(scenario, gateway: index, of: count))
            try await simulator.start(busAddress: bus.address)
            simulators.append(simulator)
        }

        let (events, sink) = AsyncStream.makeStream(of: Event.self)
        let feeder = Task { for await signal in signals { sink.yield(.signal(signal)) } }
        defer { feeder.cancel() }
        var children: [DemoChild?] = Array(repeating: nil, count: gateways.count)
        var arguments: [[String]] = []
        var logs: [String] = []
        for (index, gateway) in gateways.enumerated() {
            let directory = workspace.url.appendingPathComponent(gateway.0).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = "\(directory)/config.json"
            try Self.configuration(document, gatewayID: gateway.0, room: gateway.1).serialized.write(
                toFile: path, atomically: true, encoding: .utf8)
            arguments.append([
                "run", "--config", path, "--bus", buses[index].address, "--broker", broker.url,
                "--outbox", "\(directory)/outbox.sqlite", "--health-interval", "10s",
            ])
            logs.append("\(directory)/gateway.log")
        }
        func start(_ index: Int) throws {
            if !FileManager.default.fileExists(atPath: logs[index]) {
                _ = FileManager.default.createFile(atPath: logs[index], contents: nil)
            }
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: logs[index]))
            output.seekToEndOfFile()
            children[index] = try DemoChild(
                name: gateways[index].0, executable: executable, arguments: arguments[index], output: output
            ) { signalled, status in
                sink.yield(.exited(index: index, signalled: signalled, status: status))
            }
        }
        for index in gateways.indices { try start(index) }

        let devices = configuration.devices.map(\.id)
        let printer = try await DemoTablePrinter.start(
            url: broker.url,
            installation: DemoInstallation(
                baseTopic: configuration.mqtt.baseTopic, gateways: gateways.map { (id: $0.0, room: $0.1) },
                devices: devices))
        StandardStreams.out(
            """

            BLEBridge demo, \(count) gateways in shared-broker mode (docs/multi-gateway.md), broker \(broker.url)
              gateways: \(gateways.indices.map { "\(gateways[$0].0) pid \(children[$0]?.processIdentifier ?? 0)" }.joined(separator: ", "))
              each simulated adapter hears every device; each device is nearest one gateway.
              watch:    mosquitto_sub -h 127.0.0.1 -p \(broker.port) -t '\(configuration.mqtt.baseTopic)/#' -v
              stop one: kill -KILL <pid>   (the demo starts it again after \(DurationParser.format(restartDelay)))
              logs:     \(workspace.path)/<gateway>/gateway.log
            The table shows each device's owner, each gateway's RSSI (* holds the device) and its room.
            Ctrl-C stops everything.


            """)
        var timers: [Task<Void, Never>] = []
        defer { for timer in timers { timer.cancel() } }
        if let stopAfter {
            timers.append(
                Task {
                    // A demonstration schedule, not synchronisation: when to stop a gateway.
                    try? await Task.sleep(for: stopAfter)
                    sink.yield(.stopOne)
                })
        }
        var status = ExitStatus.success
        loop: for await event in events {
            switch event {
            case .signal:
                break loop
            case .stopOne:
                let installation = await printer.installation
                let owned = gateways.indices.map { index in
                    devices.filter { installation.owner(of: $0) == gateways[index].0 }.count
                }
                let index = owned.indices.max { owned[$0] < owned[$1] } ?? 0
                StandardStreams.out(
                    "\(DemoPrinter.time(SystemClock())) stopping \(gateways[index].0) (SIGKILL): its devices move\n")
                children[index]?.signal(SIGKILL)
            case .exited(let index, let signalled, let code):
                children[index] = nil
                if !signalled, code != 0 {
                    let tail = (try? String(contentsOfFile: logs[index], encoding: .utf8))?.suffix(2000) ?? ""
                    StandardStreams.error("\(gateways[index].0) exited with status \(code):\n\(tail)\n")
                    status = .unavailable
                    break loop
                }
                StandardStreams.out(
                    "\(DemoPrinter.time(SystemClock())) \(gateways[index].0) stopped "
                        + "(\(signalled ? "signal \(code)" : "exit \(code)")); starting it again in "
                        + "\(DurationParser.format(restartDelay))\n")
                let delay = restartDelay
                timers.append(
                    Task {
                        // A demonstration schedule: the stopped gateway returns, to show the hand-back.
                        try? await Task.sleep(for: delay)
                        sink.yield(.restart(index: index))
                    })
            case .restart(let index):
                guard children[index] == nil else { continue }
                try start(index)
                StandardStreams.out(
                    "\(DemoPrinter.time(SystemClock())) \(gateways[index].0) started again "
                        + "(pid \(children[index]?.processIdentifier ?? 0))\n")
            }
        }
        logger.debug("stopping the gateways")
        await withTaskGroup(of: Void.self) { group in
            for child in children.compactMap({ $0 }) { group.addTask { await child.stopped(grace: .seconds(10)) } }
        }
        await printer.stop()
        for simulator in simulators { await simulator.stop() }
        return status
    }

    /// The demo scenario as gateway `index` of `count` hears it: device `k` is nearest gateway
    /// `k % count` (-48 dBm) and 12 dB weaker for each gateway further round the ring, with the
    /// ±3 dB a real radio shows from one advertisement to the next (BlueZ reports an RSSI only
    /// when it changes, so a perfectly steady one would look like a device that went away).
    static func scenario(_ scenario: Scenario, gateway index: Int, of count: Int) -> Scenario {
        var scenario = scenario
        for position in scenario.devices.indices {
            let distance = (index - position % count + count) % count
            scenario.devices[position].rssi = Int16(-48 - 12 * distance)
            scenario.devices[position].rssiJitter = 3
        }
        return scenario
    }

    /// The configuration file as a JSON document (it was loaded and checked already).
    static func document(at path: String) throws -> JSONValue {
        guard let data = FileManager.default.contents(atPath: path), let value = try? JSONParser().parse(Array(data))
        else { throw CommandLineError.failure("\(path): could not read the configuration again", status: .noInput) }
        return value
    }

    /// One gateway's configuration: `gateway_id` set, `mqtt.shared_broker` on, `mqtt.client_id`
    /// removed (it defaults to the gateway id; two gateways with one client id take turns on the
    /// broker) and `presence.room` set (room presence; the section's other keys are kept).
    static func configuration(_ document: JSONValue, gatewayID: String, room: String) -> JSONValue {
        var members = document.objectMembers ?? []
        members.set("gateway_id", .string(gatewayID))
        var mqtt = members.first { $0.key == "mqtt" }?.value.objectMembers ?? []
        mqtt.removeAll { $0.key == "client_id" }
        mqtt.set("shared_broker", .bool(true))
        members.set("mqtt", .object(mqtt))
        var presence = members.first { $0.key == "presence" }?.value.objectMembers ?? []
        presence.set("room", .string(room))
        members.set("presence", .object(presence))
        return .object(members)
    }
}

extension [JSONMember] {
    /// Replaces the member named `key`, or appends it.
    fileprivate mutating func set(_ key: String, _ value: JSONValue) {
        if let index = firstIndex(where: { $0.key == key }) {
            self[index].value = value
        } else {
            append(JSONMember(key, value))
        }
    }
}
