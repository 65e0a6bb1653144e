/// One object type of the BTHome v2 format (https://bthome.io/format/): its id, how its data is
/// laid out and what it means.
struct BTHomeObject: Sendable {
    enum Format: Sendable {
        /// A little-endian integer of `width` bytes, value = raw × multiplier × 10^exponent.
        case number(width: Int, signed: Bool, multiplier: Int64, exponent: Int)
        /// One byte, 0 or 1.
        case binary
        /// Button event (one byte).
        case button
        /// Dimmer event: event byte and number of steps.
        case dimmer
        /// Command: a length byte (low 5 bits: argument count), an opcode, then the arguments.
        case command
        /// uint32 seconds since 1970-01-01 UTC.
        case timestamp
        /// Length byte, then UTF-8.
        case text
        /// Length byte, then bytes.
        case raw
        /// Firmware version of `width` bytes, least significant part first.
        case firmware(width: Int)
    }

    var id: UInt8
    var name: String
    var format: Format
    var unit: String?
    var kind: FieldKind

    static func number(
        _ id: UInt8, _ name: String, _ width: Int, signed: Bool = false, _ multiplier: Int64 = 1, _ exponent: Int = 0,
        unit: String? = nil, kind: FieldKind = .measurement
    ) -> BTHomeObject {
        BTHomeObject(
            id: id, name: name,
            format: .number(width: width, signed: signed, multiplier: multiplier, exponent: exponent),
            unit: unit, kind: kind)
    }

    static func binary(_ id: UInt8, _ name: String, _ deviceClass: String?) -> BTHomeObject {
        BTHomeObject(id: id, name: name, format: .binary, unit: nil, kind: .binary(deviceClass))
    }

    /// Every object id of the BTHome v2 specification (bthome.io/format as of 2026-04-30, the
    /// change that moved the command object to 0x3B).
    static let all: [BTHomeObject] = [
        number(0x00, "packet_id", 1, kind: .attribute),
        number(0x01, "battery", 1, unit: "%", kind: .battery),
        number(0x02, "temperature", 2, signed: true, 1, -2, unit: "°C", kind: .temperature),
        number(0x03, "humidity", 2, 1, -2, unit: "%", kind: .humidity),
        number(0x04, "pressure", 3, 1, -2, unit: "hPa", kind: .pressure),
        number(0x05, "illuminance", 3, 1, -2, unit: "lx", kind: .sensor("illuminance")),
        number(0x06, "weight", 2, 1, -2, unit: "kg", kind: .weight),
        number(0x07, "weight", 2, 1, -2, unit: "lb", kind: .weight),
        number(0x08, "dew_point", 2, signed: true, 1, -2, unit: "°C", kind: .temperature),
        number(0x09, "count", 1),
        number(0x0A, "energy", 3, 1, -3, unit: "kWh", kind: .energy),
        number(0x0B, "power", 3, 1, -2, unit: "W", kind: .power),
        number(0x0C, "voltage", 2, 1, -3, unit: "V", kind: .voltage),
        number(0x0D, "pm25", 2, unit: "μg/m³", kind: .sensor("pm25")),
        number(0x0E, "pm10", 2, unit: "μg/m³", kind: .sensor("pm10")),
        binary(0x0F, "generic", nil),
        binary(0x10, "power_on", "power"),
        binary(0x11, "opening", "opening"),
        number(0x12, "co2", 2, unit: "ppm", kind: .sensor("carbon_dioxide")),
        number(0x13, "tvoc", 2, unit: "μg/m³", kind: .sensor("volatile_organic_compounds")),
        number(0x14, "moisture", 2, 1, -2, unit: "%", kind: .sensor("moisture")),
        binary(0x15, "battery_low", "battery"),
        binary(0x16, "battery_charging", "battery_charging"),
        binary(0x17, "carbon_monoxide", "carbon_monoxide"),
        binary(0x18, "cold", "cold"),
        binary(0x19, "connectivity", "connectivity"),
        binary(0x1A, "door", "door"),
        binary(0x1B, "garage_door", "garage_door"),
        binary(0x1C, "gas_detected", "gas"),
        binary(0x1D, "heat", "heat"),
        binary(0x1E, "light", "light"),
        binary(0x1F, "lock", "lock"),
        binary(0x20, "moisture_detected", "moisture"),
        binary(0x21, "motion", "motion"),
        binary(0x22, "moving", "moving"),
        binary(0x23, "occupancy", "occupancy"),
        binary(0x24, "plug", "plug"),
        binary(0x25, "presence", "presence"),
        binary(0x26, "problem", "problem"),
        binary(0x27, "running", "running"),
        binary(0x28, "safety", "safety"),
        binary(0x29, "smoke", "smoke"),
        binary(0x2A, "sound", "sound"),
        binary(0x2B, "tamper", "tamper"),
        binary(0x2C, "vibration", "vibration"),
        binary(0x2D, "window", "window"),
        number(0x2E, "humidity", 1, unit: "%", kind: .humidity),
        number(0x2F, "moisture", 1, unit: "%", kind: .sensor("moisture")),
        BTHomeObject(
            id: 0x3A, name: "button", format: .button, unit: nil,
            kind: .event("button", types: eventTypes(buttonEvents))),
        BTHomeObject(
            id: 0x3B, name: "command", format: .command, unit: nil, kind: .event(nil, types: eventTypes(commandOpcodes))
        ),
        BTHomeObject(
            id: 0x3C, name: "dimmer", format: .dimmer, unit: nil, kind: .event(nil, types: eventTypes(dimmerEvents))),
        number(0x3D, "count", 2),
        number(0x3E, "count", 4),
        number(0x3F, "rotation", 2, signed: true, 1, -1, unit: "°"),
        number(0x40, "distance", 2, unit: "mm", kind: .distance),
        number(0x41, "distance", 2, 1, -1, unit: "m", kind: .distance),
        number(0x42, "duration", 3, 1, -3, unit: "s", kind: .duration),
        number(0x43, "current", 2, 1, -3, unit: "A", kind: .sensor("current")),
        number(0x44, "speed", 2, 1, -2, unit: "m/s", kind: .speed),
        number(0x45, "temperature", 2, signed: true, 1, -1, unit: "°C", kind: .temperature),
        number(0x46, "uv_index", 1, 1, -1),
        // A volume (how much flowed or was dispensed) is a total, never a measurement in Home Assistant.
        number(0x47, "volume", 2, 1, -1, unit: "L", kind: .sensor("volume", stateClass: .total)),
        number(0x48, "volume", 2, unit: "mL", kind: .sensor("volume", stateClass: .total)),
        number(0x49, "volume_flow_rate", 2, 1, -3, unit: "m³/h", kind: .sensor("volume_flow_rate")),
        number(0x4A, "voltage", 2, 1, -1, unit: "V", kind: .voltage),
        number(0x4B, "gas", 3, 1, -3, unit: "m³", kind: .sensor("gas", stateClass: .totalIncreasing)),
        number(0x4C, "gas", 4, 1, -3, unit: "m³", kind: .sensor("gas", stateClass: .totalIncreasing)),
        number(0x4D, "energy", 4, 1, -3, unit: "kWh", kind: .energy),
        number(0x4E, "volume", 4, 1, -3, unit: "L", kind: .sensor("volume", stateClass: .totalIncreasing)),
        number(0x4F, "water", 4, 1, -3, unit: "L", kind: .sensor("water", stateClass: .totalIncreasing)),
        BTHomeObject(id: 0x50, name: "timestamp", format: .timestamp, unit: nil, kind: .timestamp),
        number(0x51, "acceleration", 2, 1, -3, unit: "m/s²"),
        number(0x52, "gyroscope", 2, 1, -3, unit: "°/s"),
        BTHomeObject(id: 0x53, name: "text", format: .text, unit: nil, kind: .attribute),
        BTHomeObject(id: 0x54, name: "raw", format: .raw, unit: nil, kind: .attribute),
        number(0x55, "volume_storage", 4, 1, -3, unit: "L", kind: .sensor("volume_storage")),
        number(0x56, "conductivity", 2, unit: "μS/cm", kind: .sensor("conductivity")),
        number(0x57, "temperature", 1, signed: true, unit: "°C", kind: .temperature),
        number(0x58, "temperature", 1, signed: true, 35, -2, unit: "°C", kind: .temperature),
        number(0x59, "count", 1, signed: true),
        number(0x5A, "count", 2, signed: true),
        number(0x5B, "count", 4, signed: true),
        number(0x5C, "power", 4, signed: true, 1, -2, unit: "W", kind: .power),
        number(0x5D, "current", 2, signed: true, 1, -3, unit: "A", kind: .sensor("current")),
        number(0x5E, "direction", 2, 1, -2, unit: "°", kind: .sensor("wind_direction", stateClass: .measurementAngle)),
        number(0x5F, "precipitation", 2, 1, -1, unit: "mm", kind: .sensor("precipitation")),
        number(0x60, "channel", 1, kind: .attribute),
        number(0x61, "rotational_speed", 2, unit: "rpm"),
        number(0x62, "speed", 4, signed: true, 1, -6, unit: "m/s", kind: .speed),
        number(0x63, "acceleration", 4, signed: true, 1, -6, unit: "m/s²"),
        number(0x64, "light_level", 1),
        number(0x65, "settings_revision", 1, kind: .attribute),
        number(0xF0, "device_type_id", 2, kind: .attribute),
        BTHomeObject(id: 0xF1, name: "firmware_version", format: .firmware(width: 4), unit: nil, kind: .attribute),
        BTHomeObject(id: 0xF2, name: "firmware_version", format: .firmware(width: 3), unit: nil, kind: .attribute),
    ]

    static let byID: [UInt8: BTHomeObject] = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

    static let buttonEvents: [UInt8: String] = [
        0x00: "none", 0x01: "press", 0x02: "double_press", 0x03: "triple_press", 0x04: "long_press",
        0x05: "long_double_press", 0x06: "long_triple_press", 0x80: "hold_press",
    ]

    /// An event table's types in code order, without `none` (no event: Home Assistant gets none).
    static func eventTypes(_ table: [UInt8: String]) -> [String] {
        table.sorted { $0.key < $1.key }.map(\.value).filter { $0 != "none" }
    }

    static let dimmerEvents: [UInt8: String] = [0x00: "none", 0x01: "rotate_left", 0x02: "rotate_right"]

    /// Command opcodes; `step_up` and `step_down` carry the number of steps as their argument.
    static let commandOpcodes: [UInt8: String] = [
        0x00: "off", 0x01: "on", 0x02: "toggle", 0x03: "step_up", 0x04: "step_down",
    ]
}
