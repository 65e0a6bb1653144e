import Decoders
import Testing

/// Characteristic vectors taken from outside this project: captures of real devices published in
/// issues and Q&A threads, and the unit tests of independent open-source implementations (Nordic's
/// nRF Toolbox profile parsers, movisens SmartGattLib, pycycling, OpenTracks, Stanford Spezi,
/// im97mori's BLE utilities). Each `source` names the repository and file (or the page) the bytes
/// and the expected values come from; the golden JSON restates those expected values in this
/// module's units (seconds for 1/1024 s ticks, metres for 1/100 m, and so on). Where a source
/// asserts something this module reports differently, the difference is named in the comment.
@Suite struct PublishedVectorTests {
    static let vectors: [Vector] = heartRate + otherHealth + fitness + deviceInformation + environment

    // MARK: Heart Rate Measurement 0x2A37

    static let heartRate: [Vector] = [
        // Real devices.
        Vector(
            "heart_rate_measurement", "10 4E D202 C802", #"{"heart_rate":78,"rr_intervals":[0.705078125,0.6953125]}"#,
            source:
                "Polar H7 capture, github.com/FleXoft/Polar-H7-HRM/issues/1 ([16, 78, 210, 2, 200, 2]: 78 bpm, RR 705.078125 ms and 695.3125 ms)"
        ),
        Vector(
            "heart_rate_measurement", "10 51 0003 1203", #"{"heart_rate":81,"rr_intervals":[0.75,0.767578125]}"#,
            source:
                "Polar H7 capture, github.com/FleXoft/Polar-H7-HRM/issues/1 ([16, 81, 0, 3, 18, 3]: 81 bpm, RR 750.0 ms and 767.578125 ms)"
        ),
        Vector(
            "heart_rate_measurement", "10 48 2C03", #"{"heart_rate":72,"rr_intervals":[0.79296875]}"#,
            source:
                "Polar H10 gatttool capture, devhide.com/reading-heart-rate-measurement-x2a37-values-50477232 (Stack Overflow question 50477232; \"10 48 2c 03\": flags 0x10, 72 bpm, RR 0x032c)"
        ),
        Vector(
            "heart_rate_measurement", "10 49 5E03 9603", #"{"heart_rate":73,"rr_intervals":[0.841796875,0.896484375]}"#,
            source:
                "Polar H10 gatttool capture, devhide.com/reading-heart-rate-measurement-x2a37-values-50477232 (Stack Overflow question 50477232; \"10 49 5e 03 96 03\": two RR intervals)"
        ),
        Vector(
            "heart_rate_measurement", "10 3B 5304", #"{"heart_rate":59,"rr_intervals":[1.0810546875]}"#,
            source:
                "Polar H10 capture, stackoverflow.com/questions/67024800 (kiwix.lema.org mirror; [16, 59, 83, 4]: 59 bpm)"
        ),
        Vector(
            "heart_rate_measurement", "16 4D 1603",
            #"{"heart_rate":77,"sensor_contact":true,"rr_intervals":[0.771484375]}"#,
            source:
                "Polar H7 capture, e-learn.cn/qa/answer/1013198/2064110.html ([22, 77, 22, 3]: flags 0x16, 77 bpm, RR 790/1024 = 0.77 s)"
        ),
        // Independent implementations' unit tests.
        Vector(
            "heart_rate_measurement", "16 48 5401 EC02",
            #"{"heart_rate":72,"sensor_contact":true,"rr_intervals":[0.33203125,0.73046875]}"#,
            source:
                "movisens/SmartGattLib src/test/java/HeartRateMeasurementTest.java (HR 72, worn, RR 0.33203125 and 0.73046875 s)"
        ),
        Vector(
            "heart_rate_measurement", "00 64", #"{"heart_rate":100}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox profile-parsers/src/test/java/no/nordicsemi/android/toolbox/profile/parser/hrs/HRSDataParserTest.kt (UINT8 100; Nordic reports contact false, here contact is not supported so it is omitted)"
        ),
        Vector(
            "heart_rate_measurement", "07 6400", #"{"heart_rate":100,"sensor_contact":true}"#,
            source: "NordicSemiconductor/Android-nRF-Toolbox .../hrs/HRSDataParserTest.kt (UINT16 100, contact)"),
        Vector(
            "heart_rate_measurement", "19 4B00 3804 0404 3804",
            #"{"heart_rate":75,"energy_expended":1080,"rr_intervals":[1.00390625,1.0546875]}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox .../hrs/HRSDataParserTest.kt (75 bpm, energy 1080 kJ, RR 1028 and 1080 /1024 s)"
        ),
        Vector(
            "heart_rate_measurement", "02 3C", #"{"heart_rate":60}"#,
            source:
                "OpenTracksApp/OpenTracks src/androidTest/java/de/dennisguse/opentracks/sensors/BluetoothConnectionManagerHeartRateTest.java (uint8: 60)"
        ),
        Vector(
            "heart_rate_measurement", "01 0101", #"{"heart_rate":257}"#,
            source: "OpenTracksApp/OpenTracks .../BluetoothConnectionManagerHeartRateTest.java (uint16: 257)"),
        Vector(
            "heart_rate_measurement", "00 2A", #"{"heart_rate":42}"#,
            source: "zacharyedwardbull/pycycling test/test_heart_rate_service.py (42 bpm, no RR, no energy)"),
    ]

    // MARK: Health Thermometer, Blood Pressure, Weight Scale, Battery

    static let otherHealth: [Vector] = [
        Vector(
            "temperature_measurement", "06 710E00FE E407 05 15 0A 1E 2D 01",
            #"{"temperature":36.97,"timestamp":"2020-05-21T10:30:45","temperature_type":"armpit"}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox profile-parsers/src/test/java/no/nordicsemi/android/toolbox/profile/parser/hts/HTSDataParserTest.kt (36.97 °C, 2020-05-21 10:30:45, armpit)"
        ),
        Vector(
            "temperature_measurement", "00 C409 00FE", #"{"temperature":25}"#,
            source: "NordicSemiconductor/Android-nRF-Toolbox .../hts/HTSDataParserTest.kt (25.0 °C, no optional fields)"
        ),
        Vector(
            "temperature_measurement", "00 FFFF7F00", #"{"temperature":null}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox .../hts/HTSDataParserTest.kt (FLOAT NaN; JSON has no NaN, so null)"
        ),
        Vector(
            "intermediate_temperature", "00 01020304", #"{"temperature":1971210000}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a1e/src/test/java/org/im97mori/ble/characteristic/u2a1e/IntermediateTemperatureTest.java (0x030201 × 10^4 °C; synthetic bytes)"
        ),
        Vector(
            "intermediate_temperature", "01 01020304", #"{"temperature":1971210000}"#,
            source: "im97mori-github/JavaBLEUtil .../u2a1e/IntermediateTemperatureTest.java (same value in °F)"),
        Vector(
            "blood_pressure_measurement", "1F 7900 5100 6A00 E407 05 15 0A 1E 2D 4800 01 0600",
            #"{"systolic":121,"diastolic":81,"mean_arterial_pressure":106,"timestamp":"2020-05-21T10:30:45","pulse_rate":72,"user_id":1,"body_movement_detected":false,"cuff_too_loose":true,"irregular_pulse":true,"pulse_rate_range":"within_range","improper_measurement_position":false}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox profile-parsers/src/test/java/no/nordicsemi/android/toolbox/profile/parser/bps/BloodPressureMeasurementParserTest.kt (121/81/106 kPa, 2020-05, pulse 72, user 1, irregular pulse)"
        ),
        Vector(
            "blood_pressure_measurement", "00 4800 5100 4000",
            #"{"systolic":72,"diastolic":81,"mean_arterial_pressure":64}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox .../bps/BloodPressureMeasurementParserTest.kt (mmHg, no optional fields)"
        ),
        Vector(
            "blood_pressure_measurement", "08 4800 5100 4000 01",
            #"{"systolic":72,"diastolic":81,"mean_arterial_pressure":64,"user_id":1}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox .../bps/BloodPressureMeasurementParserTest.kt (user id only)"),
        Vector(
            "weight_measurement", "06 2012 00000000000000 01",
            #"{"weight":23.2,"timestamp":null,"user_id":1}"#,
            source:
                "StanfordSpezi/SpeziKt core/bluetooth/src/test/java/edu/stanford/spezikt/core/bluetooth/WeightDataConverterTest.kt (23.2 kg, user 1)"
        ),
        Vector(
            "weight_measurement", "06 100E 00000000000000 01",
            #"{"weight":18,"timestamp":null,"user_id":1}"#,
            source: "StanfordSpezi/SpeziKt .../WeightDataConverterTest.kt (18.0 kg)"),
        Vector(
            "battery_level", "2C", #"{"battery":44}"#,
            source: "movisens/SmartGattLib src/test/java/BatteryLevelTest.java (44 %)"),
        Vector(
            "battery_level", "4B", #"{"battery":75}"#,
            source: "NordicSemiconductor/Android-nRF-Toolbox .../battery/BatteryLevelParserTest.kt (75 %)"),
        Vector(
            "battery_level", "64", #"{"battery":100}"#,
            source: "zacharyedwardbull/pycycling test/test_battery_service.py (100 %)"),
    ]

    // MARK: Cycling and running

    static let fitness: [Vector] = [
        Vector(
            "csc_measurement", "03 2D060000 A3A9 900A 289F",
            #"{"cumulative_wheel_revolutions":1581,"last_wheel_event_time":42.4091796875,"cumulative_crank_revolutions":2704,"last_crank_event_time":39.7890625}"#,
            source:
                "movisens/SmartGattLib src/test/java/CyclingSpeedCadenceMeasurementTest.java (wheel 1581 @ 43427/1024 s, crank 2704 @ 40744/1024 s)"
        ),
        Vector(
            "csc_measurement", "03 FFFFFFFF 033F FF07 E70F",
            #"{"cumulative_wheel_revolutions":4294967295,"last_wheel_event_time":15.7529296875,"cumulative_crank_revolutions":2047,"last_crank_event_time":3.9755859375}"#,
            source:
                "zacharyedwardbull/pycycling test/test_cycling_speed_cadence_service.py (wheel 4294967295 @ 16131, crank 2047 @ 4071 ticks of 1/1024 s)"
        ),
        Vector(
            "csc_measurement", "01 0A000000 A000",
            #"{"cumulative_wheel_revolutions":10,"last_wheel_event_time":0.15625}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox .../csc/CSCDataParserTest.kt (wheel data only; Nordic asserts only derived values, the raw fields here follow CSCS)"
        ),
        Vector(
            "rsc_measurement", "07 8002 50 2003 00100000",
            #"{"speed":2.5,"cadence":80,"stride_length":8,"total_distance":409.6,"running":true}"#,
            source:
                "NordicSemiconductor/Android-nRF-Toolbox profile-parsers/src/test/java/no/nordicsemi/android/toolbox/profile/parser/rscs/RSCSDataParserTest.kt (2.5 m/s, 80/min, stride 800 cm, distance 4096 dm, running)"
        ),
        Vector(
            "rsc_measurement", "00 8002 50", #"{"speed":2.5,"cadence":80,"running":false}"#,
            source: "NordicSemiconductor/Android-nRF-Toolbox .../rscs/RSCSDataParserTest.kt (mandatory fields, walking)"
        ),
        // A real 4iiii crank power meter (btsnoop log in github.com/OpenTracksApp/OpenTracks/issues/1352:
        // "Crank revolutions: 12, Crank event time: 17125" and 43 / 63033); torque follows CPS (1/32 Nm).
        Vector(
            "cycling_power_measurement", "2C00 0000 9F00 0C00 E542",
            #"{"instantaneous_power":0,"accumulated_torque":4.96875,"accumulated_torque_source":"crank","cumulative_crank_revolutions":12,"last_crank_event_time":16.7236328125}"#,
            source: "4iiii power meter capture, OpenTracks issue 1352 (crank 12 @ 17125/1024 s)"),
        Vector(
            "cycling_power_measurement", "2C00 0000 DF00 2B00 39F6",
            #"{"instantaneous_power":0,"accumulated_torque":6.96875,"accumulated_torque_source":"crank","cumulative_crank_revolutions":43,"last_crank_event_time":61.5556640625}"#,
            source: "4iiii power meter capture, OpenTracks issue 1352 (crank 43 @ 63033/1024 s)"),
        Vector(
            "cycling_power_measurement", "0000 D204", #"{"instantaneous_power":1234}"#,
            source: "zacharyedwardbull/pycycling test/test_cycling_power_service.py (1234 W)"),
        Vector(
            "cycling_power_measurement", "3000 D204 FFFFFFFF 033F FF07 E70F",
            #"{"instantaneous_power":1234,"cumulative_wheel_revolutions":4294967295,"last_wheel_event_time":7.87646484375,"cumulative_crank_revolutions":2047,"last_crank_event_time":3.9755859375}"#,
            source:
                "zacharyedwardbull/pycycling test/test_cycling_power_service.py (wheel 4294967295 @ 16131 ticks of 1/2048 s, crank 2047 @ 4071 ticks of 1/1024 s)"
        ),
    ]

    // MARK: Device Information, GAP, Immediate Alert

    static let deviceInformation: [Vector] = [
        Vector(
            "hardware_revision_string", "3230323430393038", #"{"hardware_revision":"20240908"}"#,
            source:
                "BadgeMagic LED badge, github.com/fossasia/badgemagic-firmware/issues/166 (2A27 reports \"20240908\"; bytes are its UTF-8)"
        ),
        Vector(
            "software_revision_string", "30303030303030303030303030313034",
            #"{"software_revision":"0000000000000104"}"#,
            source:
                "Omron HEM-6232T read, github.com/userx14/omblepy/issues/58 (2a28 hex=3030…3034 ascii=\"0000000000000104\")"
        ),
        Vector(
            "manufacturer_name_string", "4F4D524F4E4845414C544843415245", #"{"manufacturer_name":"OMRONHEALTHCARE"}"#,
            source: "Omron HEM-6232T read, github.com/userx14/omblepy/issues/58 (2a29 ascii=\"OMRONHEALTHCARE\")"),
        Vector(
            "pnp_id", "01 0203 0405 0607",
            #"{"vendor_id_source":"bluetooth_sig","vendor_id":770,"product_id":1284,"product_version":1798}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a50/src/test/java/org/im97mori/ble/characteristic/u2a50/PnpIdTest.java (synthetic bytes)"
        ),
        Vector(
            "pnp_id", "02 02FF 04FF 06FF",
            #"{"vendor_id_source":"usb_implementers_forum","vendor_id":65282,"product_id":65284,"product_version":65286}"#,
            source: "im97mori-github/JavaBLEUtil .../u2a50/PnpIdTest.java (USB source)"),
        Vector(
            "system_id", "01 02 03 04 05 06 07 08",
            #"{"manufacturer_identifier":21542142465,"organizationally_unique_identifier":"08:07:06"}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a23/src/test/java/org/im97mori/ble/characteristic/u2a23/SystemIdTest.java (0x0504030201, OUI 0x080706)"
        ),
        Vector(
            "system_id", "01 02 03 04 FF 06 07 FF",
            #"{"manufacturer_identifier":1095283966465,"organizationally_unique_identifier":"FF:07:06"}"#,
            source: "im97mori-github/JavaBLEUtil .../u2a23/SystemIdTest.java (0xFF04030201, OUI 0xFF0706)"),
        Vector(
            "model_number_string", "324a4349452d42553031", #"{"model_number":"2JCIE-BU01"}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a24/src/test/java/org/im97mori/ble/characteristic/u2a24/ModelNumberStringTest.java (Omron 2JCIE-BU01)"
        ),
        Vector(
            "manufacturer_name_string", "5472616e7374656b", #"{"manufacturer_name":"Transtek"}"#,
            source:
                "Medisana BS444 scale, openScale wiki, bcdiaconu/openscale_wiki Medisana-BS444.md: manufacturer name string \"Transtek\""
        ),
        Vector(
            "firmware_revision_string", "422e38", #"{"firmware_revision":"B.8"}"#,
            source: "Medisana BS444 scale, openScale wiki: firmware revision string \"B.8\""),
        Vector(
            "software_revision_string", "424c455f4246", #"{"software_revision":"BLE_BF"}"#,
            source: "Medisana BS444 scale, openScale wiki: software revision string \"BLE_BF\""),
        Vector(
            "device_name", "5262742d53656e736f72", #"{"device_name":"Rbt-Sensor"}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a00/src/test/java/org/im97mori/ble/characteristic/u2a00/DeviceNameTest.java (Omron sensor name)"
        ),
        Vector(
            "appearance", "4414",
            #"{"appearance":5188,"category":81,"category_name":"outdoor_sports_activity","subcategory":4}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a01/src/test/java/org/im97mori/ble/characteristic/u2a01/AppearanceTest.java (0x1444 location and navigation pod: category 0x1440 >> 6, subcategory 4)"
        ),
        Vector(
            "body_sensor_location", "00", #"{"body_sensor_location":"other"}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a38/src/test/java/org/im97mori/ble/characteristic/u2a38/BodySensorLocationTest.java"
        ),
        Vector(
            "body_sensor_location", "02", #"{"body_sensor_location":"wrist"}"#,
            source: "im97mori-github/JavaBLEUtil .../u2a38/BodySensorLocationTest.java"),
        Vector(
            "alert_level", "01", #"{"alert_level":"mild"}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a06/src/test/java/org/im97mori/ble/characteristic/u2a06/AlertLevelTest.java"
        ),
    ]

    // MARK: Environmental Sensing

    static let environment: [Vector] = [
        Vector(
            "temperature", "0102", #"{"temperature":5.13}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a6e/src/test/java/org/im97mori/ble/characteristic/u2a6e/TemperatureTest.java (0x0201 × 0.01 °C; synthetic bytes)"
        ),
        Vector(
            "humidity", "0102", #"{"humidity":5.13}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a6f/src/test/java/org/im97mori/ble/characteristic/u2a6f/HumidityTest.java (0x0201 × 0.01 %)"
        ),
        Vector(
            "pressure", "01020304", #"{"pressure":67305.985}"#,
            source:
                "im97mori-github/JavaBLEUtil characteristic/u2a6d/src/test/java/org/im97mori/ble/characteristic/u2a6d/PressureTest.java (0x04030201 × 0.1 Pa, here in hPa)"
        ),
    ]

    @Test(arguments: vectors)
    func decodesThePublishedValues(_ vector: Vector) throws {
        let decoder = try #require(DecoderRegistry.standard.decoder(named: vector.decoder))
        expectGolden(decoder.reading(bytes(vector.hex)), vector)
    }

    /// nRF Toolbox's CSC parser test derives cadence and speed from two measurements:
    /// crank 5 → 6 revolutions while the event time goes 150 → 200 (1/1024 s) is 1228.8 rpm;
    /// wheel 1000 → 1100 revolutions over 200 → 1000 with a 2,340 mm wheel is 299.52 m/s.
    /// (NordicSemiconductor/Android-nRF-Toolbox .../csc/CSCDataParserTest.kt.)
    @Test func derivesNordicsCadenceAndSpeed() throws {
        var calculator = CyclingRateCalculator(wheelCircumference: 2.34)
        let first = try CSCMeasurement(bytes: bytes("03 E8030000 C800 0500 9600"))
        let second = try CSCMeasurement(bytes: bytes("03 4C040000 E803 0600 C800"))
        _ = calculator.update(first)
        let rates = calculator.update(second)
        #expect(abs((rates.cadence ?? 0) - 1228.8) < 1e-9)
        #expect(abs((rates.speed ?? 0) - 299.52) < 1e-9)
    }
}
