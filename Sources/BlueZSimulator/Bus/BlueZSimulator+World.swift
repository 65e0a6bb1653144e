import Bluetooth
import DBus
import Foundation
import Timekeeping

/// The simulated radio: advertisements while discovering, stale devices, value generators,
/// scheduled faults and load mode.
extension BlueZSimulator {
    func startWorld() {
        let generation = self.generation
        worldTasks.append(
            Task { [weak self, timing] in
                while !Task.isCancelled {
                    // Real delay: the simulated advertising interval.
                    try? await Task.sleep(for: timing.advertisingInterval)
                    guard let self, await self.generation >= generation else { return }
                    await self.advertisingTick()
                }
            })
        for (key, generator) in generators {
            let interval = devices[key.address]!.characteristics[key.id]!.definition.spec.interval
            _ = generator
            worldTasks.append(
                Task { [weak self] in
                    let clock = ContinuousClock()
                    var next = clock.now + interval
                    while !Task.isCancelled {
                        // Real delay: the simulated device's notification period.
                        try? await Task.sleep(until: next, clock: clock)
                        next += interval
                        guard let self else { return }
                        await self.generatorTick(key)
                    }
                })
        }
        for key in deviceOrder {
            for window in devices[key]!.spec.faults.outOfRange {
                worldTasks.append(
                    Task { [weak self] in
                        // Real delay: the scenario's out-of-range window starts then.
                        try? await Task.sleep(for: window.after)
                        guard !Task.isCancelled, let self else { return }
                        await self.setInRange(key, false)
                        guard let duration = window.duration else { return }
                        // Real delay: the out-of-range window's length.
                        try? await Task.sleep(for: duration)
                        guard !Task.isCancelled else { return }
                        await self.setInRange(key, true)
                    })
            }
        }
        if let load = scenario.load {
            startLoad(devices: load.devices, rate: load.rate)
        }
        if let passing = scenario.passing {
            startPassing(passing)
        }
    }

    func generatorTick(_ key: CharacteristicKey) {
        guard var generator = generators[key] else { return }
        let value = generator.next(elapsed: elapsed)
        generators[key] = generator
        updateValue(key, value)
    }

    /// Discovery runs a scan right away when it starts or its filter changes, as a controller does.
    func scheduleAdvertisingSoon() {
        // One-shot and short: not kept (it checks the generation, so a stop or restart voids it).
        let generation = self.generation
        Task { [weak self] in
            // Real delay: a controller's first scan round comes shortly after discovery starts.
            try? await Task.sleep(for: .milliseconds(20))
            guard let self, await self.generation == generation else { return }
            await self.advertisingTick()
        }
    }

    /// One round of advertisements: every device in range that is not connected (or that advertises while
    /// connected, `advertises_while_connected`) advertises once;
    /// discovery reports it through each session's filter; stale temporary devices go.
    func advertisingTick() async {
        guard bluez != nil else { return }
        let now = clock.now
        // Advertisements are received while discovering or while advertisement monitors are
        // registered (bluetoothd's background scan); a monitor's match updates the device even
        // when no discovery filter lets it through (btd_adapter_update_found_device).
        let discovering = adapter.discovering && discoveryAnnounced
        if discovering || (adapter.powered && monitors.isMonitoring) {
            for key in deviceOrder {
                // Not while its objects are being removed (``unexporting``): that advertisement is missed.
                guard let device = devices[key], device.inRange, unexporting[key] == nil,
                    device.link == .disconnected || device.spec.advertisesWhileConnected
                else { continue }
                let spec = device.spec
                let jitter =
                    spec.rssiJitter > 0 ? Int16.random(in: -spec.rssiJitter...spec.rssiJitter, using: &random) : 0
                let rssi = max(-127, min(20, spec.rssi + jitter))
                let discovered =
                    discovering
                    && adapter.reports({ filter in
                        filter.transport != .bredr
                            && filter.matches(
                                uuids: spec.advertisement.serviceUUIDs, rssi: rssi, txPower: spec.txPower,
                                name: spec.name,
                                address: spec.address.string)
                    })
                guard discovered || monitors.isMonitoring else { continue }
                let (manufacturer, service) = advertisedData(key, now: now)
                let matched = matchingMonitors(key, manufacturerData: manufacturer, serviceData: service)
                guard discovered || !matched.isEmpty else { continue }
                let effects = devices[key]!.advertisementSeen(
                    at: now, rssi: rssi, manufacturerData: manufacturer, serviceData: service,
                    rssiDeltaThreshold: !adapter.filtered, duplicateData: discovering && adapter.duplicateData)
                // bluetoothd 5.66 sends the device's PropertiesChanged, then DeviceFound (measured
                // in the VM tier); ``setDeviceFoundFirst(_:)`` swaps them.
                if deviceFoundFirst { monitorsFound(key, matched) }
                await apply(effects, to: key)
                if !deviceFoundFirst { monitorsFound(key, matched) }
            }
        }
        for key in deviceOrder {
            await apply(devices[key]!.expireIfStale(now: now, timeout: timing.staleTimeout), to: key)
        }
        await secondAdapterHeard()
    }

    /// One round of advertisements now, whatever the advertising interval: a test with a long
    /// interval drives the world one advertisement at a time.
    package func advertiseOnce() async { await advertisingTick() }

    /// The service data the device at `address` advertised last (empty before its first advertisement).
    package func advertisedServiceData(of address: BluetoothAddress) -> [BluetoothUUID: [UInt8]] {
        guard let key = deviceOrder.first(where: { devices[$0]?.spec.address == address }),
            let slot = advertising[key]
        else { return [:] }
        var service: [BluetoothUUID: [UInt8]] = [:]
        for entry in slot.service { service[entry.uuid] = entry.value }
        return service
    }

    /// The device's current advertised data, regenerated once per update interval.
    func advertisedData(_ key: String, now: ContinuousClock.Instant) -> ([UInt16: [UInt8]], [BluetoothUUID: [UInt8]]) {
        guard var slot = advertising[key] else { return ([:], [:]) }
        let interval = devices[key]!.spec.advertisement.updateInterval ?? timing.advertisingInterval
        if slot.lastUpdate.map({ now - $0 >= interval }) ?? true {
            slot.lastUpdate = now
            let elapsed = self.elapsed
            for index in slot.manufacturer.indices {
                if var generator = slot.manufacturer[index].generator {
                    slot.manufacturer[index].value = generator.next(elapsed: elapsed)
                    slot.manufacturer[index].generator = generator
                }
            }
            for index in slot.service.indices {
                if var generator = slot.service[index].generator {
                    slot.service[index].value = generator.next(elapsed: elapsed)
                    slot.service[index].generator = generator
                }
            }
            advertising[key] = slot
        }
        var manufacturer: [UInt16: [UInt8]] = [:]
        for entry in slot.manufacturer { manufacturer[entry.company] = entry.value }
        var service: [BluetoothUUID: [UInt8]] = [:]
        for entry in slot.service { service[entry.uuid] = entry.value }
        return (manufacturer, service)
    }

    /// Moves a device out of range (its link drops, it stops advertising) or back.
    func setInRange(_ key: String, _ inRange: Bool) async {
        guard devices[key] != nil, devices[key]!.inRange != inRange else { return }
        devices[key]!.inRange = inRange
        if !inRange { monitorsLost(key) }
        if !inRange, devices[key]!.link != .disconnected {
            // Supervision timeout: the link drops without a Disconnect call.
            await linkDown(key, pendingError: BlueZError.abortByLocal)
        }
    }

    // MARK: Load mode

    /// Starts (or replaces) load mode: `devices` extra peripherals each notifying `rate` times a second
    /// while connected and notifying, with a ``LoadValue`` (device, sequence, send time) as value.
    func startLoad(devices count: Int, rate: Double) {
        load.task?.cancel()
        for spec in LoadDevices.devices(count: count) where devices[spec.address.string] == nil {
            addDevice(spec)
        }
        // Sequences continue when only the rate changes, so consumers see no gap.
        let continues = load.sequences.count == count
        let sequences = continues ? load.sequences : Array(repeating: 0, count: count)
        let sendTimes = continues ? load.sendTimes : LoadSendTimes(after: sequences)
        let drops = continues ? load.drops : LoadDrops(devices: count)
        let run = load.run + 1
        load = LoadState(devices: count, rate: rate, sequences: sequences, sent: 0, startedAt: clock.now)
        load.sendTimes = sendTimes
        load.drops = drops
        load.run = run
        guard count > 0, rate > 0 else { return }
        let keys = (0..<count).map { index in
            let address = LoadDevices.address(index).string
            return CharacteristicKey(
                address: address, id: devices[address]!.gatt.characteristic(uuid: LoadDevices.characteristic)!)
        }
        let generation = self.generation
        load.task = Task { [weak self] in
            let clock = ContinuousClock()
            let start = clock.now
            // Each device has its own phase (LoadSchedule). One tick every millisecond at most; a tick
            // sends what fell due since the last one.
            let schedule = LoadSchedule(devices: count, rate: rate)
            let tick = max(Duration.milliseconds(1), .nanoseconds(Int64(1e9 / (rate * Double(count)))))
            var emitted = [Int](repeating: 0, count: count)
            var due: [(index: Int, count: Int)] = []
            while !Task.isCancelled {
                // Real delay: the load generator's tick.
                try? await Task.sleep(for: tick)
                let elapsed = (clock.now - start).inSeconds
                due.removeAll(keepingCapacity: true)
                for index in 0..<count {
                    let target = schedule.due(device: index, after: elapsed)
                    guard target > emitted[index] else { continue }
                    due.append((index, min(target - emitted[index], 1000)))
                    emitted[index] = target
                }
                guard !due.isEmpty else { continue }
                // A bluetoothd restart raises the generation too; load mode outlives it (stop() cancels this task).
                guard let self, await self.generation >= generation else { return }
                await self.loadTick(keys, due: due, run: run)
            }
        }
    }

    /// Sends `count` values from each device in `due` (by index into `keys`) that is connected and notifying.
    func loadTick(_ keys: [CharacteristicKey], due: [(index: Int, count: Int)], run: Int) {
        guard run == load.run, load.task != nil else { return }
        for (index, count) in due {
            let key = keys[index]
            guard let device = devices[key.address], device.link == .connected, device.servicesResolved,
                let state = device.characteristics[key.id], state.notifying || state.notifyAcquired
            else { continue }
            for _ in 0..<count {
                var now = timespec()
                clock_gettime(CLOCK_REALTIME, &now)
                let sentAt = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
                let value = LoadValue(
                    device: UInt32(index), sequence: load.sequences[index] + 1, timestampNanoseconds: sentAt)
                // Numbered only when it reached a client (a closed or shut socket takes nothing): a
                // consumer's loss is then the last sequence minus what it received. A full socket
                // drops the value, as bluetoothd does; it is numbered and recorded as dropped there.
                let outcome = updateValue(key, value.bytes)
                guard outcome != .nobody else { break }
                if outcome == .full { load.drops.record(device: index, sequence: value.sequence) }
                load.sequences[index] += 1
                load.sent += 1
                load.sendTimes.record(device: index, nanoseconds: sentAt)
            }
        }
    }

    /// When `device` (by index) sent its recent load values: the sequence of the first kept one and
    /// the send times (nanoseconds since the Unix epoch, the values' own stamps) of it and every
    /// later one, up to the last sent. At least the last 8,192 values of each device are kept.
    package func loadSendTimes(device: Int) -> (first: UInt64, nanoseconds: [UInt64]) {
        let kept = load.sendTimes.of(device: device)
        return (kept.first, kept.times)
    }

    package func loadStatistics() -> LoadStatistics {
        LoadStatistics(
            devices: load.devices, rate: load.rate, sent: load.sent,
            elapsed: load.startedAt.map { (load.stoppedAt ?? clock.now) - $0 } ?? .zero, lastSequences: load.sequences,
            droppedAtFullSocket: load.drops.count)
    }

    /// The sequences `device` (by index) numbered but dropped because the client's notify socket was
    /// full, oldest first (at least the last ``LoadDrops/capacity`` ranges).
    package func loadDroppedSequences(device: Int) -> [ClosedRange<UInt64>] {
        load.drops.of(device: device)
    }
}
