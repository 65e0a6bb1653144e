import Bluetooth

/// Xiaomi's bathroom scales, which advertise their reading as service data of the SIG's Weight
/// Scale (0x181D, Mi Smart Scale XMTZC01HM / XMTZC04HM, decoder `miscale_v1`) or Body Composition
/// (0x181B, Mi Body Composition Scale XMTZC02HM / XMTZC05HM / NUN4049CN, decoder `miscale_v2`)
/// UUIDs, in a layout of Xiaomi's own (not the SIG characteristics').
///
/// v1, 10 bytes: a control byte (bit 0 pounds, bit 4 jin, neither kilograms; bit 5 the weight is
/// stable; bit 7 the load was removed), the weight (uint16 LE: kg × 200, or lb / jin × 100), then
/// the scale's clock (year uint16 LE, month, day, hours, minutes, seconds).
///
/// v2, 13 bytes: two control bytes (byte 0 bit 0 pounds; byte 1 bit 6 jin, bit 5 stable, bit 7 load
/// removed, bit 1 impedance measured), the clock (7 bytes as above), the impedance (uint16 LE, Ω)
/// and the weight (uint16 LE, as v1).
///
/// Published: `weight` in kilograms (1 lb = 0.45359237 kg, 1 jin = 0.5 kg; rounded to the gram),
/// `weight_unit` as the scale shows it (`kg`, `lb`, `jin`), `stabilized` (the weight is final: stable,
/// not removed, above zero), `weight_removed`, `impedance` (v2, only with a final weight the scale
/// says it measured the impedance for), `timestamp` (null when the clock is not set) and `model`.
package struct MiScaleDecoder: AdvertisementDecoder {
    package let name: String
    package let source: AdvertisementSource
    let version: Int

    /// Mi Smart Scale (v1), service data 0x181D.
    package init() {
        name = "miscale_v1"
        source = .serviceData(BluetoothUUID(UInt16(0x181D)))
        version = 1
    }

    /// Mi Body Composition Scale (v2), service data 0x181B.
    package static let bodyComposition = MiScaleDecoder(bodyComposition: ())

    private init(bodyComposition: Void) {
        name = "miscale_v2"
        source = .serviceData(BluetoothUUID(UInt16(0x181B)))
        version = 2
    }

    package func accepts(_ payload: [UInt8]) -> Bool { payload.count == (version == 1 ? 10 : 13) }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let pounds: Bool
        let jin: Bool
        let stable: Bool
        let removed: Bool
        var impedanceMeasured = false
        var impedance: UInt16 = 0
        let raw: UInt16
        let timestamp: DecodedValue
        if version == 1 {
            let control = try reader.uint8("control")
            (pounds, jin, stable, removed) =
                (control & 0x01 != 0, control & 0x10 != 0, control & 0x20 != 0, control & 0x80 != 0)
            raw = try reader.uint16("weight")
            timestamp = try GATTDateTime(from: &reader, field: "timestamp").decodedValue
        } else {
            let units = try reader.uint8("control")
            let state = try reader.uint8("control")
            (pounds, jin, stable, removed) = (
                units & 0x01 != 0, state & 0x40 != 0, state & 0x20 != 0, state & 0x80 != 0
            )
            impedanceMeasured = state & 0x02 != 0
            timestamp = try GATTDateTime(from: &reader, field: "timestamp").decodedValue
            impedance = try reader.uint16("impedance")
            raw = try reader.uint16("weight")
        }
        try reader.expectEnd("weight")
        let (unit, kilograms): (String, Double) =
            pounds
            ? ("lb", Double(raw) * 0.45359237 / 100)
            : jin ? ("jin", Double(raw) * 0.5 / 100) : ("kg", Double(raw) / 200)
        let weight = (kilograms * 1000).rounded() / 1000
        let final = stable && !removed && raw > 0
        var fields: [DecodedField] = [
            .double("weight", weight, unit: "kg", kind: .weight),
            .string("weight_unit", unit),
            .bool("stabilized", final, kind: .binary(nil)),
            .bool("weight_removed", removed),
        ]
        if version == 2, final, impedanceMeasured {
            fields.append(.int("impedance", impedance, unit: "Ω", kind: .measurement))
        }
        fields.append(DecodedField(name: "timestamp", value: timestamp))
        fields.append(.string("model", version == 1 ? "XMTZC01HM/XMTZC04HM" : "XMTZC02HM/XMTZC05HM"))
        return fields
    }
}
