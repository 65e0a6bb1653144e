/// The SwitchBot device types the ``SwitchBotDecoder`` decodes, by the type code in bits 0–6 of
/// the first service-data byte (an ASCII letter for most devices).
struct SwitchBotModel: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case meter, contact, motion, bot
    }

    var name: String
    var kind: Kind
    var hasCO2 = false

    /// Type codes and models. Upper- and lower-case letters are the same device in two firmware
    /// generations.
    static let byCode: [UInt8: SwitchBotModel] = {
        var table: [UInt8: SwitchBotModel] = [:]
        let letters: [(String, SwitchBotModel)] = [
            ("Tt", SwitchBotModel(name: "Meter", kind: .meter)),
            ("iI", SwitchBotModel(name: "Meter Plus", kind: .meter)),
            ("wW", SwitchBotModel(name: "Outdoor Meter", kind: .meter)),
            ("dD", SwitchBotModel(name: "Contact Sensor", kind: .contact)),
            ("sS", SwitchBotModel(name: "Motion Sensor", kind: .motion)),
            ("H", SwitchBotModel(name: "Bot", kind: .bot)),
            ("5", SwitchBotModel(name: "Meter Pro CO2", kind: .meter, hasCO2: true)),
        ]
        for (codes, model) in letters {
            for code in codes.utf8 { table[code] = model }
        }
        table[0x14] = SwitchBotModel(name: "Meter Pro", kind: .meter)
        table[0x15] = SwitchBotModel(name: "Meter Pro CO2", kind: .meter, hasCO2: true)
        return table
    }()

    init(name: String, kind: Kind, hasCO2: Bool = false) {
        self.name = name
        self.kind = kind
        self.hasCO2 = hasCO2
    }

    /// The model for a first service-data byte (bit 7 ignored), nil for other device types.
    init?(code: UInt8) {
        guard let model = Self.byCode[code & 0x7F] else { return nil }
        self = model
    }
}
