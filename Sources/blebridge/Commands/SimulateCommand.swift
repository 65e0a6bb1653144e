import BlueZSimulator
import Foundation
import Gateway
import TaskPool

#if canImport(Glibc)
    import Glibc
#endif

/// `blebridge simulate`: runs the BlueZ simulator (a virtual `org.bluez`) until Ctrl-C.
struct SimulateCommand: CLICommand {
    static let name = "simulate"
    static let summary = "Run the BlueZ simulator (a virtual org.bluez) on a D-Bus bus"
    static let usage = """
        Usage: blebridge simulate [--scenario NAME|PATH] [--bus ADDRESS] [--seed N]
               blebridge simulate --list
               blebridge simulate --print NAME

        Claims org.bluez on a D-Bus bus and behaves like bluetoothd 5.66 with the virtual devices of
        a scenario, until Ctrl-C. Fault injection and observation: the io.blebridge.Simulator name
        (see docs/simulator.md).

          --scenario NAME|PATH   a built-in scenario (default: demo) or a scenario JSON file
          --bus ADDRESS          the bus to use (unix:path=…); default: start a private dbus-daemon
                                 and print the DBUS_SYSTEM_BUS_ADDRESS to export for clients
          --seed N               seed for RSSI jitter and generated values (default 1)
          --list                 list the built-in scenarios
          --print NAME           print a built-in scenario's JSON (to copy and edit)

        Exit status: 0 after Ctrl-C, 65 invalid scenario (the message names the JSON key path),
        66 scenario file missing, 69 bus unavailable or org.bluez already owned, 64 usage error.
        """

    static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus {
        let list = arguments.flag("list")
        let printName = try arguments.option("print")
        let scenarioName = try arguments.option("scenario") ?? "demo"
        let busAddress = try arguments.option("bus")
        let seed = try arguments.option("seed", expected: "a whole number", parse: { UInt64($0) }) ?? 1
        try arguments.finish()
        if list {
            for name in BuiltInScenarios.names {
                let description = (try? Scenario.load(name).description) ?? ""
                StandardStreams.out("\(name)\t\(description)\n")
            }
            return .success
        }
        if let printName {
            guard let json = BuiltInScenarios.json(named: printName) else {
                throw CommandLineError.usage(
                    "--print \(printName): expected one of \(BuiltInScenarios.names.joined(separator: ", "))")
            }
            StandardStreams.out(json + "\n")
            return .success
        }
        // Taken from here on, before anything starts: "Press Ctrl-C" printed before the handler was
        // in place let a SIGINT sent on seeing it end the process by the default action (a
        // script's, or `make stress`'s AllocatorTunablesTests under load, 2026-12-05).
        let terminations = SignalEvents.stream([SIGINT, SIGTERM])
        let scenario: Scenario
        do {
            scenario = try Scenario.load(scenarioName)
        } catch {
            let status: ExitStatus =
                switch error.code {
                case .fileNotFound, .unreadableFile: .noInput
                case .unknownScenario: .usage
                default: .dataError
                }
            throw CommandLineError.failure(error.description, status: status)
        }

        var privateBus: PrivateBus?
        let address: String
        if let busAddress {
            address = busAddress
        } else {
            do {
                privateBus = try await PrivateBus.start(endingWithParent: TaskPool.isInstalled)
            } catch {
                throw CommandLineError.failure("\(error)", status: .unavailable)
            }
            address = privateBus!.address
        }
        let simulator = BlueZSimulator(scenario: scenario, options: .init(seed: seed))
        do {
            try await simulator.start(busAddress: address)
        } catch {
            privateBus?.stop()
            throw CommandLineError.failure("cannot run the simulator on \(address): \(error)", status: .unavailable)
        }
        let addresses = await simulator.deviceAddresses()
        StandardStreams.out(
            """
            blebridge simulate: scenario \(scenario.name) (\(counted(addresses.count, "device"))) on \(address)
            export DBUS_SYSTEM_BUS_ADDRESS='\(address)'
            control: busctl --address='\(address)' call \(SimulatorNames.control) \(BlueZSimulator.controlPath) \
            \(BlueZSimulator.controlInterface) ListDevices
            Press Ctrl-C to stop.

            """)
        for await _ in terminations { break }
        await simulator.stop()
        privateBus?.stop()
        StandardStreams.out("blebridge simulate: stopped\n")
        return .success
    }
}
