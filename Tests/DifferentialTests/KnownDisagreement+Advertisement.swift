@testable import Decoders

extension KnownDisagreement {
    /// The listed disagreements of the families in ``DifferentialComparison/keyedFamilies``.
    static let advertisementFamilies: [KnownDisagreement] =
        [
            KnownDisagreement(
                name: "meter_without_reading", family: "switchbot", caseMarker: "_no_reading",
                justification:
                    "a SwitchBot meter whose reading is all zero (not measured yet) or absent: pyswitchbot drops the whole advertisement, battery included; BLEBridge publishes the model and battery and leaves temperature and humidity out",
                applies: { ours, oracle, differing in
                    differing == ["rejection"] && oracle == nil && ours.isSuccess && ours["temperature"] == nil
                        && ours["battery"] != nil
                }),
            KnownDisagreement(
                name: "bot_press_mode_state", family: "switchbot", caseMarker: "_press_mode",
                justification:
                    "a Bot in press mode has no on/off state (SwitchBot's layout: the state bit means something only in switch mode); pyswitchbot reports isOn false, BLEBridge leaves power_on out",
                applies: { ours, oracle, differing in
                    differing == ["power_on"] && ours["power_on"] == nil && oracle?["isOn"] == .bool(false)
                }),
            KnownDisagreement(
                name: "qingping_bad_object_length", family: "qingping", caseMarker: "_bad_object_length",
                justification:
                    "an object whose length does not fit its id (a 3-byte temperature/humidity): qingping-ble skips it and publishes the others; BLEBridge rejects the frame with invalid_value naming the object, as for MiBeacon",
                applies: { ours, _, differing in differing == ["rejection"] && ours.error?.code == .invalidValue }),
            KnownDisagreement(
                name: "qingping_truncated_frame", family: "qingping", caseMarker: "_truncated",
                justification:
                    "a frame cut inside an object: qingping-ble publishes the objects before the cut; BLEBridge rejects the frame with truncated naming the object",
                applies: { ours, _, differing in differing == ["rejection"] && ours.error?.code == .truncated }),
            KnownDisagreement(
                name: "oralb_unknown_code", family: "oralb", caseMarker: "unknown_",
                justification:
                    "a state or mode byte missing from the tables: oralb-ble publishes the text 'unknown state N' / 'unknown mode N' as the value; BLEBridge leaves state or mode out and publishes the byte as state_code / mode_code",
                applies: { ours, oracle, differing in
                    guard differing.count == 1, let name = differing.first, ["state", "mode"].contains(name),
                        ours[name] == nil, ours["\(name)_code"] != nil
                    else { return false }
                    let key = name == "state" ? "toothbrush_state" : "mode"
                    if case .string(let text)? = oracle?[key] { return text.hasPrefix("unknown \(name) ") }
                    return false
                }),
        ] + victron + govee

    /// Govee's meat thermometers (govee-ble).
    static let govee: [KnownDisagreement] = [
        KnownDisagreement(
            name: "govee_negative_probe", family: "govee", caseMarker: "_negative_probe",
            justification:
                "a negative probe or alarm value (no probe plugged in, no alarm set): govee-ble reports 0.0 °C, a temperature nobody measured; BLEBridge publishes null",
            applies: { ours, oracle, differing in
                !differing.isEmpty
                    && differing.allSatisfy { ours[$0] == .null && oracle?[$0] == .number(0) }
            })
    ]

    /// Victron Instant Readout (victron-ble).
    static let victron: [KnownDisagreement] = [
        KnownDisagreement(
            name: "victron_unlisted_code", family: "victron", caseMarker: "_unlisted_code",
            justification:
                "a device state, charger error, alarm or off-reason code missing from victron-ble's enumerations (an alarm bitmask with two bits set, a newer error code): victron-ble raises and reports nothing; BLEBridge publishes the number (device_state_code, charger_error, alarm, off_reason)",
            applies: { ours, oracle, differing in differing == ["rejection"] && oracle == nil && ours.isSuccess }),
        KnownDisagreement(
            name: "victron_current_not_available", family: "victron", caseMarker: "_current_not_available",
            justification:
                "the battery monitor's 22-bit current with all bits set, Victron's \"not available\" pattern: victron-ble compares the signed value with 0x3FFFFF, which it can never equal, and reports -0.001 A; BLEBridge leaves current out",
            applies: { ours, oracle, differing in
                differing == ["current"] && ours["current"] == nil && oracle?["current"] == .number(-0.001)
            }),
        KnownDisagreement(
            name: "victron_soc_not_available", family: "victron", caseMarker: "_soc_not_available",
            justification:
                "the Lynx Smart BMS's 10-bit state of charge with all bits set, Victron's \"not available\" pattern: victron-ble compares it with 0x3FFF, which 10 bits never hold, and reports 102.3 %; BLEBridge leaves state_of_charge out",
            applies: { ours, oracle, differing in
                differing == ["state_of_charge"] && ours["state_of_charge"] == nil && oracle?["soc"] == .number(102.3)
            }),
        KnownDisagreement(
            name: "victron_cell_out_of_range", family: "victron", caseMarker: "_cell_out_of_range",
            justification:
                "a Smart Lithium cell voltage below or above the 7-bit range (0x00, 0x7E): victron-ble reports -inf / +inf, which JSON cannot carry; BLEBridge publishes the cell's voltage as null",
            applies: { ours, oracle, differing in
                !differing.isEmpty
                    && differing.allSatisfy {
                        $0.hasPrefix("cell_voltage_") && ours[$0] == .null
                            && [OracleValue.string("inf"), .string("-inf")].contains(oracle?[$0])
                    }
            }),
        KnownDisagreement(
            name: "victron_short_record", family: "victron", caseMarker: "_short_record",
            justification:
                "a record shorter than its type's fields: victron-ble pads it to 16 bytes before decrypting and reads the padding's keystream as values; BLEBridge refuses the frame with truncated naming the first field that is cut",
            applies: { ours, _, differing in differing == ["rejection"] && ours.error?.code == .truncated }),
    ]
}
