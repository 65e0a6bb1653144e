import Bluetooth

@testable import Decoders

/// The manufacturer-data families (scripts/differential/manufacturer.py): Govee, ThermoPro and
/// INKBIRD. BLEBridge's field names are the references' keys.
extension DifferentialComparison {
    static let manufacturerFamilies = ["govee", "thermopro", "inkbird"]

    /// The fields compared: every reading the references publish.
    static func isComparedManufacturerField(_ name: String) -> Bool {
        ["temperature", "humidity", "battery"].contains(name)
            || ["temperature_probe_", "temperature_alarm_probe_", "low_temperature_alarm_probe_"].contains {
                name.hasPrefix($0)
            }
    }

    static func decodeManufacturerData(_ entry: OracleCase, company: Int) -> DecodedReading {
        let context = AdvertisementContext(
            address: BluetoothAddress(entry.address), localName: entry.name.flatMap { $0.isEmpty ? nil : $0 })
        return DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [:], manufacturerData: [UInt16(company): Hex.bytes(entry.hex) ?? []], context: context
        ).first ?? DecodedReading(decoder: "none", fields: [], raw: [])
    }

    /// Names of the compared fields that differ; `["rejection"]` when only one side decoded. A
    /// null of ours agrees with a key the reference leaves out and with its `"error"` value (Govee:
    /// the sensor flagged an error or read outside its range).
    static func manufacturerDifferences(_ ours: DecodedReading, _ oracle: [String: OracleValue]?) -> [String] {
        let published = ours.fields.filter { isComparedManufacturerField($0.name) && $0.value != .null }
        guard let oracle, !oracle.isEmpty else {
            return ours.isSuccess && !published.isEmpty ? ["rejection"] : []
        }
        guard ours.isSuccess else { return ["rejection"] }
        var differing: [String] = []
        let names = Set(oracle.keys).union(published.map(\.name)).sorted()
        for name in names {
            guard isComparedManufacturerField(name) else {
                differing.append("reference-only \(name)")
                continue
            }
            let mine = ours[name].flatMap { $0 == .null ? nil : $0 }
            switch (mine, oracle[name]) {
            case (nil, nil), (nil, .string("error")?), (nil, .null?): continue
            case (let mine?, let theirs?) where agree(mine, theirs): continue
            default: differing.append(name)
            }
        }
        return differing
    }
}
