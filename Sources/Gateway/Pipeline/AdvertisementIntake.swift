import BlueZ
import Bluetooth
import Configuration
import Decoders
import Foundation
import JSON
import Logging
import ProcessMemory
import Timekeeping

/// What the gateway makes of each advertisement: which device it is (a match, an instance of a
/// match, an automatic device), its decoding (BTHome and MiBeacon decryption included), the
/// packet filter of `deduplicate`, the table of recent advertisers, and the readings handed to the
/// ``ReadingPipeline``.
///
/// Threads: an actor on Swift's pool, never the D-Bus thread. ``BLELink`` is pinned to that thread
/// (so is the BlueZ central that reports the advertisements), and this is the CPU work of the
/// Bluetooth side that grows with the radio's traffic: on the D-Bus thread it would delay every
/// signal and reply behind it. The link hands each discovery here and is asked back only to keep
/// the peripheral of a device found (``Attach``), and only when the link does not hold it already;
/// the gateway is told a device was seen at most once a second (every advertisement in
/// shared-broker mode) and hears its RSSI only for room presence: each is a hop onto another
/// executor, which at 1,000 advertisements a second cost more than the decoding (issue 20).
/// Memory given back to the system after the advertisers table shrank (`malloc_trim`) is done
/// here too.
actor AdvertisementIntake {
    /// Gives the link the peripheral of configured or automatic device `id` (to connect to, or to a
    /// forgotten device's recovery waiting for it); when `persistence`, whether BlueZ keeps its
    /// object (paired or trusted). Nil once the link is gone.
    typealias Attach = @Sendable (_ id: String, _ peripheral: Peripheral, _ persistence: Bool) async -> Bool?

    private let host: BLELink.Host
    private let pipeline: ReadingPipeline
    private let clock: any BridgeClock
    private let registry: DecoderRegistry
    private var configuration: BridgeConfiguration {
        didSet { devices = DeviceMatchIndex(configuration.devices) }
    }
    /// ``configuration``'s devices by id and by matched address.
    private var devices: DeviceMatchIndex
    private let logger = Logger(label: "ble")
    /// Recently seen advertisers (for `bridge/request/scan`), bounded by count and age.
    private var seen = SeenAdvertisers()
    /// Fixed addresses caught by a match without an address → the id the gateway assigned
    /// (``MatchInstances``); cleared on reload.
    private var assigned: [String: String] = [:]
    /// Per device: the BTHome packet filter of `deduplicate`.
    private var packetFilters: [String: BTHomePacketFilter] = [:]
    /// The link's count of peripherals it let go of (``PeripheralReleases``).
    private let releases: PeripheralReleases
    /// Per device: the peripheral last given to the link and the link's release count then.
    private var given: [String: Given] = [:]

    private struct Given {
        weak var peripheral: Peripheral?
        let releases: UInt64
    }

    /// Per device: when the gateway was last told the device advertised (``BLELink/Host/seen``), and its
    /// answer. Outside shared-broker mode it is told again only after ``seenInterval``, not per
    /// advertisement (a hop onto the gateway's actor each).
    private var told: [String: Told] = [:]

    private struct Told {
        let at: Date
        let publishes: Bool
    }

    /// Room presence is on (read at start, as the gateway's coordinator is): every advertisement's
    /// RSSI goes to the gateway (``BLELink/Event/heard(_:rssi:readings:)``). Off, nothing reads it.
    private let reportsHearing: Bool

    init(
        host: BLELink.Host, configuration: BridgeConfiguration, pipeline: ReadingPipeline, clock: any BridgeClock,
        registry: DecoderRegistry, releases: PeripheralReleases = PeripheralReleases()
    ) {
        self.host = host
        self.releases = releases
        self.reportsHearing = configuration.presence.enabled
        self.configuration = configuration
        self.devices = DeviceMatchIndex(configuration.devices)
        self.pipeline = pipeline
        self.clock = clock
        self.registry = registry
    }

    /// A reloaded configuration: instances are assigned afresh, packet filters of devices that no
    /// longer de-duplicate go, and the pipeline takes the new field names and publishing policies
    /// (here, off the link's thread).
    func update(configuration: BridgeConfiguration) {
        self.configuration = configuration
        pipeline.replaceConfiguration(configuration)
        assigned.removeAll()
        given.removeAll()
        told.removeAll()
        packetFilters = packetFilters.filter { devices.device(id: $0.key)?.deduplicate == true }
    }

    /// The configured device an advertiser is, if any: a device whose match names this address
    /// first (that includes the instances ``MatchInstances`` split off), then the first other
    /// match. `services` are the advertised service UUIDs and the service-data UUIDs.
    func deviceID(address: BluetoothAddress, name: String?, services: [BluetoothUUID]) -> String? {
        devices.deviceID(address: address, name: name, services: services)
    }

    /// The id an advertiser caught by `id`'s match is published under: the device itself, or for a
    /// match without an address that already caught another fixed address, an instance of its own
    /// (asked of the gateway once per address, then remembered). Nil: refused at the bound of
    /// instances (asked again with the next advertisement, as an instance may have become idle).
    private func assignedID(_ id: String, address: BluetoothAddress) async -> String? {
        guard devices.device(id: id)?.match.address == nil, MatchInstances.isFixed(address) else { return id }
        if let known = assigned[address.string] { return known }
        guard let assignedID = await host.assignMatch(address, id) else { return nil }
        assigned[address.string] = assignedID
        return assignedID
    }

    /// Takes each discovery of `discoveries` that advertises any of `services` (all when empty) in
    /// turn, until the stream ends or the caller's task is cancelled. The stream is read here, so an
    /// advertisement crosses from the D-Bus thread (where the central yields it) to the pool once.
    func follow(_ discoveries: AsyncStream<Discovery>, advertising services: Set<BluetoothUUID> = [], attach: Attach)
        async
    {
        for await discovery in discoveries where discovery.advertisementData.advertisesAny(of: services) {
            await discovered(discovery, attach: attach)
        }
    }

    /// One advertisement (a discovery session's or an advertisement monitor's report).
    func discovered(_ discovery: Discovery, attach: Attach) async {
        let time = clock.date
        let address = discovery.peripheral.identifier
        let advertisement = discovery.advertisementData
        seen.record(address, name: advertisement.localName, rssi: discovery.rssi, at: time)
        let id: String
        if let caughtBy = deviceID(
            address: address, name: advertisement.localName,
            services: advertisement.serviceUUIDs + advertisement.serviceData.keys)
        {
            guard let assigned = await assignedID(caughtBy, address: address) else { return }
            id = assigned
        } else if let automatic = await autoDeviceID(discovery) {
            id = automatic
        } else {
            return
        }
        // Shared-broker mode: another gateway may own (publish) this passive device; its packet filter
        // still learns every advertisement, so taking over never repeats one the owner published.
        // Paired or trusted objects outlive the device (only shared-broker mode's candidacies ask).
        let persistence = configuration.mqtt.sharedBroker
        let releasesNow = releases.current
        let persistent: Bool
        let attached: Bool
        if !persistence, let last = given[id], last.peripheral === discovery.peripheral,
            last.releases == releasesNow
        {
            // The link holds this peripheral already: no hop onto its thread.
            persistent = false
            attached = false
        } else {
            guard let answer = await attach(id, discovery.peripheral, persistence) else { return }
            persistent = answer
            attached = true
            given[id] = Given(peripheral: discovery.peripheral, releases: releasesNow)
        }
        // The gateway keeps the device's last-seen time and RSSI (availability, `bridge/devices`); told
        // at most every `seenInterval`, or at once when the link was given a peripheral (a device
        // BlueZ forgot and found again is connected when seen). Shared-broker mode's election
        // hears every advertisement.
        let publishes: Bool
        if !persistence, !attached, let last = told[id], time.timeIntervalSince(last.at) < seenInterval {
            publishes = last.publishes
        } else {
            guard let answer = await host.seen(id, address.string, discovery.rssi, persistent) else { return }
            publishes = answer
            told[id] = Told(at: time, publishes: answer)
        }
        guard let device = devices.device(id: id), let settings = device.advertisement else {
            // Room presence hears every device, decoded or not.
            if reportsHearing { await host.report(.heard(id, rssi: discovery.rssi, readings: []), nil) }
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
        if reportsHearing { await host.report(.heard(id, rssi: discovery.rssi, readings: readings), nil) }
        for reading in readings where reading.isSuccess && isNew(reading, device: device) && publishes {
            pipeline.deliver(
                device: id, fields: reading.fields, raw: nil, rssi: discovery.rssi, sampleTime: time,
                fromConnection: false)
        }
    }

    /// How long the gateway may go untold of a device's advertisements: a second, or a quarter of
    /// `scan.device_ttl` when that is shorter (a passive device is available while seen within it).
    private var seenInterval: TimeInterval {
        min(1, configuration.bluetooth.scan.deviceTTL.inSeconds / 4)
    }

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

    /// Drops advertisers not seen for a minute even when nothing advertises (called every few
    /// seconds by the gateway), so memory falls back once passing devices are gone.
    /// Once the table shrank by ``trimAfter`` entries or more, the allocator's free memory is
    /// given back to the system (``ProcessMemory``): glibc otherwise keeps the peak.
    func pruneSeen() {
        seen.prune(now: clock.date)
        given = given.filter { $0.value.peripheral != nil }
        let now = clock.date
        told = told.filter { now.timeIntervalSince($0.value.at) < seenInterval }
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

    /// `bridge/request/scan`: advertisers seen during the next `duration`.
    func scanSnapshot(for duration: Duration) async -> JSONValue {
        let since = clock.date
        // Real delay: the scan window the request asked for.
        try? await clock.sleep(for: duration)
        return .array(
            seen.seen(since: since).map { bluetoothAddress, info in
                .object([
                    JSONMember("address", .string(bluetoothAddress.string)),
                    JSONMember("name", info.name.map(JSONValue.string) ?? .null),
                    JSONMember("rssi", info.rssi.map { .int(Int64($0)) } ?? .null),
                    JSONMember(
                        "device",
                        deviceID(address: bluetoothAddress, name: info.name, services: []).map(JSONValue.string)
                            ?? .null),
                ])
            })
    }
}
