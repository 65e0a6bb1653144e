/// One pattern of an or-patterns advertisement monitor (BlueZ `AdvertisementMonitor1.Patterns`,
/// `a(yyay)`): `content` must appear in an AD structure of type `adType`, starting `startPosition`
/// bytes into that structure's data.
///
/// The limits are bluetoothd's (`bt_ad_pattern_new` in src/shared/ad.c, 5.66): 1–31 content bytes,
/// ending within the 31 bytes of a legacy advertisement, and an AD type from Flags (0x01) to 3D
/// Information Data (0x3D) or Manufacturer Specific Data (0xFF).
public struct AdvertisementPattern: Sendable, Hashable, CustomStringConvertible {
    /// The most bytes of AD data a pattern can reach (a legacy advertisement's 31).
    public static let maximumDataLength = 31

    public let startPosition: UInt8
    public let adType: UInt8
    public let content: [UInt8]

    /// Nil when bluetoothd would refuse the pattern (and release the monitor holding it).
    public init?(startPosition: UInt8 = 0, adType: UInt8, content: [UInt8]) {
        guard !content.isEmpty, Int(startPosition) + content.count <= Self.maximumDataLength,
            Self.isValidType(adType)
        else { return nil }
        self.startPosition = startPosition
        self.adType = adType
        self.content = content
    }

    /// The AD types bluetoothd accepts in a pattern.
    public static func isValidType(_ type: UInt8) -> Bool {
        (ADStructure.flags...0x3D).contains(type) || type == ADStructure.manufacturerSpecificData
    }

    /// How a pattern is compared with an advertisement: it depends on who filters.
    public enum Matching: String, Sendable, Equatable, CaseIterable {
        /// bluetoothd 5.66 (`pattern_ad_data_match`, src/shared/ad.c) and a controller filtering
        /// in hardware (Microsoft extension): a structure of the pattern's type holds `content` at
        /// `startPosition` of its data, so service data's UUID comes first and manufacturer
        /// data's company id.
        case wholeStructure = "whole_structure"
        /// bluetoothd 5.71 and later filtering in software (commit b0656c2cf, "Pattern match on
        /// service- and manufacturer data"; the same up to 5.87 and BlueZ's master of
        /// 2026-07): since 5.69 (bc2ab4ba3) the advertisement is parsed into names, service
        /// UUIDs, service data and manufacturer data, and a pattern is compared with what
        /// was parsed. A service-data pattern (0x16, 0x20 or 0x21, any of them) is compared
        /// with the bytes after the UUID of every service data entry, whatever its UUID or UUID
        /// size; a manufacturer-data pattern still with the company id first; a name or
        /// service-UUID-list pattern (0x02–0x09) with nothing, so it never matches; every other
        /// type (Flags, Appearance, …) as before.
        case afterServiceUUID = "after_service_uuid"
    }

    /// True when some structure of this pattern's type holds `content` at `startPosition`
    /// (``Matching/wholeStructure``), or as `matching` reads it.
    package func matches(_ structures: [ADStructure], _ matching: Matching = .wholeStructure) -> Bool {
        if matching == .afterServiceUUID {
            if Self.isServiceDataType(adType) {
                return structures.contains { structure in
                    guard Self.isServiceDataType(structure.type) else { return false }
                    let width = Self.uuidWidth(structure.type)
                    guard structure.data.count >= width else { return false }
                    return holdsContent(Array(structure.data.dropFirst(width)))
                }
            }
            if (ADStructure.incomplete16BitServices...ADStructure.completeLocalName).contains(adType) { return false }
        }
        return structures.contains { $0.type == adType && holdsContent($0.data) }
    }

    /// True when any of `patterns` matches (the "or" of `or_patterns`).
    package static func anyMatches(
        _ patterns: [AdvertisementPattern], _ structures: [ADStructure], _ matching: Matching = .wholeStructure
    ) -> Bool {
        patterns.contains { $0.matches(structures, matching) }
    }

    private func holdsContent(_ data: [UInt8]) -> Bool {
        let start = Int(startPosition)
        return data.count >= start + content.count && data[start..<(start + content.count)].elementsEqual(content)
    }

    static func isServiceDataType(_ type: UInt8) -> Bool {
        type == ADStructure.serviceData16 || type == ADStructure.serviceData32 || type == ADStructure.serviceData128
    }

    /// The UUID bytes at the start of a service-data structure's data.
    static func uuidWidth(_ type: UInt8) -> Int {
        switch type {
        case ADStructure.serviceData16: 2
        case ADStructure.serviceData32: 4
        default: 16
        }
    }

    public var description: String {
        "type 0x\(Hex.string([adType])) at \(startPosition): \(Hex.string(content))"
    }
}
