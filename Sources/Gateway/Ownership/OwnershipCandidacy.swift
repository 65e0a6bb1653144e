import JSON

/// What one gateway says about one connected device in shared-broker mode, retained on
/// `<base>/bridge/gateways/<gateway_id>/candidacy/<device>` (docs/multi-gateway.md):
/// `{"rssi":-63.5,"free_slots":3,"holding":false}`. An empty retained payload withdraws it.
package struct OwnershipCandidacy: Sendable, Hashable {
    /// Mean RSSI over the candidacy window, dBm, one decimal.
    package var rssi: Double
    /// The gateway's connection slots not in use.
    package var freeSlots: Int
    /// The gateway holds the device: it took it (connects, or is connected) or has not finished
    /// letting it go.
    package var holding: Bool

    package init(rssi: Double, freeSlots: Int, holding: Bool) {
        self.rssi = (rssi * 10).rounded() / 10
        self.freeSlots = freeSlots
        self.holding = holding
    }

    package var json: JSONValue {
        .object([
            JSONMember("rssi", .double(rssi)), JSONMember("free_slots", .int(Int64(freeSlots))),
            JSONMember("holding", .bool(holding)),
        ])
    }

    /// Reads a candidacy another gateway published; nil when it is not one (not JSON, a member
    /// missing or of the wrong type, an RSSI outside -127…20 dBm, negative slots).
    package init?(payload: [UInt8]) {
        guard let value = try? JSONParser().parse(payload), let rssi = value["rssi"]?.doubleValue,
            let slots = value["free_slots"]?.intValue, let holding = value["holding"]?.boolValue,
            (-127...20).contains(rssi), (0...Int64(Int32.max)).contains(slots)
        else { return nil }
        self.init(rssi: rssi, freeSlots: Int(slots), holding: holding)
    }

    /// The same candidacy as the election reads it, received at `at` from `gatewayID`.
    func election(gatewayID: String, at: ContinuousClock.Instant) -> OwnershipElection.Candidacy {
        OwnershipElection.Candidacy(gatewayID: gatewayID, rssi: rssi, freeSlots: freeSlots, holding: holding, at: at)
    }
}
