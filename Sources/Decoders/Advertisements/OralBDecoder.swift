/// Oral-B toothbrushes, manufacturer data of company 0x00DC (Procter & Gamble), 9 or 11 bytes:
/// protocol version (1), model (1, ``OralBModel``), firmware byte (1), state (1), a status byte
/// (bit 7 high pressure, bit 3 power button, bit 2 mode button; the rest display flags), brushing
/// time minutes (1) and seconds (1), mode (1), sector (1: bits 0–2, 0 none, 1–6 the quadrant, 7
/// the last one, whose number is the sector count), and in the 11-byte form the sector timer (1)
/// and the number of sectors (1).
///
/// `pressure` says what the status byte says, a button first: `power button pressed`, `button
/// pressed`, `high` or `normal`. The sector is only a position while brushing (`running`): in any
/// other state it is 0. A state or mode missing from the tables is left out (`state_code` and
/// `mode_code` carry the bytes).
package struct OralBDecoder: AdvertisementDecoder {
    package let name = "oralb"
    package let source = AdvertisementSource.manufacturerData(0x00DC)

    package init() {}

    package func accepts(_ payload: [UInt8]) -> Bool { payload.count == 9 || payload.count == 11 }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let protocolVersion = try reader.uint8("protocol_version")
        let modelID = try reader.uint8("model_id")
        let firmware = try reader.uint8("firmware")
        let state = try reader.uint8("state")
        let status = try reader.uint8("pressure")
        let minutes = try reader.uint8("time")
        let seconds = try reader.uint8("time")
        let mode = try reader.uint8("mode")
        let sector = try reader.uint8("sector")
        var sectorTimer: UInt8?
        var sectors: UInt8?
        if !reader.isAtEnd {
            sectorTimer = try reader.uint8("sector_timer")
            sectors = try reader.uint8("number_of_sectors")
        }
        try reader.expectEnd(name)
        let model = OralBModel.byID[modelID]
        var fields: [DecodedField] = []
        if let model { fields.append(.string("model", model.name)) }
        fields += [
            .int("model_id", modelID), .int("protocol_version", protocolVersion), .int("firmware", firmware),
            .int("state_code", state),
        ]
        if let name = OralBModel.states[state] { fields.append(.string("state", name)) }
        fields.append(.bool("brushing", state == 3, kind: .binary("running")))
        fields.append(.string("pressure", Self.pressure(status)))
        fields.append(.int("time", Int(minutes) * 60 + Int(seconds), unit: "s", kind: .duration))
        fields.append(.int("mode_code", mode))
        let modes = model?.modes ?? OralBModel.smartSeriesModes
        if let name = modes[mode] { fields.append(.string("mode", name)) }
        fields.append(.int("sector", state == 3 ? Self.sector(sector, count: sectors) : 0))
        if let sectorTimer, let sectors {
            fields.append(.int("sector_timer", sectorTimer, unit: "s", kind: .duration))
            fields.append(.int("number_of_sectors", sectors))
        }
        return fields
    }

    static func pressure(_ status: UInt8) -> String {
        if status & 0x08 != 0 { return "power button pressed" }
        if status & 0x04 != 0 { return "button pressed" }
        return status & 0x80 != 0 ? "high" : "normal"
    }

    /// The quadrant 1–6, 0 for none; 7 means the last, numbered by the sector count (bits 0–2;
    /// 4 when absent or 0).
    static func sector(_ byte: UInt8, count: UInt8?) -> UInt8 {
        let quadrant = byte & 0x07
        guard quadrant == 7 else { return quadrant }
        let last = (count ?? 0) & 0x07
        return last == 0 ? 4 : last
    }
}
