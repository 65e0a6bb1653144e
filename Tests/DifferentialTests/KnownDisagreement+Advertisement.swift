@testable import Decoders

extension KnownDisagreement {
    /// The listed disagreements of the families in ``DifferentialComparison/keyedFamilies``.
    static let advertisementFamilies: [KnownDisagreement] = [
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
    ]
}
