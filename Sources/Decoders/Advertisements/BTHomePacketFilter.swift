/// Drops repeated BTHome advertisements of one device: a device sends each measurement several
/// times with the same `packet_id`, and an encrypted device's `encryption_counter` must never go
/// back (a replayed frame). Keep one filter per device. MiBeacon readings carry the same two
/// fields (its frame counter as `packet_id`, the extended counter as `encryption_counter`), so the
/// filter serves both formats.
package struct BTHomePacketFilter: Sendable {
    /// The decoders whose readings carry `packet_id` / `encryption_counter` in this sense.
    package static let decoders: Set<String> = ["bthome", "mibeacon"]

    package enum Verdict: Sendable, Hashable {
        case new
        /// Same packet id as the previous accepted reading.
        case duplicate
        /// The encryption counter is lower than one already accepted.
        case replayed
    }

    private var lastPacketID: DecodedValue?
    private var lastCounter: Int64?

    package init() {}

    /// Judges a decoded BTHome reading and remembers it when it is new. Readings without a packet
    /// id are always new (the format makes the id optional).
    package mutating func judge(_ reading: DecodedReading) -> Verdict {
        if case .int(let counter)? = reading["encryption_counter"] {
            if let lastCounter, counter < lastCounter { return .replayed }
            lastCounter = counter
        }
        guard let packetID = reading["packet_id"] else { return .new }
        if packetID == lastPacketID { return .duplicate }
        lastPacketID = packetID
        return .new
    }
}
