import Bluetooth
import Decoders
import Testing

/// Golden JSON for every characteristic decoder. Unless a capture is cited, vectors are built
/// field by field from the characteristic's definition in the Bluetooth SIG service
/// specification named in the decoder's documentation (flags, order, units, resolution).
@Suite struct CharacteristicVectorTests {
    static let vectors: [Vector] = [
        // Heart Rate Measurement (HRS 1.0 §3.1)
        Vector("heart_rate_measurement", "00 48", #"{"heart_rate":72}"#, source: "HRS: uint8, no contact support"),
        Vector(
            "heart_rate_measurement", "06 48", #"{"heart_rate":72,"sensor_contact":true}"#,
            source: "HRS: contact detected"),
        Vector(
            "heart_rate_measurement", "04 48", #"{"heart_rate":72,"sensor_contact":false}"#,
            source: "HRS: contact supported, lost"),
        Vector("heart_rate_measurement", "01 48 01", #"{"heart_rate":328}"#, source: "HRS: uint16 value"),
        Vector(
            "heart_rate_measurement", "08 48 10 00", #"{"heart_rate":72,"energy_expended":16}"#, source: "HRS: energy"),
        Vector(
            "heart_rate_measurement", "16 48 40 03 50 03",
            #"{"heart_rate":72,"sensor_contact":true,"rr_intervals":[0.8125,0.828125]}"#,
            source: "HRS: Polar-style notification, contact detected, two RR intervals"),
        Vector(
            "heart_rate_measurement", "1F 48 00 0A 00 00 04",
            #"{"heart_rate":72,"sensor_contact":true,"energy_expended":10,"rr_intervals":[1]}"#,
            source: "HRS: every flag"),
        Vector(
            "heart_rate_measurement", "10 48", #"{"heart_rate":72,"rr_intervals":[]}"#, source: "HRS: RR flag, none yet"
        ),
        // Body Sensor Location (HRS 1.0 §3.2)
        Vector("body_sensor_location", "01", #"{"body_sensor_location":"chest"}"#, source: "HRS: chest"),
        Vector("body_sensor_location", "06", #"{"body_sensor_location":"foot"}"#, source: "HRS: foot"),
        // Battery Level (BAS 1.0)
        Vector("battery_level", "58", #"{"battery":88}"#, source: "BAS"),
        Vector("battery_level", "00", #"{"battery":0}"#, source: "BAS: empty"),
        // Device Information strings (DIS 1.1)
        Vector(
            "manufacturer_name_string", "506f6c617220456c656374726f204f79",
            #"{"manufacturer_name":"Polar Electro Oy"}"#, source: "DIS"),
        Vector("model_number_string", "48313000", #"{"model_number":"H10"}"#, source: "DIS: NUL padding dropped"),
        Vector("serial_number_string", "3132333435", #"{"serial_number":"12345"}"#, source: "DIS"),
        Vector("firmware_revision_string", "332e302e3335", #"{"firmware_revision":"3.0.35"}"#, source: "DIS"),
        Vector("hardware_revision_string", "", #"{"hardware_revision":""}"#, source: "DIS: empty string"),
        Vector("software_revision_string", "312e30", #"{"software_revision":"1.0"}"#, source: "DIS"),
        Vector(
            "pnp_id", "01 6B00 0102 1000",
            #"{"vendor_id_source":"bluetooth_sig","vendor_id":107,"product_id":513,"product_version":16}"#,
            source: "DIS: vendor 0x006B (Polar) from the SIG company list"),
        Vector(
            "pnp_id", "02 AC05 5002 0001",
            #"{"vendor_id_source":"usb_implementers_forum","vendor_id":1452,"product_id":592,"product_version":256}"#,
            source: "DIS: USB vendor id"),
        Vector(
            "system_id", "01 02 03 04 05 06 07 08",
            #"{"manufacturer_identifier":21542142465,"organizationally_unique_identifier":"08:07:06"}"#,
            source: "DIS: 40-bit id then OUI, little-endian"),
        // Temperature Measurement / Intermediate Temperature (HTS 1.0)
        Vector("temperature_measurement", "00 420E00FE", #"{"temperature":36.5}"#, source: "HTS: °C, FLOAT 3650e-2"),
        Vector(
            "temperature_measurement", "07 DA0300FF EA070B1E010203 03",
            #"{"temperature":98.6,"timestamp":"2026-11-30T01:02:03","temperature_type":"ear"}"#,
            source: "HTS: °F, time stamp, type"),
        Vector("temperature_measurement", "00 FFFF7F00", #"{"temperature":null}"#, source: "HTS: NaN"),
        Vector(
            "temperature_measurement", "04 6E0100FF 02", #"{"temperature":36.6,"temperature_type":"body"}"#,
            source: "HTS"),
        Vector(
            "intermediate_temperature", "02 6D0100FF 00000000000000",
            #"{"temperature":36.5,"timestamp":null}"#, source: "HTS: unknown date"),
        // Blood Pressure Measurement (BLS 1.0)
        Vector(
            "blood_pressure_measurement", "00 7800 5000 5D00",
            #"{"systolic":120,"diastolic":80,"mean_arterial_pressure":93}"#, source: "BLS: mmHg"),
        Vector(
            "blood_pressure_measurement", "1F A0F0 6BF0 7AF0 EA070B1E010203 4800 01 2D00",
            #"{"systolic":16,"diastolic":10.7,"mean_arterial_pressure":12.2,"timestamp":"2026-11-30T01:02:03","pulse_rate":72,"user_id":1,"body_movement_detected":true,"cuff_too_loose":false,"irregular_pulse":true,"pulse_rate_range":"above_upper_limit","improper_measurement_position":true}"#,
            source: "BLS: kPa and every optional field"),
        Vector(
            "blood_pressure_measurement", "08 7800 5000 FF07 FF",
            #"{"systolic":120,"diastolic":80,"mean_arterial_pressure":null,"user_id":null}"#,
            source: "BLS: MAP NaN, unknown user"),
        // Environmental Sensing (ESS 1.0)
        Vector("temperature", "2C09", #"{"temperature":23.48}"#, source: "ESS"),
        Vector("temperature", "ECFF", #"{"temperature":-0.2}"#, source: "ESS: negative"),
        Vector("temperature", "0080", #"{"temperature":null}"#, source: "ESS: value not known"),
        Vector("humidity", "E81A", #"{"humidity":68.88}"#, source: "ESS"),
        Vector("humidity", "FFFF", #"{"humidity":null}"#, source: "ESS: value not known"),
        Vector("pressure", "F2750F00", #"{"pressure":1013.234}"#, source: "ESS: 0.1 Pa → hPa"),
        // Weight Measurement (WSS 1.0)
        Vector("weight_measurement", "00 B036", #"{"weight":70}"#, source: "WSS: SI, 0.005 kg"),
        Vector(
            "weight_measurement", "0F 483C EA070B1E010203 02 E100 BC02",
            #"{"weight":154.32,"timestamp":"2026-11-30T01:02:03","user_id":2,"bmi":22.5,"height":70}"#,
            source: "WSS: imperial with every optional field"),
        Vector(
            "weight_measurement", "08 B036 E100 E606", #"{"weight":70,"bmi":22.5,"height":1.766}"#,
            source: "WSS: SI height in 0.001 m"),
        Vector("weight_measurement", "00 FFFF", #"{"weight":null}"#, source: "WSS: measurement unsuccessful"),
        Vector(
            "weight_measurement", "02 c800 0000 00 00 081822", #"{"weight":1,"timestamp":null}"#,
            source: "Date Time with year, month and day not known (0): null, not 0000-00-00"),
        Vector(
            "weight_measurement", "02 c800 e907 00 1e 081822", #"{"weight":1,"timestamp":null}"#,
            source: "Date Time with only the month not known: null"),
        Vector(
            "weight_measurement", "02 c800 e807 02 1d 081822", #"{"weight":1,"timestamp":"2024-02-29T08:24:34"}"#,
            source: "Date Time: 29 February of a leap year"),
        Vector(
            "weight_measurement", "02 c800 d007 02 1d 000000", #"{"weight":1,"timestamp":"2000-02-29T00:00:00"}"#,
            source: "Date Time: 2000 is a leap year (divisible by 400)"),
        // CSC Measurement (CSCS 1.0)
        Vector(
            "csc_measurement", "03 00010000 0004 1000 0002",
            #"{"cumulative_wheel_revolutions":256,"last_wheel_event_time":1,"cumulative_crank_revolutions":16,"last_crank_event_time":0.5}"#,
            source: "CSCS: wheel and crank"),
        Vector("csc_measurement", "00", #"{}"#, source: "CSCS: no data"),
        // RSC Measurement (RSCS 1.0)
        Vector(
            "rsc_measurement", "07 8003 B4 6400 10270000",
            #"{"speed":3.5,"cadence":180,"stride_length":1,"total_distance":1000,"running":true}"#,
            source: "RSCS: every field"),
        Vector(
            "rsc_measurement", "00 4001 5A", #"{"speed":1.25,"cadence":90,"running":false}"#, source: "RSCS: walking"),
        // Cycling Power Measurement (CPS 1.1)
        Vector("cycling_power_measurement", "0000 FA00", #"{"instantaneous_power":250}"#, source: "CPS: power only"),
        Vector(
            "cycling_power_measurement",
            "FF1F 0601 64 4000 10000000 0008 0500 0004 E803 1800 4000 E0FF 5A0014 0A00 B400 0C00",
            #"{"instantaneous_power":262,"pedal_power_balance":50,"pedal_power_balance_reference":"left","accumulated_torque":2,"accumulated_torque_source":"crank","cumulative_wheel_revolutions":16,"last_wheel_event_time":1,"cumulative_crank_revolutions":5,"last_crank_event_time":1,"maximum_force":1000,"minimum_force":24,"maximum_torque":2,"minimum_torque":-1,"maximum_angle":90,"minimum_angle":320,"top_dead_spot_angle":10,"bottom_dead_spot_angle":180,"accumulated_energy":12,"offset_compensation":true}"#,
            source: "CPS: every flag"),
        // GAP
        Vector(
            "appearance", "C103",
            #"{"appearance":961,"category":15,"category_name":"human_interface_device","subcategory":1}"#,
            source: "Assigned Numbers: keyboard"),
        Vector(
            "appearance", "4003",
            #"{"appearance":832,"category":13,"category_name":"heart_rate_sensor","subcategory":0}"#,
            source: "Assigned Numbers: generic heart rate sensor (0x0340)"),
        Vector("device_name", "506f6c6172204831302053494d", #"{"device_name":"Polar H10 SIM"}"#, source: "GAP"),
        Vector("alert_level", "02", #"{"alert_level":"high"}"#, source: "IAS"),
        Vector("alert_level", "00", #"{"alert_level":"none"}"#, source: "IAS"),
    ]

    @Test(arguments: vectors)
    func decodesToGoldenJSON(_ vector: Vector) throws {
        let decoder = try #require(DecoderRegistry.standard.decoder(named: vector.decoder))
        expectGolden(decoder.reading(bytes(vector.hex)), vector)
    }

    @Test func everyBuiltInDecoderHasAVector() {
        let covered = Set(Self.vectors.map(\.decoder))
        for decoder in DecoderRegistry.builtInCharacteristics {
            #expect(covered.contains(decoder.name), "no golden vector for \(decoder.name)")
        }
    }

    @Test func theRegistryFindsEachDecoderByItsUUID() {
        for decoder in DecoderRegistry.builtInCharacteristics {
            #expect(DecoderRegistry.standard.decoder(for: decoder.uuid)?.name == decoder.name)
        }
        #expect(DecoderRegistry.standard.decoder(for: BluetoothUUID("2a37")!)?.name == "heart_rate_measurement")
    }

    static let badValues: [(String, String, DecoderError.Code, String)] = [
        ("heart_rate_measurement", "", .truncated, "flags"),
        ("heart_rate_measurement", "01 48", .truncated, "heart_rate"),
        ("heart_rate_measurement", "08 48 10", .truncated, "energy_expended"),
        ("heart_rate_measurement", "10 48 40 03 50", .truncated, "rr_intervals[1]"),
        ("heart_rate_measurement", "00 48 00", .trailingBytes, "heart_rate_measurement"),
        ("body_sensor_location", "07", .invalidValue, "body_sensor_location"),
        ("battery_level", "65", .invalidValue, "battery"),
        ("battery_level", "58 00", .trailingBytes, "battery_level"),
        ("pnp_id", "03 6B00 0102 1000", .invalidValue, "vendor_id_source"),
        ("pnp_id", "01 6B00 0102", .truncated, "product_version"),
        ("system_id", "01 02 03 04 05 06 07", .truncated, "organizationally_unique_identifier"),
        ("manufacturer_name_string", "ff", .invalidValue, "manufacturer_name"),
        ("temperature_measurement", "02 420E00FE EA07", .truncated, "timestamp.month"),
        ("temperature_measurement", "02 420E00FE EA070D1E010203", .invalidValue, "timestamp.month"),
        ("temperature_measurement", "04 420E00FE 0A", .invalidValue, "temperature_type"),
        ("weight_measurement", "02 c800 e907021e0a0b0c", .invalidValue, "timestamp.day"),
        ("weight_measurement", "02 c800 6c07021d0a0b0c", .invalidValue, "timestamp.day"),
        ("weight_measurement", "02 c800 e907021d0a0b0c", .invalidValue, "timestamp.day"),
        ("weight_measurement", "02 c800 0000021e0a0b0c", .invalidValue, "timestamp.day"),
        ("weight_measurement", "02 c800 e907041f0a0b0c", .invalidValue, "timestamp.day"),
        ("weight_measurement", "02 c800 e90700200a0b0c", .invalidValue, "timestamp.day"),
        ("weight_measurement", "02 c800 0500010100000000", .invalidValue, "timestamp.year"),
        ("weight_measurement", "02 c800 e90701011800 00", .invalidValue, "timestamp.hours"),
        ("weight_measurement", "02 c800 e90701010a3c00", .invalidValue, "timestamp.minutes"),
        ("weight_measurement", "02 c800 e90701010a0b3c", .invalidValue, "timestamp.seconds"),
        ("blood_pressure_measurement", "10 7800 5000 5D00 01", .truncated, "measurement_status"),
        ("humidity", "1127", .invalidValue, "humidity"),
        ("pressure", "F2750F", .truncated, "pressure"),
        ("weight_measurement", "08 B036 E100", .truncated, "height"),
        ("csc_measurement", "02 1000", .truncated, "last_crank_event_time"),
        ("rsc_measurement", "02 8003 B4 1027", .truncated, "total_distance"),
        ("cycling_power_measurement", "0001 FA00 5A00", .truncated, "extreme_angles"),
        ("appearance", "C1", .truncated, "appearance"),
        ("alert_level", "03", .invalidValue, "alert_level"),
    ]

    @Test(arguments: badValues)
    func badValuesGiveATypedErrorNamingTheField(
        decoder name: String, hex: String, code: DecoderError.Code, field: String
    ) throws {
        let decoder = try #require(DecoderRegistry.standard.decoder(named: name))
        let reading = decoder.reading(bytes(hex))
        #expect(reading.error?.code == code)
        #expect(reading.error?.field == field)
        #expect(reading.raw == bytes(hex), "the raw bytes stay available")
        #expect(reading.jsonString().contains("\"raw_hex\":\"\(Hex.string(bytes(hex)))\""))
    }
}
