import Bluetooth

/// SwitchBot (Wonderlabs) sensors and the Bot, from the layout SwitchBot publishes for its BLE
/// API (service data 0xFD3D; older firmware 0x0D00):
///
/// - byte 0: bits 0–6 the device type (``SwitchBotModel``), bit 7 reserved;
/// - byte 1: the device's status bits (Bot: bit 7 switch mode, bit 6 off in switch mode;
///   Contact and Motion: bit 7 tested, bit 6 motion);
/// - byte 2: bits 0–6 battery %;
/// - then per type: Meter (3 bytes of temperature and humidity), Contact (bytes 3–8: bit 0 light,
///   bits 1–2 door state, …, byte 8 bits 0–3 button count), Motion (bytes 3–5: …, byte 5 bit 5
///   LED, bit 4 IoT, bits 2–3 sense distance, bits 0–1 light level).
///
/// Newer firmware also sends manufacturer data of company 0x0969: the device's address (6),
/// a sequence number (1), a state byte (Contact: bit 7 motion, 6 light, 5 door left open,
/// 4 open; Motion: bit 6 motion, 5 light), and for the meters temperature and humidity at bytes
/// 8–10 (Meter Pro CO2: CO2 in ppm, big-endian, at 13–14). The Outdoor Meter sends its reading
/// only there. When the manufacturer data carries a field, it is the one published (it is
/// the live state); the registry passes it in ``AdvertisementContext/manufacturerData``.
///
/// Temperature and humidity (3 bytes): byte 0 bits 0–3 tenths of a degree; byte 1 bit 7 sign
/// (1 = above zero), bits 0–6 whole degrees °C; byte 2 bit 7 the display shows °F, bits 0–6
/// humidity %. All zero is a meter that has not measured yet: no temperature or humidity.
package struct SwitchBotDecoder: AdvertisementDecoder {
    package let name: String
    package let source: AdvertisementSource

    package static let companyID: UInt16 = 0x0969

    package init() {
        self.init(name: "switchbot", uuid: BluetoothUUID(UInt16(0xFD3D)))
    }

    private init(name: String, uuid: BluetoothUUID) {
        self.name = name
        self.source = .serviceData(uuid)
    }

    /// The same format under the service data UUID 0x0D00 of older firmware.
    package static let legacy = SwitchBotDecoder(name: "switchbot_0d00", uuid: BluetoothUUID(UInt16(0x0D00)))

    package func accepts(_ payload: [UInt8]) -> Bool {
        payload.first.flatMap { SwitchBotModel(code: $0) } != nil
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let code = try reader.uint8("device_type")
        guard let model = SwitchBotModel(code: code) else {
            throw DecoderError(
                .unsupported, field: "device_type", offset: 0,
                message: "SwitchBot device type 0x\(Hex.string([code & 0x7F])) is not decoded")
        }
        let status = try reader.uint8("status")
        let battery = try reader.uint8("battery") & 0x7F
        let manufacturer = try SwitchBotManufacturerData(context.manufacturerData[Self.companyID])
        var fields: [DecodedField] = [
            .string("model", model.name), .int("battery", battery, unit: "%", kind: .battery),
        ]
        switch model.kind {
        case .meter:
            var climate: [UInt8]? = manufacturer?.climate
            // Service data that ends after the battery has no reading (the Outdoor Meter's).
            if climate == nil, !reader.isAtEnd { climate = try reader.bytes(3, "temperature") }
            if let climate { fields += Self.climate(climate) }
            if model.hasCO2, let co2 = manufacturer?.co2, co2 <= 9_999 {
                fields.append(.int("co2", co2, unit: "ppm", kind: .sensor("carbon_dioxide")))
            }
        case .contact:
            fields += try contact(status: status, &reader, manufacturer: manufacturer)
        case .motion:
            fields += try motion(status: status, &reader, manufacturer: manufacturer)
        case .bot:
            let switchMode = status & 0x80 != 0
            fields.append(.bool("switch_mode", switchMode))
            // In press mode the Bot has no on/off state.
            if switchMode { fields.append(.bool("power_on", status & 0x40 == 0, kind: .binary("power"))) }
        }
        if let manufacturer {
            fields.append(.string("mac", manufacturer.mac))
            fields.append(.int("sequence", manufacturer.sequence))
        }
        return fields
    }

    static func climate(_ bytes: [UInt8]) -> [DecodedField] {
        let magnitude = Double(bytes[1] & 0x7F) + Double(bytes[0] & 0x0F) / 10
        let temperature = bytes[1] & 0x80 != 0 ? magnitude : -magnitude
        let humidity = bytes[2] & 0x7F
        guard temperature != 0 || humidity != 0 else { return [] }
        return [
            .double("temperature", temperature, unit: "°C", kind: .temperature),
            .int("humidity", humidity, unit: "%", kind: .humidity),
            .bool("fahrenheit_display", bytes[2] & 0x80 != 0),
        ]
    }

    private func contact(status: UInt8, _ reader: inout ByteReader, manufacturer: SwitchBotManufacturerData?)
        throws(DecoderError) -> [DecodedField]
    {
        let motion: Bool
        let open: Bool
        let leftOpen: Bool
        let light: Bool
        let buttons: UInt8
        if let manufacturer, let count = manufacturer.contactButtons {
            (motion, light) = (manufacturer.state & 0x80 != 0, manufacturer.state & 0x40 != 0)
            (leftOpen, open) = (manufacturer.state & 0x20 != 0, manufacturer.state & 0x10 != 0)
            buttons = count
        } else {
            let door = try reader.uint8("door_state")
            try reader.skip(4, "reserved")
            buttons = try reader.uint8("button_count") & 0x0F
            (motion, light) = (status & 0x40 != 0, door & 0x01 != 0)
            (open, leftOpen) = (door & 0x02 != 0, door & 0x04 != 0)
        }
        return [
            .bool("tested", status & 0x80 != 0),
            .bool("motion", motion, kind: .binary("motion")),
            // Left open (timed out) is still open.
            .bool("opening", open || leftOpen, kind: .binary("opening")),
            .bool("door_left_open", leftOpen, kind: .binary("problem")),
            .bool("light", light, kind: .binary("light")),
            .int("button_count", buttons),
        ]
    }

    private func motion(status: UInt8, _ reader: inout ByteReader, manufacturer: SwitchBotManufacturerData?)
        throws(DecoderError) -> [DecodedField]
    {
        try reader.skip(2, "reserved")
        let settings = try reader.uint8("settings")
        var motion = status & 0x40 != 0
        var light = settings & 0x02 != 0
        if let manufacturer, manufacturer.hasState {
            (motion, light) = (manufacturer.state & 0x40 != 0, manufacturer.state & 0x20 != 0)
        }
        return [
            .bool("tested", status & 0x80 != 0),
            .bool("motion", motion, kind: .binary("motion")),
            .bool("light", light, kind: .binary("light")),
            .bool("led", settings & 0x20 != 0),
            .bool("iot", settings & 0x10 != 0),
            .int("sense_distance", (settings >> 2) & 0x03),
            .int("light_level", settings & 0x03),
        ]
    }
}
