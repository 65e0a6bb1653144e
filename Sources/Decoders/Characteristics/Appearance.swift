import Bluetooth

/// Appearance (0x2A01), GAP: a 16-bit value whose top 10 bits are the category and low 6 bits the
/// subcategory (Assigned Numbers §2.6).
package struct Appearance: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A01))
    package let name = "appearance"

    static let categories: [UInt16: String] = [
        0: "unknown", 1: "phone", 2: "computer", 3: "watch", 4: "clock", 5: "display", 6: "remote_control",
        7: "eye_glasses", 8: "tag", 9: "keyring", 10: "media_player", 11: "barcode_scanner", 12: "thermometer",
        13: "heart_rate_sensor", 14: "blood_pressure", 15: "human_interface_device", 16: "glucose_meter",
        17: "running_walking_sensor", 18: "cycling", 19: "control_device", 20: "network_device", 21: "sensor",
        22: "light_fixtures", 23: "fan", 24: "hvac", 25: "air_conditioning", 26: "humidifier", 27: "heating",
        28: "access_control", 29: "motorized_device", 30: "power_device", 31: "light_source", 32: "window_covering",
        33: "audio_sink", 34: "audio_source", 35: "motorized_vehicle", 36: "domestic_appliance",
        37: "wearable_audio_device", 38: "aircraft", 39: "av_equipment", 40: "display_equipment", 41: "hearing_aid",
        42: "gaming", 43: "signage", 49: "pulse_oximeter", 50: "weight_scale", 51: "personal_mobility_device",
        52: "continuous_glucose_monitor", 53: "insulin_pump", 54: "medication_delivery", 55: "spirometer",
        81: "outdoor_sports_activity",
    ]

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let value = try reader.uint16("appearance")
        try reader.expectEnd(name)
        let category = value >> 6
        return [
            .int("appearance", value),
            .int("category", category),
            .string("category_name", Self.categories[category] ?? "reserved"),
            .int("subcategory", value & 0x3F),
        ]
    }
}
