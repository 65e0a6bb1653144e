import Bluetooth
import DBus
import Foundation
import Timekeeping

/// Scanning: each scanner's stream, and the one BlueZ discovery session they share
/// (``DiscoveryArbiter``).
extension CentralManager {
    // MARK: Scanning

    /// Scans for peripherals (`scanForPeripherals(withServices:options:)`). The stream ends when the consumer
    /// stops; discovery stops when the last scanner ends. Scanning pauses while the adapter is off and resumes
    /// when it is back. With `allowDuplicates` false, a peripheral is reported when first seen and whenever its
    /// advertisement changes; with true, on every advertising report (RSSI updates included).
    public func scan(
        services: [BluetoothUUID] = [], allowDuplicates: Bool = false, rssiThreshold: Int? = nil
    ) throws(BluetoothError) -> AsyncStream<Discovery> {
        try requirePoweredOn()
        nextScannerID += 1
        let id = nextScannerID
        let filter = DiscoveryFilter(
            services: Set(services), rssiThreshold: rssiThreshold, allowDuplicates: allowDuplicates)
        let (stream, continuation) = AsyncStream.makeStream(of: Discovery.self, bufferingPolicy: .bufferingNewest(1024))
        scanners[id] = Scanner(filter: filter, continuation: continuation)
        let scope = self.scope
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            scope.spawn { await self.scannerEnded(id) }
        }
        runDiscovery(arbiter.handle(.scannerAdded(id, filter)))
        return stream
    }

    /// True while this process's discovery session runs.
    public var isScanning: Bool { arbiter.isDiscovering }

    private func scannerEnded(_ id: Int) {
        guard scanners.removeValue(forKey: id) != nil else { return }
        runDiscovery(arbiter.handle(.scannerRemoved(id)))
    }

    func runDiscovery(_ actions: [DiscoveryArbiter<Int>.Action]) {
        defer { if !arbiter.isBusy { resumeDiscoveryCallWaiters() } }
        for action in actions {
            switch action {
            case .failScanners(let ids, let error):
                Self.logger.warning("bluetoothd did not start discovery; the scan ends", [("error", "\(error)")])
                for id in ids { scanners.removeValue(forKey: id)?.continuation.finish() }
            case .setFilter(let filter):
                var properties: [String: DBusValue] = [
                    "Transport": .string("le"), "DuplicateData": .boolean(filter.allowDuplicates),
                ]
                if !filter.services.isEmpty {
                    properties["UUIDs"] = .strings(filter.services.sorted().map(\.uuidString))
                }
                if let rssi = filter.rssiThreshold { properties["RSSI"] = .int16(Int16(clamping: rssi)) }
                adapterCall("SetDiscoveryFilter", [.properties(properties)])
            case .startDiscovery: adapterCall("StartDiscovery", [])
            case .stopDiscovery: adapterCall("StopDiscovery", [])
            case .retryLater(let delay, let error):
                Self.logger.warning(
                    "bluetoothd did not start discovery; trying again",
                    [("error", "\(error)"), ("retry_in", "\(delay)")])
                _ = scope.spawnTimer(at: options.clock.now + delay, clock: options.clock) { [weak self] in
                    await self?.discoveryRetryDue()
                }
            }
        }
    }

    /// The call's result reaches the arbiter under the call's number: it may come after the
    /// adapter's signals that made it stale (replies and signals take different paths here).
    private func adapterCall(_ method: String, _ arguments: [DBusValue]) {
        let connection = self.connection
        let path = adapterPath
        let timeout = options.callTimeout
        let number = arbiter.lastCall
        // Sent now, in the arbiter's order; the reply is awaited in the scope.
        let call = Result {
            try connection.startCall(
                destination: BlueZNames.service, path: path, interface: BlueZNames.adapter, method: method,
                arguments: arguments, timeout: timeout)
        }
        let awaiting = scope.spawn {
            do {
                _ = try await call.get().reply()
                await self.discoveryCallFinished(number, nil)
            } catch {
                await self.discoveryCallFinished(number, BluetoothError.from(error, during: .discovery))
            }
        }
        if !awaiting { (try? call.get())?.cancel() }  // closed: nobody is left to hear the answer
    }

    /// Returns once no discovery call is in flight (or the manager is closed). A `Device1.Connect`
    /// that reaches bluetoothd between `SetDiscoveryFilter` and `StartDiscovery` never connected on
    /// the VM tier (bluetoothd 5.66, kernel 6.1: the kernel started discovery while the LE
    /// connection was being created; 30 s, then the connect's time-out): at an adapter's power-on
    /// the scan resumes (`SetDiscoveryFilter`, then `StartDiscovery`) as the gateway reconnects,
    /// so a connect waits for those calls' answers, a few milliseconds.
    func waitForDiscoveryCalls() async {
        while arbiter.isBusy, !closed {
            await withCheckedContinuation { discoveryCallWaiters.append($0) }
        }
    }

    /// How many connects wait for a discovery call's answer (tests wait for one to be in place).
    package var pendingDiscoveryCallWaits: Int { discoveryCallWaiters.count }

    func resumeDiscoveryCallWaiters() {
        guard !discoveryCallWaiters.isEmpty else { return }
        let waiters = discoveryCallWaiters
        discoveryCallWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    private func discoveryRetryDue() {
        guard !closed else { return }
        runDiscovery(arbiter.handle(.retryDue))
    }

    private func discoveryCallFinished(_ number: Int, _ error: BluetoothError?) {
        runDiscovery(arbiter.handle(error.map { .callFailed(number, $0) } ?? .callSucceeded(number)))
    }

    /// Reports a device of this manager's adapter to the scanners (devices under other adapters,
    /// `/org/bluez/hci1/…` for a manager on `hci0`, are not ours and are ignored).
    /// `advertisingReport`: an advertisement arrived without changing a property (a monitor's
    /// `DeviceFound`), reported again when duplicates are allowed, as is a signal of `RSSI`,
    /// `ManufacturerData` or `ServiceData` whose value did not change.
    func reportDiscovery(_ path: DBusObjectPath, changed: Set<String>, advertisingReport: Bool = false) {
        let discovering = arbiter.isDiscovering || arbiter.isBusy
        let monitored = monitoring?.lifecycle.follows(path) ?? false
        guard !scanners.isEmpty, discovering || monitored, isOurDevice(path),
            let properties = objects.properties(path, BlueZNames.device),
            let address = DeviceProperties.address(properties)
        else { return }
        let advertisement = DeviceProperties.advertisement(properties)
        let rssi = DeviceProperties.rssi(properties)
        let peripheral = self.peripheral(for: path, address: address)
        let now = options.clock.now
        // An advertisement heard again: a new RSSI, or (DuplicateData) bluetoothd's signal of the
        // same data again, which it sends for every advertisement while RSSI comes only when it
        // changes; or a monitor's `DeviceFound`.
        let again =
            changed.contains("RSSI") || changed.contains("ManufacturerData") || changed.contains("ServiceData")
            || advertisingReport
        // By id, with no copy of a scanner held while its table is written: a copy kept the table
        // shared, so recording one advertisement copied the whole table (every device it reported).
        for id in scanners.keys.sorted() {
            guard
                let continuation = reportable(
                    by: id, path, advertisement, rssi: rssi, again: again, discovering: discovering,
                    monitored: monitored)
            else { continue }
            scanners[id]?.reported[path] = advertisement
            continuation.yield(
                Discovery(peripheral: peripheral, advertisementData: advertisement, rssi: rssi, timestamp: now))
        }
    }

    /// The stream of scanner `id` when it reports this advertisement of `path`: the scanner's kind
    /// (discovery or monitor) hears it, its filter admits it, and it is new, changed, or again with
    /// duplicates allowed.
    private func reportable(
        by id: Int, _ path: DBusObjectPath, _ advertisement: AdvertisementData, rssi: Int?, again: Bool,
        discovering: Bool, monitored: Bool
    ) -> AsyncStream<Discovery>.Continuation? {
        guard let scanner = scanners[id], scanner.monitor ? monitored : discovering,
            scanner.filter.admits(advertisement, rssi: rssi)
        else { return nil }
        let reported = scanner.reported[path]
        guard reported == nil || reported != advertisement || (scanner.filter.allowDuplicates && again) else {
            return nil
        }
        return scanner.continuation
    }

    /// Whether `path` is a device object of this manager's adapter.
    func isOurDevice(_ path: DBusObjectPath) -> Bool {
        path.isDescendant(of: adapterPath, orEqual: false)
    }
}
