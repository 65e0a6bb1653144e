import Bluetooth
import DBus
import Logging
import Timekeeping

extension CentralManager {
    /// The exported monitors, their lifecycle and the caller waiting for them to become active.
    struct MonitorSession {
        var root: DBusObjectPath
        var paths: [DBusObjectPath]
        var lifecycle: AdvertisementMonitorLifecycle<DBusObjectPath>
        var scannerID: Int
        var waiter: CheckedContinuation<Void, any Error>?
        var failure: String?
    }

    static let monitorInterface = "org.bluez.AdvertisementMonitor1"

    /// Scans without scan requests through BlueZ's advertisement monitors (`or_patterns`): exports
    /// one `org.bluez.AdvertisementMonitor1` per pattern set under `root` (with an object manager
    /// there), registers `root` with the adapter's `AdvertisementMonitorManager1` and returns once
    /// bluetoothd activated every monitor. Devices a monitor found (`DeviceFound`) are reported
    /// from their `Device1` properties, as ``scan(services:allowDuplicates:rssiThreshold:)`` does,
    /// until it loses them (`DeviceLost`); no discovery session is started. The registration is
    /// renewed when bluetoothd comes back.
    ///
    /// Throws `unsupported` when the adapter has no manager, `alreadyExists` when monitoring
    /// runs already, `operationNotSupported` naming the reason when bluetoothd refuses the
    /// registration or releases a monitor before activating it, `connectionTimeout` when it does
    /// neither within `timeout`.
    public func startMonitoring(
        _ patternSets: [[AdvertisementPattern]], allowDuplicates: Bool = false, rssiThreshold: Int? = nil,
        root: DBusObjectPath = "/io/blebridge/monitor", timeout: Duration = .seconds(10)
    ) async throws -> AsyncStream<Discovery> {
        try requireOpen()
        guard monitoring == nil else { throw BluetoothError(.alreadyExists, "advertisement monitors already run") }
        guard let manager = objects.properties(adapterPath, BlueZNames.advertisementMonitorManager) else {
            throw BluetoothError(.unsupported, "the adapter has no \(BlueZNames.advertisementMonitorManager)")
        }
        let controllerFiltering: Bool
        if case .orPatterns(let features) = AdvertisementMonitorSupport(manager: manager) {
            controllerFiltering = features.contains("controller-patterns")
        } else {
            controllerFiltering = false
        }
        let sets = patternSets.filter { !$0.isEmpty }
        guard !sets.isEmpty else { throw BluetoothError(.operationNotSupported, "no patterns to monitor") }
        try await connection.addObjectManager(at: root)
        var paths: [DBusObjectPath] = []
        for (index, patterns) in sets.enumerated() {
            let path = try root.appending("monitor\(index)")
            try await connection.export(path: path, interfaces: [monitorInterface(patterns)])
            paths.append(path)
        }
        nextScannerID += 1
        let id = nextScannerID
        let filter = DiscoveryFilter(services: [], rssiThreshold: rssiThreshold, allowDuplicates: allowDuplicates)
        let (stream, continuation) = AsyncStream.makeStream(of: Discovery.self, bufferingPolicy: .bufferingNewest(1024))
        var scanner = Scanner(filter: filter, continuation: continuation)
        scanner.monitor = true
        scanners[id] = scanner
        monitoring = MonitorSession(
            root: root, paths: paths,
            lifecycle: AdvertisementMonitorLifecycle(
                monitors: Set(paths.map(\.rawValue)), controllerFiltering: controllerFiltering),
            scannerID: id)
        monitorManagerChanged()
        // How long bluetoothd may take to activate the monitors.
        let timeoutTask = scope.spawnTimer(at: options.clock.now + timeout, clock: options.clock) { [weak self] in
            await self?.monitorWaitEnded(
                BluetoothError(
                    .connectionTimeout, "bluetoothd did not activate the advertisement monitors in \(timeout)"))
        }
        defer { timeoutTask?.cancel() }
        do {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                if monitoring?.lifecycle.wasReady == true {
                    waiter.resume()
                } else if let failure = monitoring?.failure {
                    waiter.resume(throwing: BluetoothError(.operationNotSupported, failure))
                } else {
                    monitoring?.waiter = waiter
                }
            }
        } catch {
            await stopMonitoring()
            throw error
        }
        return stream
    }

    /// Unregisters the monitors (bluetoothd releases them), removes their objects and ends the stream.
    public func stopMonitoring() async {
        guard var session = monitoring else { return }
        monitoring = nil
        let actions = session.lifecycle.handle(.stop)
        scanners.removeValue(forKey: session.scannerID)?.continuation.finish()
        session.waiter?.resume(throwing: BluetoothError(.operationCancelled, "monitoring stopped"))
        if actions.contains(.unregister) {
            _ = try? await connection.call(
                destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.advertisementMonitorManager,
                method: "UnregisterMonitor", arguments: [.objectPath(session.root)], timeout: options.callTimeout)
        }
        for path in session.paths { try? await connection.unexport(path: path) }
    }

    /// The adapter's `AdvertisementMonitorManager1` may have come or gone.
    func monitorManagerChanged() {
        let present = objects.properties(adapterPath, BlueZNames.advertisementMonitorManager) != nil
        monitorManagerBroadcaster.yield(present)
        monitorEvent(.managerAvailable(present))
    }

    func monitorEvent(_ event: AdvertisementMonitorLifecycle<DBusObjectPath>.Event) {
        guard var session = monitoring else { return }
        let actions = session.lifecycle.handle(event)
        monitoring = session
        for action in actions {
            switch action {
            case .register: registerMonitors(session.root)
            case .unregister: break
            case .ready: monitorWaitEnded(nil)
            case .failed(let reason):
                monitoring?.failure = reason
                monitorWaitEnded(BluetoothError(.operationNotSupported, reason))
            case .released(let path):
                Self.logger.warning("bluetoothd released an advertisement monitor", [("path", path)])
            case .report(let device):
                reportDiscovery(device, changed: [], advertisingReport: true)
            }
        }
    }

    /// `event` from a method call of bluetoothd's, once the signals it sent before the call are handled.
    func monitorEvent(_ event: AdvertisementMonitorLifecycle<DBusObjectPath>.Event, after signals: UInt64) async {
        await waitForSignals(through: signals)
        monitorEvent(event)
    }

    /// Returns once the signal numbered `sequence` (``DBusSignal/sequence``) has been handled, or the
    /// manager closed. The manager's stream has every signal of bluetoothd's, in order, so the one
    /// numbered `sequence` reaches it.
    func waitForSignals(through sequence: UInt64) async {
        guard sequence > signalsHandled, !closed else { return }
        await withCheckedContinuation { continuation in signalWaiters.append((sequence, continuation)) }
    }

    /// The signal numbered `sequence` was handled: the calls waiting for it go on.
    func signalHandled(_ sequence: UInt64) {
        signalsHandled = max(signalsHandled, sequence)
        guard !signalWaiters.isEmpty else { return }
        let handled = signalsHandled
        let ready = signalWaiters.filter { $0.sequence <= handled }
        signalWaiters.removeAll { $0.sequence <= handled }
        for waiter in ready { waiter.continuation.resume() }
    }

    private func monitorWaitEnded(_ error: BluetoothError?) {
        guard let waiter = monitoring?.waiter else { return }
        monitoring?.waiter = nil
        if let error { waiter.resume(throwing: error) } else { waiter.resume() }
    }

    private func registerMonitors(_ root: DBusObjectPath) {
        let connection = self.connection
        let path = adapterPath
        let timeout = options.callTimeout
        // Sent now (before any `UnregisterMonitor` that follows); the reply is awaited in the scope.
        let call = Result {
            try connection.startCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.advertisementMonitorManager,
                method: "RegisterMonitor", arguments: [.objectPath(root)], timeout: timeout)
        }
        let awaiting = scope.spawn {
            do {
                _ = try await call.get().reply()
                await self.monitorEvent(.registerSucceeded)
            } catch {
                await self.monitorEvent(.registerFailed("\(error)"))
            }
        }
        if !awaiting { (try? call.get())?.cancel() }
    }

    /// `org.bluez.AdvertisementMonitor1` for one pattern set: `or_patterns`, no RSSI thresholds
    /// (bluetoothd then calls `DeviceFound` for every matching advertisement when it filters in
    /// software, src/adv_monitor.c 5.66 `adv_monitor_filter_rssi`).
    private func monitorInterface(_ patterns: [AdvertisementPattern]) -> DBusInterface {
        let value = DBusValue.array(
            elementSignature: "(yyay)",
            patterns.map { .structure([.byte($0.startPosition), .byte($0.adType), .bytes($0.content)]) })
        return DBusInterface(
            name: Self.monitorInterface,
            methods: [
                DBusMethod(name: "Release") { [weak self] call in
                    await self?.monitorEvent(.released(call.path.rawValue))
                    return []
                },
                DBusMethod(name: "Activate") { [weak self] call in
                    await self?.monitorEvent(.activated(call.path.rawValue))
                    return []
                },
                // bluetoothd updates the device's properties, then calls: the report is of the
                // advertisement that matched only once those signals were handled.
                DBusMethod(name: "DeviceFound", inSignature: "o") { [weak self] call in
                    if let device = call.arguments.first?.asObjectPath {
                        await self?.monitorEvent(.deviceFound(device), after: call.signalsBefore)
                    }
                    return []
                },
                DBusMethod(name: "DeviceLost", inSignature: "o") { [weak self] call in
                    if let device = call.arguments.first?.asObjectPath {
                        await self?.monitorEvent(.deviceLost(device), after: call.signalsBefore)
                    }
                    return []
                },
            ],
            properties: [
                DBusProperty(name: "Type", signature: "s", get: { .string("or_patterns") }),
                DBusProperty(name: "Patterns", signature: "a(yyay)", get: { value }),
            ])
    }
}
