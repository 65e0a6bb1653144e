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
///
/// bluetoothd reads a service-data pattern in one of two ways, and BlueZ does not say which
/// (``AdvertisementPattern/Matching``; ``PassiveScanVersionPolicy`` uses the version where the
/// gateway can find it): 5.66 and a controller filtering in hardware from the
/// UUID, 5.71 and later (filtering in software) from the byte after it. So a service-data format
/// gets both: its UUID at offset 0, and its decoder's ``PayloadMarker``s (the address for a
/// device configured by address whose format repeats it) at their offsets. Each pattern is
/// harmless under the other reading: it matches some other advertisements at most, which the
/// gateway's own filter drops. A format without markers is listed in ``notSeenSince571``.
struct PassivePatternPlan: Sendable, Equatable {
    /// One monitor's patterns and what they are for.
    struct PatternSet: Sendable, Equatable {
        var purpose: String
        var patterns: [AdvertisementPattern]
    }

    /// bluetoothd 5.66 sizes its `MGMT_OP_ADD_ADV_PATTERNS_MONITOR` command in a `uint8_t`
    /// (`merged_pattern_send_add_pattern`, src/adv_monitor.c; the same in 5.82): 1 + 34 bytes per
    /// pattern, so a monitor of 8 or more patterns overflows and the kernel refuses it. The
    /// patterns are packed into monitors of at most this many.
    static let maximumPatternsPerMonitor = 7

    /// The monitors to export, each at most ``maximumPatternsPerMonitor`` patterns, without
    /// duplicates: the patterns of every purpose, in order, packed (the kernel takes at most 32
    /// monitors, `HCI_MAX_ADV_MONITOR_NUM_HANDLES`, for every program together).
    var sets: [PatternSet] {
        stride(from: 0, to: items.count, by: Self.maximumPatternsPerMonitor).map { start in
            let chunk = items[start..<min(start + Self.maximumPatternsPerMonitor, items.count)]
            var purposes: [String] = []
            for item in chunk where !purposes.contains(item.purpose) { purposes.append(item.purpose) }
            return PatternSet(purpose: purposes.joined(separator: ", "), patterns: chunk.map(\.pattern))
        }
    }
    /// What passive scanning will not see, for the log at start.
    private(set) var uncovered: [String] = []
    /// Service-data formats listened for by their UUID only: bluetoothd 5.71 and later do not
    /// report them (no marker after the UUID), for the log at start.
    private(set) var notSeenSince571: [String] = []
    /// Every pattern once, with the purpose it was first added for.
    private var items: [(purpose: String, pattern: AdvertisementPattern)] = []

    init(configuration: BridgeConfiguration, decoders: [any AdvertisementDecoder]) {
        let byName = Dictionary(decoders.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for device in configuration.devices {
            if let patterns = Self.patterns(for: device, decoders: byName) {
                add("device \(device.id)", patterns.patterns)
                if !patterns.seenSince571 {
                    notSeenSince571.append("device \(device.id) (\(device.match.summary))")
                }
            } else {
                uncovered.append(
                    "device \(device.id) (\(device.match.summary)): its match and advertisement decoding give no advertisement data to listen for"
                )
            }
        }
        if configuration.autoDevices.enabled {
            for decoder in decoders where !configuration.autoDevices.deny.decoders.contains(decoder.name) {
                if let patterns = Self.patterns(for: decoder, address: nil) {
                    add("decoder \(decoder.name)", patterns.patterns)
                    if !patterns.seenSince571 {
                        notSeenSince571.append("auto_devices decoder \(decoder.name) (\(decoder.source))")
                    }
                } else {
                    uncovered.append("auto_devices decoder \(decoder.name) (\(decoder.source))")
                }
            }
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.sets == rhs.sets && lhs.uncovered == rhs.uncovered && lhs.notSeenSince571 == rhs.notSeenSince571
    }

    /// The patterns of each monitor, in order.
    var monitorPatterns: [[AdvertisementPattern]] { sets.map(\.patterns) }

    private mutating func add(_ purpose: String, _ patterns: [AdvertisementPattern]) {
        // Two devices with the same decoder, or a device and its decoder: each pattern once.
        for pattern in patterns where !items.contains(where: { $0.pattern == pattern }) {
            items.append((purpose, pattern))
        }
    }

    /// Patterns, and whether bluetoothd 5.71 and later can report them.
    struct Patterns: Sendable, Equatable {
        var patterns: [AdvertisementPattern]
        var seenSince571: Bool
    }

    /// A device's patterns: from the data its advertisement settings read, else from its match.
    static func patterns(for device: DeviceConfiguration, decoders: [String: any AdvertisementDecoder]) -> Patterns? {
        if let settings = device.advertisement {
            let fromSettings: Patterns? =
                switch settings.layoutSource {
                case .serviceData(let uuid)?:
                    Patterns(patterns: sourcePatterns(.serviceData(uuid)), seenSince571: false)
                case .manufacturerData(let company)?:
                    Patterns(patterns: sourcePatterns(.manufacturerData(company)), seenSince571: true)
                case .anyManufacturerData?: nil
                case nil:
                    settings.decoder.flatMap { decoders[$0] }.flatMap {
                        patterns(for: $0, address: device.match.address)
                    }
                }
            if let fromSettings { return fromSettings }
        }
        // bluetoothd 5.69 and later parse names and service UUID lists out of what a pattern is
        // compared with (``AdvertisementPattern/Matching/afterServiceUUID``).
        if let service = device.match.service {
            return Patterns(patterns: servicePatterns(service), seenSince571: false)
        }
        if let prefix = device.match.namePrefix { return Patterns(patterns: namePatterns(prefix), seenSince571: false) }
        return nil
    }

    /// A decoder's patterns: its source (service data's UUID, manufacturer data's company id) and,
    /// for service data, its markers after the UUID (those of the device at `address` when known).
    static func patterns(for decoder: any AdvertisementDecoder, address: BluetoothAddress?) -> Patterns? {
        let base = sourcePatterns(decoder.source)
        guard !base.isEmpty else { return nil }
        guard case .serviceData(let uuid) = decoder.source else { return Patterns(patterns: base, seenSince571: true) }
        let markers = address.map { decoder.payloadMarkers(for: $0) } ?? decoder.payloadMarkers
        let type = ADStructure.serviceDataType(for: uuid)
        let after = markers.compactMap {
            AdvertisementPattern(startPosition: UInt8(clamping: $0.offset), adType: type, content: $0.bytes)
        }
        return Patterns(patterns: base + after, seenSince571: !after.isEmpty)
    }

    /// Service data (the UUID's bytes first) or manufacturer data (the company id first).
    static func sourcePatterns(_ source: AdvertisementSource) -> [AdvertisementPattern] {
        switch source {
        case .serviceData(let uuid):
            return AdvertisementPattern(
                adType: ADStructure.serviceDataType(for: uuid), content: ADStructure.airBytes(uuid)
            ).map { [$0] } ?? []
        case .manufacturerData(let company):
            return AdvertisementPattern(
                adType: ADStructure.manufacturerSpecificData, content: [UInt8(company & 0xFF), UInt8(company >> 8)]
            ).map { [$0] } ?? []
        case .anyManufacturerData:
            return []
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
