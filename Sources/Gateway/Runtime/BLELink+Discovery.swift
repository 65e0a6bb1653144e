import BlueZ
import Bluetooth
import Configuration
import Decoders
import Foundation
import JSON
import ProcessMemory
import Timekeeping

extension BLELink {
    // MARK: Discovery

    /// The configured device an advertiser is, if any: a device whose match names this address
    /// first (that includes the instances ``MatchInstances`` split off), then the first other
    /// match. `services` are the advertised service UUIDs and the service-data UUIDs.
    func deviceID(address: String, name: String?, services: [BluetoothUUID]) -> String? {
        let parsed = BluetoothAddress(address)
        func matches(_ device: DeviceConfiguration) -> Bool {
            device.match.matches(address: parsed, name: name, services: services)
        }
        return
            (configuration.devices.first { $0.match.address != nil && matches($0) }
            ?? configuration.devices.first(where: matches))?.id
    }

    /// The id an advertiser caught by `id`'s match is published under: the device itself, or for a
    /// match without an address that already caught another fixed address, an instance of its own
    /// (asked of the gateway once per address, then remembered). Nil: refused at the bound of
    /// instances (asked again with the next advertisement, as an instance may have become idle).
    private func assignedID(_ id: String, address: BluetoothAddress) async -> String? {
        guard configuration.device(id: id)?.match.address == nil, MatchInstances.isFixed(address) else { return id }
        if let known = assigned[address.string] { return known }
        guard let assignedID = await host.assignMatch(address, id) else { return nil }
        assigned[address.string] = assignedID
        return assignedID
    }

    func startScan() {
        // Listen-only scanning goes through advertisement monitors (``startPassiveScan()``), never a discovery session.
        guard scanTask == nil, !discoveryPaused, configuration.bluetooth.scan.mode == .active, let central else {
            return
        }
        let scan = configuration.bluetooth.scan
        scanTask = Task { [weak self] in
            do {
                let discoveries = try await central.scan(
                    services: scan.services, allowDuplicates: scan.duplicates, rssiThreshold: scan.rssiMin)
                for await discovery in discoveries {
                    await self?.discovered(discovery)
                }
            } catch {
                await self?.scanFailed(error)
            }
        }
    }

    func setDiscoveryPaused(_ paused: Bool) {
        discoveryPaused = paused
        if paused {
            scanTask?.cancel()
            scanTask = nil
        } else if powered {
            startScan()
        }
    }

    func discovered(_ discovery: Discovery) async {
        let time = clock.date
        let address = discovery.peripheral.identifier.string
        let advertisement = discovery.advertisementData
        seen.record(discovery.peripheral.identifier, name: advertisement.localName, rssi: discovery.rssi, at: time)
        let id: String
        if let caughtBy = deviceID(
            address: address, name: advertisement.localName,
            services: advertisement.serviceUUIDs + advertisement.serviceData.keys)
        {
            guard let assigned = await assignedID(caughtBy, address: discovery.peripheral.identifier) else { return }
            id = assigned
        } else if let automatic = await autoDeviceID(discovery) {
            id = automatic
        } else {
            return
        }
        peripherals[id] = discovery.peripheral
        rediscoveryWaiters[id]?.yield(discovery.peripheral)
        // Shared-broker mode: another gateway may own (publish) this passive device; its packet filter
        // still learns every advertisement, so taking over never repeats one the owner published.
        // Paired or trusted objects outlive the device (only shared-broker mode's candidacies ask):
        // two actor hops per advertisement, so not taken when the mode is off.
        var persistent = false
        if configuration.mqtt.sharedBroker {
            let peripheral = discovery.peripheral
            persistent = await peripheral.isPaired
            if !persistent { persistent = await peripheral.isTrusted }
        }
        guard let publishes = await host.seen(id, address, discovery.rssi, persistent) else { return }
        guard let device = configuration.device(id: id), let settings = device.advertisement else {
            // Room presence hears every device, decoded or not.
            await host.report(.heard(id, rssi: discovery.rssi, readings: []))
            return
        }
        let readings: [DecodedReading]
        if let layout = settings.layout {
            let payloads: [[UInt8]] =
                switch settings.layoutSource {
                case .manufacturerData(let company)?: advertisement.manufacturerData[company].map { [$0] } ?? []
                case .anyManufacturerData?:
                    advertisement.manufacturerData.keys.sorted().compactMap { company in
                        DecoderRegistry.payload(
                            advertisement.manufacturerData[company] ?? [], from: .manufacturerData(company),
                            for: .anyManufacturerData)
                    }
                case .serviceData(let service)?: advertisement.serviceData[service].map { [$0] } ?? []
                case nil: []
                }
            readings = payloads.map { layout.reading($0) }
        } else {
            readings = registry.decodeAdvertisement(
                serviceData: advertisement.serviceData, manufacturerData: advertisement.manufacturerData,
                context: AdvertisementContext(
                    address: discovery.peripheral.identifier, bindKey: settings.bindKey,
                    localName: advertisement.localName, serviceUUIDs: advertisement.serviceUUIDs),
                decoder: settings.decoder)
        }
        await host.report(.heard(id, rssi: discovery.rssi, readings: readings))
        for reading in readings where reading.isSuccess && isNew(reading, device: device) && publishes {
            pipeline.deliver(
                device: id, fields: reading.fields, raw: nil, rssi: discovery.rssi, sampleTime: time,
                fromConnection: false)
        }
    }

    /// BlueZ removed the object of the device at `address` (``CentralManager/deviceRemovals``):
    /// the configured devices it was are no longer heard (their candidacies may end).
    func deviceObjectRemoved(_ address: BluetoothAddress) async {
        for id in peripherals.keys.sorted() where peripherals[id]?.identifier == address {
            await host.report(.vanished(id))
        }
    }

    /// Drops advertisers not seen for a minute even when nothing advertises (called every few
    /// seconds by the gateway), so memory falls back once passing devices are gone.
    /// Once the table shrank by ``trimAfter`` entries or more, the allocator's free memory is
    /// given back to the system (``ProcessMemory``): glibc otherwise keeps the peak.
    func pruneSeen() {
        seen.prune(now: clock.date)
        guard seen.released >= Self.trimAfter else { return }
        let released = seen.takeReleased()
        let trimmed = ProcessMemory.releaseFreeMemory()
        logger.debug(
            "advertisers table shrank; free memory given back", [("entries", "\(released)"), ("trimmed", "\(trimmed)")])
    }

    /// Entries dropped from the advertisers table before free memory is given back: half its
    /// bound (``SeenAdvertisers/capacity``), so emptying a full table gives memory back; it only
    /// shrinks that much once passing devices are gone, never per advertisement.
    static let trimAfter = 512

    /// `auto_devices`: the id of a new automatic device for an unconfigured advertiser with a fixed
    /// address whose advertisement a built-in decoder recognises; nil otherwise.
    private func autoDeviceID(_ discovery: Discovery) async -> String? {
        let address = discovery.peripheral.identifier
        guard configuration.autoDevices.enabled, MatchInstances.isFixed(address) else { return nil }
        let advertisement = discovery.advertisementData
        let recognised = registry.decodeAdvertisement(
            serviceData: advertisement.serviceData, manufacturerData: advertisement.manufacturerData,
            context: AdvertisementContext(
                address: address, bindKey: configuration.autoDevices.bindKey(for: address),
                localName: advertisement.localName, serviceUUIDs: advertisement.serviceUUIDs)
        ).first { $0.isSuccess }
        guard let decoder = recognised?.decoder else { return nil }
        let name = advertisement.localName ?? seen.entry(for: address)?.name
        return await host.addAutoDevice(address, decoder, name)
    }

    /// BTHome and MiBeacon de-duplication (`deduplicate`, on by default): false for a reading that
    /// repeats the device's previous packet id or replays an older encryption counter.
    private func isNew(_ reading: DecodedReading, device: DeviceConfiguration) -> Bool {
        guard device.deduplicate, BTHomePacketFilter.decoders.contains(reading.decoder) else { return true }
        switch packetFilters[device.id, default: BTHomePacketFilter()].judge(reading) {
        case .new: return true
        case .duplicate: return false
        case .replayed:
            logger.debug("replayed \(reading.decoder) advertisement dropped", [("device", device.id)])
            return false
        }
    }

    /// `bridge/request/scan`: advertisers seen during the next `duration`.
    func scanSnapshot(for duration: Duration) async -> JSONValue {
        let since = clock.date
        // Real delay: the scan window the request asked for.
        try? await clock.sleep(for: duration)
        return .array(
            seen.seen(since: since).map { bluetoothAddress, info in
                let address = bluetoothAddress.string
                return .object([
                    JSONMember("address", .string(address)),
                    JSONMember("name", info.name.map(JSONValue.string) ?? .null),
                    JSONMember("rssi", info.rssi.map { .int(Int64($0)) } ?? .null),
                    JSONMember(
                        "device",
                        deviceID(address: address, name: info.name, services: []).map(JSONValue.string) ?? .null),
                ])
            })
    }

    /// State restoration: peripherals known from earlier runs are usable at once, without a scan.
    func restoreKnownPeripherals() async {
        // Claimed before the first suspension: start() and the powered state can both be here.
        guard !restored, let central else { return }
        restored = true
        guard let known = try? await host.knownPeripherals() else {
            restored = false
            return
        }
        let wanted = known.filter { configuration.device(id: $0.deviceID) != nil }
        let addresses = wanted.compactMap { BluetoothAddress($0.address) }
        let restored = await central.retrievePeripherals(withIdentifiers: addresses)
        for peripheral in restored {
            guard let entry = wanted.first(where: { $0.address == peripheral.identifier.string }) else { continue }
            peripherals[entry.deviceID] = peripheral
            logger.info("restored known peripheral", [("device", entry.deviceID), ("address", entry.address)])
            _ = await host.seen(entry.deviceID, entry.address, nil, false)
        }
    }
}
