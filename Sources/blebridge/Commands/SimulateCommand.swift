import BlueZSimulator
import Dispatch
import Foundation
import Synchronization

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
                privateBus = try await PrivateBus.start()
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
        await waitForTermination()
        await simulator.stop()
        privateBus?.stop()
        StandardStreams.out("blebridge simulate: stopped\n")
        return .success
    }

    /// Returns on SIGINT or SIGTERM.
    private static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = TerminationLatch(continuation)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { once.fire() }
                source.resume()
                once.keep(source)
            }
        }
    }
}

/// Resumes a continuation once, from whichever signal comes first, and keeps the signal sources alive.
private final class TerminationLatch: Sendable {
    private let state: Mutex<(continuation: CheckedContinuation<Void, Never>?, sources: [any DispatchSourceSignal])>

    init(_ continuation: CheckedContinuation<Void, Never>) {
        state = Mutex((continuation, []))
    }

    func keep(_ source: any DispatchSourceSignal) {
        state.withLock { $0.sources.append(source) }
    }

    func fire() {
        let continuation = state.withLock { value in
            defer { value.continuation = nil }
            return value.continuation
        }
        continuation?.resume()
    }
}
