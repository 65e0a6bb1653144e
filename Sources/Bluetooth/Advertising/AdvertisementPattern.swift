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

    /// True when some structure of this pattern's type holds `content` at `startPosition`.
    public func matches(_ structures: [ADStructure]) -> Bool {
        let start = Int(startPosition)
        return structures.contains { structure in
            structure.type == adType && structure.data.count >= start + content.count
                && structure.data[start..<(start + content.count)].elementsEqual(content)
        }
    }

    /// True when any of `patterns` matches (the "or" of `or_patterns`).
    public static func anyMatches(_ patterns: [AdvertisementPattern], _ structures: [ADStructure]) -> Bool {
        patterns.contains { $0.matches(structures) }
    }

    public var description: String {
        "type 0x\(Hex.string([adType])) at \(startPosition): \(Hex.string(content))"
    }
}
