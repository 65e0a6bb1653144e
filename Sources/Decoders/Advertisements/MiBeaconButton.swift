/// Xiaomi MiBeacon's button object 0x1001 (3 bytes): byte 0 the button (a dimmer: what happened;
/// the cube: which way it turned), byte 1 a value (a dimmer's number of presses, seconds held or
/// rotation steps), byte 2 the press type.
///
/// What the press type means depends on the model: most buttons send 0 press, 1 double press, 2
/// long press, but the K9B wall switches swap 1 and 2, and the dimmers use 3 (pressed) and 4
/// (rotated). So the event is named only for the models in ``models`` (by product id; docs/
/// decoders.md has the table). For any other product, and for a code its model does not define,
/// the three bytes are published as they are: `button_index`, `button_value`, `button_press_code`.
enum MiBeaconButton {
    enum Layout: Sendable {
        /// Byte 0 selects the buttons pressed (one field per button; nil: every index is the
        /// device's one button); byte 2 is the press type, looked up in `pressTypes`.
        case buttons([[String]]?, pressTypes: [UInt8: String])
        /// Yeelight's dimmer (YLKG07YL/YLKG08YL): `dimmer` with presses, seconds held or steps.
        case dimmer
        /// The Magic Cube (XMMF01JQD): `cube`, byte 0 says which way it turned.
        case cube
    }

    static let standard: [UInt8: String] = [0: "press", 1: "double_press", 2: "long_press"]
    /// The K9B switches: 1 is a long press and 2 a double press.
    static let k9b: [UInt8: String] = [0: "press", 1: "long_press", 2: "double_press"]

    static func named(_ names: [String]) -> [[String]] { names.map { ["button_" + $0] } }

    /// The models whose button codes are known, by product id.
    static let models: [UInt16: Layout] = [
        0x0A8D: .buttons(nil, pressTypes: standard),  // RTCGQ02LM motion sensor's button
        0x0863: .buttons(nil, pressTypes: standard),  // SJWS01LM flood detector's button
        0x0997: .buttons(nil, pressTypes: standard),  // JTYJGD03MI smoke detector's button
        0x07BF: .buttons(nil, pressTypes: standard),  // YLAI003 wireless switch
        0x1568: .buttons([["button"]], pressTypes: k9b),  // K9B-1BTN
        0x1569: .buttons(
            [["button_left"], ["button_right"], ["button_left", "button_right"]], pressTypes: k9b),  // K9B-2BTN
        0x0DFD: .buttons(
            [
                ["button_left"], ["button_middle"], ["button_right"], ["button_left", "button_middle"],
                ["button_middle", "button_right"], ["button_left", "button_right"],
                ["button_left", "button_middle", "button_right"],
            ], pressTypes: k9b),  // K9B-3BTN
        0x0153: .buttons(named(["on", "off", "brightness", "plus", "m", "min"]), pressTypes: standard),  // YLYK01YL
        0x068E: .buttons(
            named(["fan", "light", "wind_speed", "color_temperature", "wind_mode", "brightness"]),
            pressTypes: standard),  // YLYK01YL-FANCL
        0x04E6: .buttons(
            named([
                "swing", "power", "timer_60_minutes", "increase_wind_speed", "timer_30_minutes",
                "decrease_wind_speed",
            ]), pressTypes: standard),  // YLYK01YL-VENFAN
        0x03BF: .buttons(
            named([
                "stop", "air_exchange", "fan", "increase_speed", "decrease_speed", "dry", "light", "swing", "heat",
            ]), pressTypes: standard),  // YLYB01YL-BHFRC
        0x03B6: .dimmer,  // YLKG07YL/YLKG08YL
        0x04E1: .cube,  // XMMF01JQD
    ]

    static let dimmerEvents = [
        "press", "long_press", "rotate_left", "rotate_right", "rotate_left_pressed", "rotate_right_pressed",
    ]
    static let cubeEvents = ["rotate_right", "rotate_left"]

    static func event(_ name: String, _ type: String, types: [String]) -> DecodedField {
        DecodedField(
            name: name, value: .string(type),
            kind: .event(name == "dimmer" || name == "cube" ? nil : "button", types: types))
    }

    /// The fields of one 0x1001 object of a device with product id `product`.
    static func decode(_ reader: inout ByteReader, product: UInt16, label: String) throws(DecoderError)
        -> [DecodedField]
    {
        let index = try reader.uint8(label + ".button")
        let value = try reader.uint8(label + ".value")
        let press = try reader.uint8(label + ".press_type")
        let raw: [DecodedField] = [
            .int("button_index", index), .int("button_value", value), .int("button_press_code", press),
        ]
        switch models[product] {
        case .buttons(let combinations, let pressTypes)?:
            guard let type = pressTypes[press] else { return raw }
            let types = pressTypes.sorted { $0.key < $1.key }.map(\.value)
            guard let combinations else { return [event("button", type, types: types)] }
            guard Int(index) < combinations.count else { return raw }
            return combinations[Int(index)].map { event($0, type, types: types) }
        case .dimmer?:
            let signedIndex = Int(Int8(bitPattern: index))
            let signedValue = Int(Int8(bitPattern: value))
            switch (press, index) {
            case (3, 0): return [event("dimmer", "press", types: dimmerEvents), .int("dimmer_presses", value)]
            case (3, 1):
                return [
                    event("dimmer", "long_press", types: dimmerEvents),
                    .int("dimmer_duration", value, unit: "s"),
                ]
            case (4, 0):
                return [
                    event("dimmer", signedValue < 0 ? "rotate_left" : "rotate_right", types: dimmerEvents),
                    .int("dimmer_steps", abs(signedValue)),
                ]
            case (4, _):
                return [
                    event(
                        "dimmer", signedIndex < 0 ? "rotate_left_pressed" : "rotate_right_pressed",
                        types: dimmerEvents),
                    .int("dimmer_steps", abs(signedIndex)),
                ]
            default: return raw
            }
        case .cube?:
            guard index < 2 else { return raw }
            return [event("cube", cubeEvents[Int(index)], types: cubeEvents)]
        case nil:
            return raw
        }
    }
}
