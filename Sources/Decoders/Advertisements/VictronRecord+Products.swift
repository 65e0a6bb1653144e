/// The record types added after the first four: Smart Lithium batteries, AC chargers, Smart
/// BatteryProtect, Lynx Smart BMS, DC energy meters (SmartShunt in energy-meter mode) and Orion XS
/// (Victron's "extra manufacturer data" description; fields packed least-significant bit first,
/// a field holding its "not available" pattern left out).
extension VictronRecord {
    /// The Smart Lithium balancer's states (4 bits; 0xF not available).
    static let balancerStates: [UInt64: String] = [0: "unknown", 1: "balanced", 2: "balancing", 3: "imbalance"]

    /// The Smart BatteryProtect's output states (8 bits; 0xFF not available).
    static let outputStates: [UInt64: String] = [0: "shutdown", 1: "on", 4: "off"]

    /// The DC energy meter's meter types (signed 16 bits; sources negative, loads positive).
    static let meterTypes: [Int64: String] = [
        -9: "solar_charger", -8: "wind_charger", -7: "shaft_generator", -6: "alternator", -5: "fuel_cell",
        -4: "water_generator", -3: "dc_dc_charger", -2: "ac_charger", -1: "generic_source", 1: "generic_load",
        2: "electric_drive", 3: "fridge", 4: "water_pump", 5: "bilge_pump", 6: "dc_system", 7: "inverter",
        8: "water_heater",
    ]

    /// BMS flags (32), error flags (16), eight cell voltages (7 bits each: 2.60 V + 0.01 V steps;
    /// 0x00 below 2.61 V and 0x7E above 3.85 V are published as null, 0x7F "not available" left
    /// out), battery voltage (12, 0.01 V), balancer status (4), battery temperature (7, °C + 40).
    func smartLithium(_ bits: inout LSBFirstBitReader, _ fields: inout VictronFields) throws(DecoderError) {
        fields.code("bms_flags", try bits.unsigned(32, "bms_flags"), notAvailable: nil)
        fields.code("error_flags", try bits.unsigned(16, "error_flags"), notAvailable: nil)
        for cell in 1...8 {
            let name = "cell_voltage_\(cell)"
            let raw = try bits.unsigned(7, name)
            switch raw {
            case 0x7F: continue
            case 0x00, 0x7E: fields.list.append(DecodedField(name: name, value: .null, unit: "V", kind: .voltage))
            default: fields.list.append(.double(name, Double(260 + raw) / 100, unit: "V", kind: .voltage))
            }
        }
        fields.unsigned("battery_voltage", try bits.unsigned(12, "battery_voltage"), 0xFFF, scale: 0.01, "V", .voltage)
        fields.namedCode(
            "balancer_status", try bits.unsigned(4, "balancer_status"), notAvailable: 0xF, names: Self.balancerStates)
        fields.offsetTemperature("battery_temperature", try bits.unsigned(7, "battery_temperature"))
    }

    /// Device state, charger error, three outputs' voltage (13 bits, 0.01 V) and current (11,
    /// 0.1 A), temperature (7, °C + 40), AC current (9, 0.1 A).
    func acCharger(_ bits: inout LSBFirstBitReader, _ fields: inout VictronFields) throws(DecoderError) {
        fields.deviceState(try bits.unsigned(8, "device_state"))
        fields.code("charger_error", try bits.unsigned(8, "charger_error"), notAvailable: 0xFF)
        for output in 1...3 {
            let voltage = "output_voltage_\(output)"
            let current = "output_current_\(output)"
            fields.unsigned(voltage, try bits.unsigned(13, voltage), 0x1FFF, scale: 0.01, "V", .voltage)
            fields.unsigned(current, try bits.unsigned(11, current), 0x7FF, scale: 0.1, "A", .sensor("current"))
        }
        fields.offsetTemperature("temperature", try bits.unsigned(7, "temperature"))
        fields.unsigned("ac_current", try bits.unsigned(9, "ac_current"), 0x1FF, scale: 0.1, "A", .sensor("current"))
    }

    /// Device state, output state, error code, alarm and warning reasons (16 each), input voltage
    /// (signed, 0.01 V), output voltage (0.01 V), off reason (32).
    func smartBatteryProtect(_ bits: inout LSBFirstBitReader, _ fields: inout VictronFields) throws(DecoderError) {
        fields.deviceState(try bits.unsigned(8, "device_state"))
        fields.namedCode(
            "output_state", try bits.unsigned(8, "output_state"), notAvailable: 0xFF, names: Self.outputStates)
        fields.code("error_code", try bits.unsigned(8, "error_code"), notAvailable: 0xFF)
        fields.code("alarm", try bits.unsigned(16, "alarm"), notAvailable: nil)
        fields.code("warning", try bits.unsigned(16, "warning"), notAvailable: nil)
        fields.signed("input_voltage", try bits.signed(16, "input_voltage"), 0x7FFF, scale: 0.01, "V", .voltage)
        fields.unsigned("output_voltage", try bits.unsigned(16, "output_voltage"), 0xFFFF, scale: 0.01, "V", .voltage)
        fields.code("off_reason", try bits.unsigned(32, "off_reason"), notAvailable: nil)
    }

    /// Error flags (8), time remaining (16, min), voltage (signed, 0.01 V), current (signed, 0.1 A),
    /// IO status (16), alarm flags (18), state of charge (10, 0.1 %), consumed Ah (20, 0.1 Ah, as
    /// the record carries it), battery temperature (7, °C + 40).
    func lynxSmartBMS(_ bits: inout LSBFirstBitReader, _ fields: inout VictronFields) throws(DecoderError) {
        fields.code("error_flags", try bits.unsigned(8, "error_flags"), notAvailable: nil)
        fields.unsigned("time_remaining", try bits.unsigned(16, "time_remaining"), 0xFFFF, scale: 1, "min", .duration)
        fields.signed("voltage", try bits.signed(16, "voltage"), 0x7FFF, scale: 0.01, "V", .voltage)
        fields.signed("current", try bits.signed(16, "current"), 0x7FFF, scale: 0.1, "A", .sensor("current"))
        fields.code("io_status", try bits.unsigned(16, "io_status"), notAvailable: nil)
        fields.code("alarm_flags", try bits.unsigned(18, "alarm_flags"), notAvailable: nil)
        fields.unsigned("state_of_charge", try bits.unsigned(10, "state_of_charge"), 0x3FF, scale: 0.1, "%", .battery)
        fields.unsigned(
            "consumed_ah", try bits.unsigned(20, "consumed_ah"), 0xFFFFF, scale: 0.1, "Ah", .measurement)
        fields.offsetTemperature("battery_temperature", try bits.unsigned(7, "battery_temperature"))
    }

    /// Meter type (signed 16), voltage (signed, 0.01 V), alarm (16), aux value (16), aux mode (2),
    /// current (signed 22, 0.001 A; all 22 bits set "not available").
    func dcEnergyMeter(_ bits: inout LSBFirstBitReader, _ fields: inout VictronFields) throws(DecoderError) {
        let meter = try bits.signed(16, "meter_type")
        fields.list.append(.int("meter_type_code", meter.value))
        if let name = Self.meterTypes[meter.value] { fields.list.append(.string("meter_type", name)) }
        let (aux, mode) = try monitorCore(&bits, &fields)
        fields.auxInput(aux, mode: mode, batteryMonitor: false)
    }

    /// What the battery monitor and the DC energy meter records share, in their order: voltage, alarm,
    /// the aux input's raw value and mode, current. The aux value is read out by the caller once its
    /// meaning (the mode) and the record's kind are known.
    func monitorCore(_ bits: inout LSBFirstBitReader, _ fields: inout VictronFields) throws(DecoderError) -> (
        aux: UInt64, mode: UInt64
    ) {
        fields.signed("voltage", try bits.signed(16, "voltage"), 0x7FFF, scale: 0.01, "V", .voltage)
        fields.code("alarm", try bits.unsigned(16, "alarm"), notAvailable: nil)
        let aux = try bits.unsigned(16, "aux")
        let mode = try bits.unsigned(2, "aux_mode")
        fields.auxMode(mode)
        fields.signed("current", try bits.signed(22, "current"), 0x3FFFFF, scale: 0.001, "A", .sensor("current"))
        return (aux, mode)
    }

    /// Device state, charger error, output voltage (0.01 V) and current (0.1 A), input voltage
    /// and current (the same steps), off reason (32).
    func orionXS(_ bits: inout LSBFirstBitReader, _ fields: inout VictronFields) throws(DecoderError) {
        fields.deviceState(try bits.unsigned(8, "device_state"))
        fields.code("charger_error", try bits.unsigned(8, "charger_error"), notAvailable: 0xFF)
        for side in ["output", "input"] {
            let voltage = "\(side)_voltage"
            let current = "\(side)_current"
            fields.unsigned(voltage, try bits.unsigned(16, voltage), 0xFFFF, scale: 0.01, "V", .voltage)
            fields.unsigned(current, try bits.unsigned(16, current), 0xFFFF, scale: 0.1, "A", .sensor("current"))
        }
        fields.code("off_reason", try bits.unsigned(32, "off_reason"), notAvailable: nil)
    }
}
