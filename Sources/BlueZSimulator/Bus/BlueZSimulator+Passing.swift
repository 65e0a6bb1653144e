import Bluetooth

/// Passing mode (``ScenarioPassing``): advertisers with random private addresses that appear,
/// advertise for a while and are gone.
extension BlueZSimulator {
    /// Starts the passing devices of the scenario (with the world; a stop or restart ends them).
    func startPassing(_ passing: ScenarioPassing) {
        let generation = self.generation
        worldTasks.append(
            Task { [weak self] in
                let clock = ContinuousClock()
                // Real delay: the scenario's passing devices start this long after the world.
                try? await Task.sleep(for: passing.start)
                let start = clock.now
                var appeared = 0
                var leaving: [(key: String, at: ContinuousClock.Instant)] = []
                var next = 0
                var woke = start - .milliseconds(10)
                while !Task.isCancelled, appeared < passing.total || next < leaving.count {
                    // Real delay: until the next device is due to appear or to leave (the
                    // scenario's rate and lifetime). Those due within 10 ms of each other come
                    // together: a 5,000/s scenario does not wake 5,000 times a second.
                    var wake = next < leaving.count ? leaving[next].at : nil
                    if appeared < passing.total {
                        let appearance = start + .seconds(Double(appeared) / passing.rate)
                        wake = min(wake ?? appearance, appearance)
                    }
                    if let due = wake.map({ max($0, woke + .milliseconds(10)) }), due > clock.now {
                        try? await Task.sleep(until: due, clock: clock)
                    }
                    woke = clock.now
                    guard let self, await self.generation == generation else { return }
                    let now = clock.now
                    let due = min(passing.total, Int(((now - start) / .seconds(1)) * passing.rate) + 1)
                    while appeared < due {
                        let key = await self.addPassingDevice()
                        leaving.append((key, now + passing.lifetime))
                        appeared += 1
                    }
                    while next < leaving.count, leaving[next].at <= now {
                        await self.removePassingDevice(leaving[next].key)
                        next += 1
                    }
                    if next > 4096 {
                        leaving.removeFirst(next)
                        next = 0
                    }
                    await self.setPassing(appeared: appeared)
                }
            })
    }

    /// A new passing device: a resolvable private address, an Apple-style manufacturer payload.
    private func addPassingDevice() -> String {
        var bytes = (0..<6).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes[0] = 0x40 | (bytes[0] & 0x3F)
        let address = BluetoothAddress(bytes: bytes, type: .random)!
        let payload = [0x10, 0x05] + (0..<5).map { _ in UInt8.random(in: 0...255, using: &random) }
        addDevice(
            ScenarioDevice(
                address: address, rssi: -88, rssiJitter: 4, connectable: false,
                advertisement: ScenarioAdvertisement(
                    manufacturerData: [ScenarioAdvertisement.ManufacturerData(company: 0x004C, value: payload)])))
        return address.string
    }

    /// The device's time is up: its object goes (InterfacesRemoved) and the world forgets it.
    private func removePassingDevice(_ key: String) async {
        await unexportDevice(key)
        devices[key] = nil
        advertising[key] = nil
        if let index = deviceOrder.firstIndex(of: key) { deviceOrder.remove(at: index) }
        passing.gone += 1
    }

    private func setPassing(appeared: Int) {
        passing.appeared = appeared
    }

    /// How many passing devices appeared and are gone so far.
    package func passingStatistics() -> PassingStatistics { passing }
}
