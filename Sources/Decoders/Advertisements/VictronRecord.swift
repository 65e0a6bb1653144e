/// The Instant Readout record types BLEBridge decodes, with their bit layouts (Victron's "extra
/// manufacturer data" description; fields packed least-significant bit first, see
/// ``LSBFirstBitReader``). A field holding its "not available" pattern is left out.
enum VictronRecord: UInt8 {
    case solarCharger = 0x01
    case batteryMonitor = 0x02
    case inverter = 0x03
    case dcdcConverter = 0x04
    case smartLithium = 0x05
    case acCharger = 0x08
    case smartBatteryProtect = 0x09
    case lynxSmartBMS = 0x0A
    case dcEnergyMeter = 0x0D
    case orionXS = 0x0F

    var model: String {
        switch self {
        case .solarCharger: "Solar Charger"
        case .batteryMonitor: "Battery Monitor"
        case .inverter: "Inverter"
        case .dcdcConverter: "DC-DC Converter"
        case .smartLithium: "Smart Lithium"
        case .acCharger: "AC Charger"
        case .smartBatteryProtect: "Smart BatteryProtect"
        case .lynxSmartBMS: "Lynx Smart BMS"
        case .dcEnergyMeter: "DC Energy Meter"
        case .orionXS: "Orion XS"
        }
    }

    /// The device states of VE.Direct's register 0x0201 (`device_state` names them; the code is
    /// published as `device_state_code` whether known or not).
    static let deviceStates: [UInt64: String] = [
        0: "off", 1: "low_power", 2: "fault", 3: "bulk", 4: "absorption", 5: "float", 6: "storage", 7: "equalize",
        9: "inverting", 11: "power_supply", 245: "starting_up", 246: "repeated_absorption", 247: "recondition",
        248: "battery_safe", 252: "external_control",
    ]

    /// The names of the battery monitor's aux input modes.
    static let auxModes = ["starter_voltage", "midpoint_voltage", "temperature", "none"]

    func fields(_ record: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var bits = LSBFirstBitReader(record)
        var fields = VictronFields()
        switch self {
        case .solarCharger:
            fields.deviceState(try bits.unsigned(8, "device_state"))
            fields.code("charger_error", try bits.unsigned(8, "charger_error"), notAvailable: 0xFF)
            fields.signed("battery_voltage", try bits.signed(16, "battery_voltage"), 0x7FFF, scale: 0.01, "V", .voltage)
            fields.signed(
                "battery_current", try bits.signed(16, "battery_current"), 0x7FFF, scale: 0.1, "A", .sensor("current"))
            fields.unsigned("yield_today", try bits.unsigned(16, "yield_today"), 0xFFFF, scale: 10, "Wh", .energy)
            fields.unsigned("solar_power", try bits.unsigned(16, "solar_power"), 0xFFFF, scale: 1, "W", .power)
            fields.unsigned(
                "load_current", try bits.unsigned(9, "load_current"), 0x1FF, scale: 0.1, "A", .sensor("current"))
        case .batteryMonitor:
            fields.unsigned(
                "time_remaining", try bits.unsigned(16, "time_remaining"), 0xFFFF, scale: 1, "min", .duration)
            let (aux, mode) = try monitorCore(&bits, &fields)
            let consumed = try bits.unsigned(20, "consumed_ah")
            // Consumed Ah is the record value negated (Victron's description), as VictronConnect shows it.
            if consumed != 0xFFFFF {
                fields.list.append(.double("consumed_ah", -Double(consumed) / 10, unit: "Ah", kind: .measurement))
            }
            fields.unsigned(
                "state_of_charge", try bits.unsigned(10, "state_of_charge"), 0x3FF, scale: 0.1, "%", .battery)
            fields.auxInput(aux, mode: mode, batteryMonitor: true)
        case .inverter:
            fields.deviceState(try bits.unsigned(8, "device_state"))
            fields.code("alarm", try bits.unsigned(16, "alarm"), notAvailable: nil)
            fields.signed("battery_voltage", try bits.signed(16, "battery_voltage"), 0x7FFF, scale: 0.01, "V", .voltage)
            fields.unsigned(
                "ac_apparent_power", try bits.unsigned(16, "ac_apparent_power"), 0xFFFF, scale: 1, "VA",
                .sensor("apparent_power"))
            fields.unsigned("ac_voltage", try bits.unsigned(15, "ac_voltage"), 0x7FFF, scale: 0.01, "V", .voltage)
            fields.unsigned(
                "ac_current", try bits.unsigned(11, "ac_current"), 0x7FF, scale: 0.1, "A", .sensor("current"))
        case .dcdcConverter:
            fields.deviceState(try bits.unsigned(8, "device_state"))
            fields.code("charger_error", try bits.unsigned(8, "charger_error"), notAvailable: 0xFF)
            fields.unsigned("input_voltage", try bits.unsigned(16, "input_voltage"), 0xFFFF, scale: 0.01, "V", .voltage)
            fields.signed("output_voltage", try bits.signed(16, "output_voltage"), 0x7FFF, scale: 0.01, "V", .voltage)
            fields.code("off_reason", try bits.unsigned(32, "off_reason"), notAvailable: nil)
        case .smartLithium: try smartLithium(&bits, &fields)
        case .acCharger: try acCharger(&bits, &fields)
        case .smartBatteryProtect: try smartBatteryProtect(&bits, &fields)
        case .lynxSmartBMS: try lynxSmartBMS(&bits, &fields)
        case .dcEnergyMeter: try dcEnergyMeter(&bits, &fields)
        case .orionXS: try orionXS(&bits, &fields)
        }
        return fields.list
    }
}

/// The fields of one record as they are read, each left out when it holds its "not available" bits.
struct VictronFields {
    var list: [DecodedField] = []

    mutating func deviceState(_ code: UInt64) {
        guard code != 0xFF else { return }
        list.append(.int("device_state_code", code))
        if let name = VictronRecord.deviceStates[code] { list.append(.string("device_state", name)) }
    }

    mutating func code(_ name: String, _ value: UInt64, notAvailable: UInt64?) {
        if value != notAvailable { list.append(.int(name, value)) }
    }

    /// A code as `<name>_code`, and its name from `names` when listed; nothing when `notAvailable`.
    mutating func namedCode(_ name: String, _ value: UInt64, notAvailable: UInt64, names: [UInt64: String]) {
        guard value != notAvailable else { return }
        list.append(.int("\(name)_code", value))
        if let text = names[value] { list.append(.string(name, text)) }
    }

    /// The battery monitor's and DC energy meter's aux mode (2 bits) and the input it names.
    mutating func auxMode(_ mode: UInt64) {
        list.append(.int("aux_mode", mode))
        list.append(.string("aux_input", VictronRecord.auxModes[Int(mode & 3)]))
    }

    /// The aux value by its mode: starter voltage (signed 0.01 V), midpoint voltage (0.01 V, the
    /// battery monitor only) or temperature (0.01 K, in °C; the DC energy meter's 0xFFFF is "not
    /// available", the battery monitor's description has no such pattern).
    mutating func auxInput(_ aux: UInt64, mode: UInt64, batteryMonitor: Bool) {
        switch mode {
        case 0:
            let starter = Int64(Int16(truncatingIfNeeded: aux))
            list.append(.double("starter_voltage", Double(starter) / 100, unit: "V", kind: .voltage))
        case 1 where batteryMonitor:
            list.append(.double("midpoint_voltage", Double(aux) / 100, unit: "V", kind: .voltage))
        case 2 where aux != 0xFFFF || batteryMonitor:
            list.append(.double("temperature", Double(Int64(aux) - 27_315) / 100, unit: "°C", kind: .temperature))
        default: break
        }
    }

    /// A temperature of 7 bits in whole °C offset by 40 ("not available" 0x7F).
    mutating func offsetTemperature(_ name: String, _ raw: UInt64) {
        guard raw != 0x7F else { return }
        list.append(.int(name, Int64(raw) - 40, unit: "°C", kind: .temperature))
    }

    mutating func unsigned(
        _ name: String, _ raw: UInt64, _ notAvailable: UInt64, scale: Double, _ unit: String, _ kind: FieldKind
    ) {
        guard raw != notAvailable else { return }
        list.append(Self.scaled(name, Int64(raw), scale, unit, kind))
    }

    mutating func signed(
        _ name: String, _ read: (value: Int64, raw: UInt64), _ notAvailable: UInt64, scale: Double, _ unit: String,
        _ kind: FieldKind
    ) {
        guard read.raw != notAvailable else { return }
        list.append(Self.scaled(name, read.value, scale, unit, kind))
    }

    /// Whole steps as integers, fractional steps divided by the power of ten (exact decimals).
    static func scaled(_ name: String, _ value: Int64, _ scale: Double, _ unit: String, _ kind: FieldKind)
        -> DecodedField
    {
        if scale >= 1 { return .int(name, value * Int64(scale), unit: unit, kind: kind) }
        return .double(name, Double(value) / (1 / scale).rounded(), unit: unit, kind: kind)
    }
}
