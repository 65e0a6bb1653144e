import Bluetooth
import Configuration
import Decoders

/// What `bluetooth.scan.mode` `"passive"` asks bluetoothd to listen for: or-patterns
/// advertisement monitors built from the configured devices and, with `auto_devices`, the
/// built-in decoders (docs/configuration.md, "Passive scanning"). Pure: no Bluetooth here.
///
/// A pattern looks at the content of one AD structure, never at the address: a device is caught
/// by the data it advertises (its decoder's or layout's service data or company id, else its
/// `match.service`, else its `match.name_prefix`). What has no such data (an address-only match of
/// a device without advertisement decoding, or formats read from manufacturer data of any company
/// id) is listed in ``uncovered``.
struct PassivePatternPlan: Sendable, Equatable {
    /// One monitor's patterns and what they are for.
    struct PatternSet: Sendable, Equatable {
        var purpose: String
        var patterns: [AdvertisementPattern]
    }

    /// bluetoothd 5.66 sizes its `MGMT_OP_ADD_ADV_PATTERNS_MONITOR` command in a `uint8_t`
    /// (`merged_pattern_send_add_pattern`, src/adv_monitor.c): 1 + 34 bytes per pattern, so a
    /// monitor of 8 or more patterns overflows and the kernel refuses it. Larger sets are split.
    static let maximumPatternsPerMonitor = 7

    /// The monitors to export, each at most ``maximumPatternsPerMonitor`` patterns, without duplicates.
    private(set) var sets: [PatternSet] = []
    /// What passive scanning will not see, for the log at start.
    private(set) var uncovered: [String] = []

    init(configuration: BridgeConfiguration, decoders: [any AdvertisementDecoder]) {
        let byName = Dictionary(decoders.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for device in configuration.devices {
            if let patterns = Self.patterns(for: device, decoders: byName) {
                add("device \(device.id)", patterns)
            } else {
                uncovered.append(
                    "device \(device.id) (\(device.match.summary)): its match and advertisement decoding give no advertisement data to listen for"
                )
            }
        }
        if configuration.autoDevices.enabled {
            for decoder in decoders where !configuration.autoDevices.deny.decoders.contains(decoder.name) {
                if let patterns = Self.patterns(for: decoder.source) {
                    add("decoder \(decoder.name)", patterns)
                } else {
                    uncovered.append("auto_devices decoder \(decoder.name) (\(decoder.source))")
                }
            }
        }
    }

    /// The patterns of each monitor, in order.
    var monitorPatterns: [[AdvertisementPattern]] { sets.map(\.patterns) }

    private mutating func add(_ purpose: String, _ patterns: [AdvertisementPattern]) {
        // Two devices with the same decoder, or a device and its decoder: one monitor is enough.
        for chunk in Self.monitors(for: patterns) where !sets.contains(where: { $0.patterns == chunk }) {
            sets.append(PatternSet(purpose: purpose, patterns: chunk))
        }
    }

    /// `patterns` without repeats, in monitors of at most ``maximumPatternsPerMonitor``.
    static func monitors(for patterns: [AdvertisementPattern]) -> [[AdvertisementPattern]] {
        var unique: [AdvertisementPattern] = []
        for pattern in patterns where !unique.contains(pattern) { unique.append(pattern) }
        return stride(from: 0, to: unique.count, by: maximumPatternsPerMonitor).map {
            Array(unique[$0..<min($0 + maximumPatternsPerMonitor, unique.count)])
        }
    }

    /// A device's patterns: from the data its advertisement settings read, else from its match.
    static func patterns(
        for device: DeviceConfiguration, decoders: [String: any AdvertisementDecoder]
    ) -> [AdvertisementPattern]? {
        if let settings = device.advertisement {
            let fromSettings: [AdvertisementPattern]? =
                switch settings.layoutSource {
                case .serviceData(let uuid)?: patterns(for: .serviceData(uuid))
                case .manufacturerData(let company)?: patterns(for: .manufacturerData(company))
                case .anyManufacturerData?: nil
                case nil: settings.decoder.flatMap { decoders[$0] }.flatMap { patterns(for: $0.source) }
                }
            if let fromSettings { return fromSettings }
        }
        if let service = device.match.service { return servicePatterns(service) }
        if let prefix = device.match.namePrefix { return namePatterns(prefix) }
        return nil
    }

    /// Service data (the UUID's bytes first) or manufacturer data (the company id first).
    static func patterns(for source: AdvertisementSource) -> [AdvertisementPattern]? {
        switch source {
        case .serviceData(let uuid):
            return AdvertisementPattern(
                adType: ADStructure.serviceDataType(for: uuid), content: ADStructure.airBytes(uuid)
            ).map { [$0] }
        case .manufacturerData(let company):
            return AdvertisementPattern(
                adType: ADStructure.manufacturerSpecificData, content: [UInt8(company & 0xFF), UInt8(company >> 8)]
            ).map { [$0] }
        case .anyManufacturerData:
            return nil
        }
    }

    /// A service UUID as service data or first in a complete or incomplete UUID list (a pattern
    /// has a fixed position: a UUID listed after another is not caught).
    static func servicePatterns(_ uuid: BluetoothUUID) -> [AdvertisementPattern] {
        let bytes = ADStructure.airBytes(uuid)
        let lists: [UInt8] =
            switch bytes.count {
            case 2: [ADStructure.incomplete16BitServices, ADStructure.complete16BitServices]
            case 4: [ADStructure.incomplete32BitServices, ADStructure.complete32BitServices]
            default: [ADStructure.incomplete128BitServices, ADStructure.complete128BitServices]
            }
        return ([ADStructure.serviceDataType(for: uuid)] + lists).compactMap {
            AdvertisementPattern(adType: $0, content: bytes)
        }
    }

    /// The start of the complete or shortened local name (at most 31 bytes of it).
    static func namePatterns(_ prefix: String) -> [AdvertisementPattern] {
        let bytes = Array(Array(prefix.utf8).prefix(AdvertisementPattern.maximumDataLength))
        return [ADStructure.completeLocalName, ADStructure.shortenedLocalName].compactMap {
            AdvertisementPattern(adType: $0, content: bytes)
        }
    }
}
