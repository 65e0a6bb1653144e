/// One object type of Xiaomi's MiBeacon advertisement (service data 0xFE95): a 2-byte type id,
/// a length byte, then the data. Only the ids below are decoded; any other object is skipped by
/// its length and reported as `object_0x…` (hex), so one unknown object never hides the rest.
struct MiBeaconObject: Sendable {
    enum Format: Sendable {
        /// A little-endian integer of `width` bytes, value = raw × 10^exponent.
        case number(width: Int, signed: Bool, exponent: Int, unit: String?, kind: FieldKind)
        /// Temperature (int16, 0.1 °C) then humidity (uint16, 0.1 %).
        case temperatureAndHumidity
        /// One byte, zero or not zero.
        case flag(FieldKind)
        /// Door sensor state: 0 open, 1 closed, 2 left open (not closed within its timeout),
        /// 3 device reset (no state).
        case door
        /// Motion with illuminance: a uint24 illuminance in lux; the object itself means motion.
        case motionWithIlluminance
        /// The button object 0x1001: button, value, press type; read per model (``MiBeaconButton``).
        case button
    }

    var id: UInt16
    var name: String
    var format: Format

    /// The data length each format needs; an object of another length is an error.
    var length: Int {
        switch format {
        case .number(let width, _, _, _, _): return width
        case .temperatureAndHumidity: return 4
        case .flag, .door: return 1
        case .motionWithIlluminance, .button: return 3
        }
    }

    static func number(
        _ id: UInt16, _ name: String, _ width: Int, signed: Bool = false, exponent: Int = 0, unit: String?,
        kind: FieldKind
    ) -> MiBeaconObject {
        MiBeaconObject(
            id: id, name: name,
            format: .number(width: width, signed: signed, exponent: exponent, unit: unit, kind: kind))
    }

    /// The common object ids of Xiaomi's object definition (iot.mi.com "object definition").
    static let all: [MiBeaconObject] = [
        MiBeaconObject(id: 0x000F, name: "motion", format: .motionWithIlluminance),
        MiBeaconObject(id: 0x1001, name: "button", format: .button),
        number(0x1004, "temperature", 2, signed: true, exponent: -1, unit: "°C", kind: .temperature),
        number(0x1006, "humidity", 2, exponent: -1, unit: "%", kind: .humidity),
        number(0x1007, "illuminance", 3, unit: "lx", kind: .sensor("illuminance")),
        number(0x1008, "moisture", 1, unit: "%", kind: .sensor("moisture")),
        number(0x1009, "conductivity", 2, unit: "μS/cm", kind: .sensor("conductivity")),
        number(0x100A, "battery", 1, unit: "%", kind: .battery),
        MiBeaconObject(id: 0x100D, name: "temperature", format: .temperatureAndHumidity),
        number(0x1010, "formaldehyde", 2, exponent: -2, unit: "mg/m³", kind: .measurement),
        MiBeaconObject(id: 0x1012, name: "power_on", format: .flag(.binary("power"))),
        number(0x1013, "consumable", 1, unit: "%", kind: .measurement),
        MiBeaconObject(id: 0x1014, name: "moisture_detected", format: .flag(.binary("moisture"))),
        MiBeaconObject(id: 0x1015, name: "smoke", format: .flag(.binary("smoke"))),
        number(0x1017, "no_motion_time", 4, unit: "s", kind: .duration),
        MiBeaconObject(id: 0x1018, name: "light", format: .flag(.binary("light"))),
        MiBeaconObject(id: 0x1019, name: "opening", format: .door),
    ]

    static let byID: [UInt16: MiBeaconObject] = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

    /// Product ids of the models the decoder is documented for (docs/decoders.md), as Xiaomi
    /// assigns them; the product id of any other device is still published as `product_id`.
    static let models: [UInt16: String] = [
        0x0098: "HHCCJCY01", 0x01AA: "LYWSDCGQ", 0x02DF: "JQJCY01YM", 0x0347: "CGG1", 0x0387: "MHO-C401",
        0x03BC: "GCLS002", 0x045B: "LYWSD02", 0x055B: "LYWSD03MMC", 0x066F: "CGDK2", 0x07F6: "MJYD02YL",
        0x0863: "SJWS01LM", 0x098B: "MCCGQ02HL", 0x0A83: "CGPR1", 0x0A8D: "RTCGQ02LM", 0x0B48: "CGG1-ENCRYPTED",
        // Buttons (object 0x1001, ``MiBeaconButton``).
        0x0997: "JTYJGD03MI", 0x07BF: "YLAI003", 0x1568: "K9B-1BTN", 0x1569: "K9B-2BTN", 0x0DFD: "K9B-3BTN",
        0x0153: "YLYK01YL", 0x068E: "YLYK01YL-FANCL", 0x04E6: "YLYK01YL-VENFAN", 0x03BF: "YLYB01YL-BHFRC",
        0x03B6: "YLKG07YL", 0x04E1: "XMMF01JQD",
    ]
}
