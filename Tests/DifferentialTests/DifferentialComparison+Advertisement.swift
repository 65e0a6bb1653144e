import Bluetooth

@testable import Decoders

extension DifferentialComparison {
    /// Families compared field by field through a key map (BLEBridge's field → the reference's
    /// key, as `scripts/differential/corpus_<family>.py` reports it), as MiBeacon is.
    static let keyedFamilies: [String: [String: String]] = [
        "switchbot": [
            "temperature": "temperature", "humidity": "humidity", "battery": "battery",
            "fahrenheit_display": "fahrenheit", "co2": "co2", "tested": "tested", "motion": "motion_detected",
            "opening": "contact_open", "door_left_open": "contact_timeout", "light": "is_light",
            "button_count": "button_count", "switch_mode": "switchMode", "power_on": "isOn", "led": "led",
            "iot": "iot", "sense_distance": "sense_distance", "light_level": "light_intensity",
        ],
        "qingping": [
            "temperature": "temperature", "humidity": "humidity", "battery": "battery", "pressure": "pressure",
            "illuminance": "illuminance", "pm25": "pm25", "pm10": "pm10", "co2": "carbon_dioxide",
            "voc_index": "voc_index", "noise": "sound_pressure", "opening": "binary:door",
            "door_left_open": "binary:door_left_open", "motion": "binary:motion", "light": "binary:light",
        ],
        "sensorpush": ["temperature": "temperature", "humidity": "humidity", "pressure": "pressure"],
        "oralb": [
            "state": "toothbrush_state", "pressure": "pressure", "time": "time", "mode": "mode", "sector": "sector",
            "sector_timer": "sector_timer", "number_of_sectors": "number_of_sectors", "brushing": "binary:brushing",
        ],
        "mopeka": [
            "temperature": "temperature", "battery": "battery", "battery_voltage": "battery_voltage",
            "button_pressed": "binary:button_pressed", "tank_level": "tank_level", "accelerometer_x": "accelerometer_x",
            "accelerometer_y": "accelerometer_y", "reading_quality_raw": "reading_quality_raw",
            "reading_quality": "reading_quality",
        ],
        "victron": victronKeys,
        "miscale": ["weight": "mass_non_stabilized", "impedance": "impedance", "stabilized": "binary:stabilized"],
    ]

    /// Victron Instant Readout (scripts/differential/corpus_victron.py): victron-ble's getters
    /// without `get_`, enumerations as their numbers.
    static let victronKeys: [String: String] = [
        "device_state_code": "device_state", "charger_error": "charger_error", "battery_voltage": "battery_voltage",
        "battery_current": "battery_charging_current", "yield_today": "yield_today", "solar_power": "solar_power",
        "load_current": "external_device_load", "time_remaining": "remaining_mins", "voltage": "voltage",
        "alarm": "alarm", "aux_mode": "aux_mode", "current": "current", "consumed_ah": "consumed_ah",
        "state_of_charge": "soc", "temperature": "temperature", "starter_voltage": "starter_voltage",
        "midpoint_voltage": "midpoint_voltage", "input_voltage": "input_voltage", "output_voltage": "output_voltage",
        "off_reason": "off_reason", "ac_apparent_power": "ac_apparent_power", "ac_voltage": "ac_voltage",
        "ac_current": "ac_current", "bms_flags": "bms_flags", "error_flags": "error_flags",
        "battery_temperature": "battery_temperature", "balancer_status_code": "balancer_status",
        "output_voltage_1": "output_voltage1", "output_voltage_2": "output_voltage2",
        "output_voltage_3": "output_voltage3", "output_current_1": "output_current1",
        "output_current_2": "output_current2", "output_current_3": "output_current3",
        "output_state_code": "output_state", "error_code": "error_code", "warning": "warning",
        "io_status": "io_status", "alarm_flags": "alarm_flags", "meter_type_code": "meter_type",
        "output_current": "output_current", "input_current": "input_current",
    ].merging((1...8).map { ("cell_voltage_\($0)", "cell_voltage_\($0)") }) { first, _ in first }

    /// Absolute tolerances per family, besides the relative 1e-9 every number gets. SensorPush:
    /// sensorpush-ble rounds every reading to 0.01, BLEBridge publishes the HT.w/HTP.xw/TC.x
    /// readings at the sensor's step (0.0025 °C and %, 0.0625 °C), so they differ by at most half
    /// a hundredth (less than one step of the pressure, 1 Pa = 0.01 hPa).
    /// Xiaomi scales: BLEBridge rounds the weight to the gram, xiaomi-ble does not (a weight in
    /// pounds times 0.45359237 has many digits).
    static let absoluteTolerances: [String: Double] = ["sensorpush": 0.005 + 1e-9, "miscale": 0.0005 + 1e-9]

    /// The whole advertisement of a corpus line that carries one (`service_data`,
    /// `manufacturer_data`), decoded through the registry; nil for single-entry lines.
    static func advertisement(_ entry: OracleCase) -> DecodedReading? {
        guard entry.serviceData != nil || entry.manufacturerData != nil || entry.serviceUUIDs != nil else {
            return nil
        }
        var serviceData: [BluetoothUUID: [UInt8]] = [:]
        for (uuid, hex) in entry.serviceData ?? [:] {
            serviceData[BluetoothUUID(UInt16(uuid, radix: 16) ?? 0)] = Hex.bytes(hex) ?? []
        }
        var manufacturerData: [UInt16: [UInt8]] = [:]
        for (company, hex) in entry.manufacturerData ?? [:] {
            manufacturerData[UInt16(company) ?? 0] = Hex.bytes(hex) ?? []
        }
        let context = AdvertisementContext(
            address: BluetoothAddress(entry.address), bindKey: entry.key.flatMap { Hex.bytes($0) },
            serviceUUIDs: (entry.serviceUUIDs ?? []).compactMap { BluetoothUUID($0) })
        return DecoderRegistry.standard.decodeAdvertisement(
            serviceData: serviceData, manufacturerData: manufacturerData, context: context
        ).first ?? DecodedReading(decoder: "none", fields: [], raw: [])
    }
}
