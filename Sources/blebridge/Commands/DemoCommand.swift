import BlueZSimulator
import Configuration
import Foundation
import Gateway
import Logging
import MQTT
import TaskPool
import Timekeeping

/// `blebridge demo`: the whole product on a machine without Bluetooth.
enum DemoCommand: CLICommand {
    static let name = "demo"
    static let summary = "Run the gateway against the simulator and a local broker"
    static let usage = """
        Usage: blebridge demo [-c PATH] [--quiet]
                              [--gateways N [--stop-after DURATION] [--restart-after DURATION]]

        Starts a private dbus-daemon, the BlueZ simulator with the demo scenario (heart-rate strap,
        thermometer, BTHome sensor, iBeacon, lamp), a mosquitto broker on a free loopback port, and
        the gateway with the configuration (default ./config.json) pointed at them. Prints the
        topics and payloads as they flow and the mosquitto_pub line that switches the simulated
        lamp. Runs until Ctrl-C, then stops and removes everything it started.

        With --gateways N (2 to 5), runs N gateways in shared-broker mode on one mosquitto, each
        with its own simulated adapter that hears every device at its own signal strength
        (docs/multi-gateway.md), and prints the table of device owners and rooms whenever it changes
        (instead of the messages). A gateway that stops (--stop-after, or `kill -KILL <pid>`) is
        started again after --restart-after: its devices move to the next best gateway, then
        come back.

        Options:
          -c, --config PATH   Configuration file (default config.json)
          --quiet             Do not print the messages, only the instructions
          --gateways N        Run N gateways (2 to 5) in shared-broker mode
          --stop-after DURATION
                              With --gateways: SIGKILL the gateway that owns most devices after
                              DURATION (e.g. 30s), to show the failover
          --restart-after DURATION
                              With --gateways: start a stopped gateway again after DURATION
                              (default 30s), to show the hand-back

        Exit status: 0 after Ctrl-C, 64 usage error, 66 configuration missing or unreadable,
        78 invalid configuration, 69 dbus-daemon or mosquitto could not be started (or, with
        --gateways, a gateway exited with an error: the end of its log is printed).
        """

    static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus {
        let path = try arguments.option("config", short: "c") ?? "config.json"
        let quiet = arguments.flag("quiet")
        let gateways = try arguments.option("gateways", expected: "a number of gateways from 2 to 5") {
            Int($0).flatMap { (2...5).contains($0) ? $0 : nil }
        }
        let stopAfter = try arguments.option(
            "stop-after", expected: DurationParser.acceptedForms, parse: DurationParser.parse)
        let restartAfter = try arguments.option(
            "restart-after", expected: DurationParser.acceptedForms, parse: DurationParser.parse)
        try arguments.finish()
        if gateways == nil, stopAfter != nil || restartAfter != nil {
            throw CommandLineError.usage("--stop-after and --restart-after need --gateways")
        }
        let configuration = try loadConfiguration(path: path)
        if let gateways {
            return try await MultiGatewayDemo(
                configurationPath: path, configuration: configuration, count: gateways, stopAfter: stopAfter,
                restartDelay: restartAfter ?? .seconds(30)
            ).run()
        }
        let logger = Logger(label: "demo")

        // A SIGKILLed demo's directory is removed by the next demo (TemporaryWorkspace).
        let workspace = try TemporaryWorkspace(prefix: "blebridge-demo")
        defer { workspace.remove() }

        let bus: PrivateBus
        do {
            bus = try await PrivateBus.start(endingWithParent: TaskPool.isInstalled)
        } catch {
            throw CommandLineError.failure("could not start dbus-daemon: \(error)", status: .unavailable)
        }
        defer { bus.stop() }
        let simulator = BlueZSimulator(scenario: try Scenario.load("demo"))
        try await simulator.start(busAddress: bus.address)
        let broker = try await DemoBroker.start(directory: workspace.path)
        defer { broker.stop() }
        logger.notice("demo started", [("bus", bus.address), ("broker", broker.url)])

        let printer = try await DemoPrinter.start(url: broker.url, quiet: quiet)
        StandardStreams.out(
            """

            BLEBridge demo: simulated devices on a private D-Bus, broker \(broker.url)
              watch:   mosquitto_sub -h 127.0.0.1 -p \(broker.port) -t 'blebridge/#' -v
              lamp on: mosquitto_pub -h 127.0.0.1 -p \(broker.port) -t blebridge/lamp/set -m '{"power":true,"brightness":80,"transaction":"demo-1"}'
              answer:  blebridge/bridge/response/lamp/set   (the lamp's state follows on blebridge/lamp)
            Ctrl-C stops everything.


            """)
        var options = GatewayOptions()
        options.busAddress = bus.address
        options.brokerURL = broker.url
        options.outboxPath = workspace.url.appendingPathComponent("outbox.sqlite").path
        options.healthInterval = .seconds(10)
        // The demo's broker and bus live in this process: a restart would take them down.
        options.controlRequests = [.reload]
        let status = try await RunCommand.runGateway(
            configuration: configuration, configurationPath: path, options: options)
        logger.debug("stopping the printer")
        await printer.stop()
        logger.debug("stopping the simulator")
        await simulator.stop()
        logger.debug("stopping the broker and the bus")
        return status
    }
}
