import Configuration
import Decoders
import Gateway
import Logging
import MQTT
import SystemdNotify
import TaskScope
import Timekeeping

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `blebridge run --config PATH`: runs the gateway until SIGTERM/SIGINT; SIGHUP reloads.
enum RunCommand: CLICommand {
    static let name = "run"
    static let summary = "Run the gateway (BLE -> MQTT, commands back)"
    static let usage = """
        Usage: blebridge run [-c PATH] [--bus ADDRESS] [--broker URL] [--outbox PATH]
                             [--health-interval DURATION]

        Runs the gateway described by the configuration (default ./config.json): scans and
        connects through BlueZ, publishes decoded readings through the SQLite outbox to the MQTT
        broker, and executes the commands the configuration allows. The topics are described in
        docs/mqtt.md.

        Options:
          -c, --config PATH     Configuration file (default config.json)
          --bus ADDRESS         D-Bus address instead of bluetooth.bus (e.g. unix:path=/run/x)
          --broker URL          Broker URL instead of mqtt.url
          --outbox PATH         Outbox database instead of outbox.path
          --health-interval DURATION
                                How often bridge/health is published, e.g. 30s or 2m (default 30s)

        Signals: SIGTERM or SIGINT drain in-flight work, publish the offline state and exit 0;
        SIGHUP reloads the configuration (device changes apply without touching other devices).
        Over MQTT, bridge/request/config/reload does what SIGHUP does and bridge/request/restart
        stops gracefully and starts again in the same process.

        Exit status: 0 stopped by SIGTERM or SIGINT, 64 usage error, 66 configuration missing or
        unreadable, 78 invalid configuration, 69 the gateway could not start (systemd restarts it).
        """

    static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus {
        let path = try arguments.option("config", short: "c") ?? "config.json"
        var options = GatewayOptions()
        options.busAddress = try arguments.option("bus")
        options.brokerURL = try arguments.option("broker")
        options.outboxPath = try arguments.option("outbox")
        if let interval = try arguments.option(
            "health-interval", expected: DurationParser.acceptedForms, parse: DurationParser.parse)
        {
            options.healthInterval = interval
        }
        try arguments.finish()
        let configuration = try loadConfiguration(path: path)
        options.controlRequests = [.reload, .restart]
        return try await runGateway(configuration: configuration, configurationPath: path, options: options)
    }

    /// What the run loop waits for: a signal, the end of the gateway's start, or a control
    /// request over MQTT.
    enum RunEvent: Sendable {
        case signal(Int32)
        case started
        case startFailed(any Error)
        case control(GatewayControlRequest)
    }

    /// Runs until SIGTERM/SIGINT; shared with `demo`.
    ///
    /// Signals are taken from the moment the gateway exists, also while it is still starting: a
    /// start can wait a long time (a frozen broker never acknowledges the first retained publish),
    /// and a SIGTERM then must stop the gateway, not wait for a start that may never end
    /// (issue 19, D4).
    static func runGateway(
        configuration: BridgeConfiguration, configurationPath: String, options: GatewayOptions
    ) async throws -> ExitStatus {
        let logger = Logger(label: "run")
        #if canImport(Glibc)
            ExternalFatalSignals.install()
        #endif
        for warning in configuration.warnings { logger.warning(warning) }
        let signals = SignalEvents.stream([SIGTERM, SIGINT, SIGHUP])
        let gateway: Gateway
        do {
            gateway = try await Gateway(configuration: configuration, options: options)
        } catch {
            throw startFailure(error)
        }
        let (events, eventSink) = AsyncStream.makeStream(of: RunEvent.self)
        // The command's own tasks (the event feeders, STATUS= forwarding) in one group, ended
        // before it returns. (The gateway's tasks are the gateway's scope.)
        let tasks = TaskScope()
        tasks.spawn { for await signal in signals { eventSink.yield(.signal(signal)) } }
        // The gateway runs in this child (its tasks are the child's); it returns once the stop
        // below has ended them.
        tasks.spawn {
            await gateway.run { outcome in
                switch outcome {
                case .success: eventSink.yield(.started)
                case .failure(let error): eventSink.yield(.startFailed(error))
                }
            }
        }
        tasks.spawn { for await request in gateway.controlRequests { eventSink.yield(.control(request)) } }
        /// Ends them; bounded, as a start still waiting on a frozen broker may not end at once, nor
        /// a gateway task that ignores its cancellation past the stop's deadline (the stop logs it).
        func endTasks() async { await tasks.close(until: .now + .seconds(1)) }
        var notifier: SystemdNotifier?
        var watchdog: ScopedTask?
        var statusTask: ScopedTask?
        var running = false
        /// SIGHUP and `bridge/request/config/reload`: the same reload; nil when it applied.
        func reload() async -> String? {
            try? notifier?.notify(.reloading)
            defer { try? notifier?.notify(.ready) }
            do {
                let reloaded = try ConfigurationLoader(knownDecoders: DecoderRegistry.standard.knownNames)
                    .load(path: configurationPath)
                await gateway.reload(reloaded)
                return nil
            } catch {
                logger.error("reload failed; keeping the running configuration", [("error", "\(error)")])
                return "reload failed; keeping the running configuration: \(error)"
            }
        }
        var restart = false
        loop: for await event in events {
            switch event {
            case .startFailed(let error):
                await endTasks()
                throw startFailure(error)
            case .started:
                running = true
                logger.notice("gateway running", [("config", configurationPath)])
                // systemd Type=notify: READY once running, WATCHDOG while the gateway actor answers.
                do {
                    notifier = try SystemdNotifier.fromEnvironment()
                } catch {
                    logger.warning("NOTIFY_SOCKET unusable; not notifying systemd", [("error", "\(error)")])
                }
                try? notifier?.notify(.ready)
                // The watchdog answers while the gateway actor does, Bluetooth or not (a restart cannot
                // bring bluetoothd back); the Bluetooth state goes to STATUS= and bridge/health instead.
                watchdog = notifier.flatMap { notifier in
                    tasks.spawnCancellable { await notifier.runWatchdog { await gateway.isHealthy() } }
                }
                // STATUS= follows the gateway's ServiceStatus (Bluetooth, devices, broker, outbox).
                statusTask = notifier.flatMap { notifier in
                    tasks.spawnCancellable {
                        await forwardStatus(gateway.statusUpdates, to: notifier, clock: ContinuousClock())
                    }
                }
            case .signal(SIGHUP):
                guard running else {
                    logger.warning("SIGHUP while starting; the configuration is not reloaded")
                    continue
                }
                _ = await reload()
            case .control(let request) where request.kind == .reload:
                await request.answer(await reload())
            case .control:
                restart = true
                break loop
            case .signal(let signal):
                logger.notice(
                    running ? "signal received; shutting down" : "signal received while starting; shutting down",
                    [("signal", signal == SIGTERM ? "SIGTERM" : "SIGINT")])
                break loop
            }
        }
        statusTask?.cancel()
        if restart {
            // systemd (Type=notify) sees a reload: the same process sends READY=1 again once restarted.
            try? notifier?.notify(.reloading, .status("restarting: draining in-flight work"))
        } else {
            try? notifier?.notify(.stopping, .status("stopping: draining in-flight work"))
        }
        watchdog?.cancel()
        await gateway.stop()
        await endTasks()
        if restart { try restartProcess() }
        return .success
    }

    /// An MQTT setting the client rejects is a configuration error (78: not restarted by systemd);
    /// anything else may pass (69: restarted).
    private static func startFailure(_ error: any Error) -> CommandLineError {
        let status: ExitStatus =
            (error as? MQTTError)?.code == .invalidConfiguration || error is PassiveScanUnavailable
            ? .configuration : .unavailable
        return CommandLineError.failure("could not start the gateway: \(error)", status: status)
    }

    /// `bridge/request/restart`, after the graceful stop: the same process image runs again with
    /// the same arguments and environment (same PID, so systemd keeps tracking it). The mask and
    /// the dispositions of SIGTERM and SIGINT are reset first, since `exec` keeps them: until the
    /// new process sets its own at start, those stop it instead of being lost. SIGHUP is ignored
    /// (`exec` resets a caught signal to its default action, which would end the gateway, and
    /// systemd counts a death by SIGHUP as a clean exit: no `Restart=on-failure`); a reload lost
    /// there costs nothing, since the new process reads the configuration file anyway.
    private static func restartProcess() throws {
        Logger(label: "run").notice("restarting", [("executable", "/proc/self/exe")])
        var empty = sigset_t()
        sigemptyset(&empty)
        sigprocmask(SIG_SETMASK, &empty, nil)
        for number in [SIGTERM, SIGINT] { signal(number, SIG_DFL) }
        signal(SIGHUP, SIG_IGN)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        throw CommandLineError.failure(
            "restart failed: cannot execute /proc/self/exe: \(String(cString: strerror(errno)))", status: .software)
    }
}
