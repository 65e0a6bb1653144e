import Bluetooth

@testable import Decoders

/// How one payload's two decodings compare.
enum Outcome: Equatable {
    case match
    /// A listed disagreement (``KnownDisagreement``), by its name.
    case known(String)
    case unexpected(String)
}

/// A place where the reference parser and BLEBridge decode differently on purpose. Each names
/// the generator cases where it may occur and why BLEBridge is right (or why it differs).
struct KnownDisagreement: Sendable {
    var name: String
    var family: String
    /// The generator case must contain this.
    var caseMarker: String
    var justification: String
    /// Whether this payload's difference is the one described.
    var applies: @Sendable (_ ours: DecodedReading, _ oracle: [String: OracleValue]?, _ differing: [String]) -> Bool

    static let all: [KnownDisagreement] =
        advertisementFamilies + [
            KnownDisagreement(
                name: "humidity_floor", family: "mibeacon", caseMarker: "_humidity_floor",
                justification:
                    "xiaomi-ble truncates the LYWSD03MMC / MHO-C401 humidity to a whole percent (its comment: to hide the sensors' stair-stepping); the frame carries 0.1 %, which BLEBridge publishes unchanged",
                applies: { ours, oracle, differing in
                    guard differing == ["humidity"], let value = ours["humidity"]?.doubleValue,
                        case .number(let reference)? = oracle?["humidity"]
                    else { return false }
                    return reference == value.rounded(.towardZero)
                }),
            KnownDisagreement(
                name: "bad_object_length", family: "mibeacon", caseMarker: "_bad_object_length",
                justification:
                    "an object whose length does not fit its type (a 1-byte conductivity) is skipped silently by xiaomi-ble, which publishes the frame's other objects; BLEBridge rejects the frame with invalid_value naming the object (decoders are strict: a corrupt frame is reported, not guessed around)",
                applies: { ours, _, differing in differing == ["rejection"] && ours.error?.code == .invalidValue }),
            KnownDisagreement(
                name: "truncated_frame", family: "mibeacon", caseMarker: "truncated",
                justification:
                    "a frame cut inside an object: xiaomi-ble publishes the complete objects before the cut; BLEBridge rejects the frame with truncated naming the object that was cut",
                applies: { ours, _, differing in differing == ["rejection"] && ours.error?.code == .truncated }),
            KnownDisagreement(
                name: "temperature_0x58_rounding", family: "bthome", caseMarker: "_temperature_0x58",
                justification:
                    "object 0x58 is a temperature in steps of 0.35 °C (bthome.io/format); bthome-ble rounds it to 0.1 °C (-1.05 becomes -1.0), BLEBridge publishes the exact step",
                applies: { ours, oracle, differing in
                    guard differing == ["temperature"], let value = ours["temperature"]?.doubleValue,
                        case .number(let reference)? = oracle?["temperature"]
                    else { return false }
                    return abs(reference - value) <= 0.05 + 1e-9
                }),
        ]
}

/// The comparisons per family.
enum DifferentialComparison {
    /// MiBeacon: BLEBridge's field → the reference's key. Only these are compared; the reference's
    /// own extras (`voltage` estimated from the battery percentage) are removed by the generator.
    static let mibeaconKeys: [String: String] = [
        "temperature": "temperature", "humidity": "humidity", "battery": "battery", "illuminance": "illuminance",
        "moisture": "moisture", "conductivity": "conductivity", "formaldehyde": "formaldehyde",
        "consumable": "consumable", "power_on": "binary:power", "opening": "binary:opening",
        "door_left_open": "binary:door_left_open", "light": "binary:light", "moisture_detected": "binary:moisture",
        "smoke": "binary:smoke", "motion": "binary:motion",
    ].merging(mibeaconButtonKeys) { first, _ in first }

    /// The button object 0x1001: each button's event, the dimmer's event and its property, the cube's.
    static let mibeaconButtonKeys: [String: String] = {
        let buttons = [
            "left", "middle", "right", "on", "off", "brightness", "plus", "min", "fan", "light", "wind_speed",
            "color_temperature", "wind_mode", "swing", "power", "timer_60_minutes", "increase_wind_speed",
            "timer_30_minutes", "decrease_wind_speed", "stop", "air_exchange", "increase_speed", "decrease_speed",
            "dry", "heat",
        ]
        var keys = Dictionary(uniqueKeysWithValues: buttons.map { ("button_" + $0, "event:button_" + $0) })
        keys["button"] = "event:button"
        keys["button_m"] = "event:button_M"
        keys["dimmer"] = "event:dimmer"
        keys["dimmer_presses"] = "event:dimmer:number_of_presses"
        keys["dimmer_duration"] = "event:dimmer:duration"
        keys["dimmer_steps"] = "event:dimmer:steps"
        keys["cube"] = "event:cube"
        return keys
    }()

    /// Numbers agree when they differ by at most this, relative: the references multiply raw values
    /// by binary fractions (0.001 × raw), BLEBridge divides by exact powers of ten.
    static let tolerance = 1e-9

    static func decode(_ entry: OracleCase) -> DecodedReading {
        let registry = DecoderRegistry.standard
        if let company = entry.company { return decodeManufacturerData(entry, company: company) }
        if let advertisement = advertisement(entry) { return advertisement }
        let uuid = BluetoothUUID(UInt16(entry.family == "mibeacon" ? 0xFE95 : 0xFCD2))
        let context = AdvertisementContext(
            address: BluetoothAddress(entry.address), bindKey: entry.key.flatMap { Hex.bytes($0) })
        return registry.decodeAdvertisement(
            serviceData: [uuid: Hex.bytes(entry.hex) ?? []], manufacturerData: [:], context: context
        ).first ?? DecodedReading(decoder: "none", fields: [], raw: [])
    }

    static func outcome(_ entry: OracleCase) -> Outcome {
        let ours = decode(entry)
        let differing: [String]
        switch entry.family {
        case "mibeacon": differing = mibeaconDifferences(ours, entry.oracle)
        case "bthome": differing = bthomeDifferences(ours, entry)
        case _ where manufacturerFamilies.contains(entry.family):
            differing = manufacturerDifferences(ours, entry.oracle)
        default:
            guard let keys = keyedFamilies[entry.family] else {
                return .unexpected("no comparison for family \(entry.family)")
            }
            differing = mibeaconDifferences(
                ours, entry.oracle, keys: keys, absolute: absoluteTolerances[entry.family] ?? 0)
        }
        if differing.isEmpty { return .match }
        if let known = KnownDisagreement.all.first(where: {
            $0.family == entry.family && entry.case.contains($0.caseMarker) && $0.applies(ours, entry.oracle, differing)
        }) {
            return .known(known.name)
        }
        let reference = entry.oracle.map { "\($0.sorted { $0.key < $1.key })" } ?? "nothing"
        let mine = ours.error.map { "\($0)" } ?? ours.jsonString()
        return .unexpected("\(entry.case) \(entry.hex): differs in \(differing); reference \(reference); ours \(mine)")
    }

    /// Names of the compared fields that differ; `["rejection"]` when only one side decoded.
    /// Also the comparison of every family in ``keyedFamilies``, with its keys.
    static func mibeaconDifferences(
        _ ours: DecodedReading, _ oracle: [String: OracleValue]?, keys mibeaconKeys: [String: String] = mibeaconKeys,
        absolute: Double = 0
    ) -> [String] {
        guard let oracle, !oracle.isEmpty else {
            let compared = ours.fields.filter { mibeaconKeys[$0.name] != nil }
            return ours.isSuccess && !compared.isEmpty ? ["rejection"] : []
        }
        guard ours.isSuccess else { return ["rejection"] }
        var differing: [String] = []
        let unknown = Set(oracle.keys).subtracting(mibeaconKeys.values)
        differing += unknown.sorted().map { "reference-only \($0)" }
        for (name, key) in mibeaconKeys.sorted(by: { $0.key < $1.key }) {
            let mine = ours[name]
            let theirs = oracle[key]
            if mine == nil && theirs == nil { continue }
            guard let mine, let theirs, agree(mine, theirs, absolute: absolute) else {
                differing.append(name)
                continue
            }
        }
        return differing
    }

    /// BTHome: each object's value against the reference's value for that object.
    static func bthomeDifferences(_ ours: DecodedReading, _ entry: OracleCase) -> [String] {
        guard let objects = entry.objects else { return ours.isSuccess ? ["rejection"] : [] }
        guard ours.isSuccess else { return ["rejection"] }
        var differing: [String] = []
        for pair in objects {
            guard pair.count == 2, case .number(let rawID) = pair[0], let object = BTHomeObject.byID[UInt8(rawID)]
            else {
                differing.append("corpus line")
                continue
            }
            guard let mine = ours[object.name], agree(mine, pair[1]) else {
                differing.append(object.name)
                continue
            }
        }
        return differing
    }

    static func agree(_ mine: DecodedValue, _ theirs: OracleValue, absolute: Double = 0) -> Bool {
        switch (mine, theirs) {
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (_, .number(let b)):
            guard let a = mine.doubleValue else { return false }
            return abs(a - b) <= max(tolerance * max(1, abs(b)), absolute)
        default: return false
        }
    }
}
