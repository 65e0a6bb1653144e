public import Bluetooth
import ByteLayouts

/// Chooses the decoder for a characteristic UUID or an advertisement, by default or by name.
///
/// `DecoderRegistry.standard` knows every built-in decoder; add user layouts with
/// ``register(_:)-(ValueDecoder)``. Decoding through the registry never throws: failures come
/// back as a ``DecodedReading`` with `error` set and the raw bytes kept.
public struct DecoderRegistry: Sendable {
    private var byUUID: [BluetoothUUID: any CharacteristicDecoder] = [:]
    private var byName: [String: any ValueDecoder] = [:]
    private var advertisementByName: [String: any AdvertisementDecoder] = [:]
    private var advertisementOrder: [any AdvertisementDecoder] = []

    /// Every built-in characteristic decoder, in documentation order.
    public static let builtInCharacteristics: [any CharacteristicDecoder] =
        [
            HeartRateMeasurement(), BodySensorLocation(), BatteryLevel(),
        ] + UTF8StringCharacteristic.deviceInformation
        + [
            PnPID(), SystemID(), TemperatureMeasurement(), IntermediateTemperature(), BloodPressureMeasurement(),
            EnvironmentalTemperature(), EnvironmentalHumidity(), EnvironmentalPressure(), WeightMeasurement(),
            CSCMeasurementCharacteristic(), RSCMeasurement(), CyclingPowerMeasurement(), Appearance(),
            UTF8StringCharacteristic.deviceName, AlertLevelCharacteristic(),
        ]

    /// Every built-in advertisement decoder, in the order they are tried for a shared source.
    /// ThermoPro, INKBIRD and SensorPush first: they read manufacturer data of any company id, but
    /// only from a device with their name (ThermoPro, INKBIRD) or listing their service UUID
    /// (SensorPush), and their company-id bytes are readings that may equal Apple's or Ruuvi's id.
    /// Mopeka is gated by its service UUID too; Govee, which recognises its formats by their bytes
    /// alone, comes last.
    public static let builtInAdvertisements: [any AdvertisementDecoder] = [
        ThermoProDecoder(), InkbirdDecoder(), SensorPushDecoder(), SensorPushHT1Decoder(),
        BTHomeDecoder(), BTHomeV1Decoder(), BTHomeV1Decoder.encrypted, IBeaconDecoder(), EddystoneDecoder(),
        RuuviTagDecoder(),
        MiBeaconDecoder(), MiScaleDecoder(), MiScaleDecoder.bodyComposition,
        PVVXThermometerDecoder(),
        ATCThermometerDecoder(),
        SwitchBotDecoder(), SwitchBotDecoder.legacy, QingpingDecoder(), OralBDecoder(), MopekaDecoder(),
        VictronDecoder(),
        GoveeDecoder(),
    ]

    /// The registry with every built-in decoder and the `raw` fallback.
    public static let standard = DecoderRegistry(
        characteristics: builtInCharacteristics, advertisements: builtInAdvertisements)

    public init(characteristics: [any CharacteristicDecoder] = [], advertisements: [any AdvertisementDecoder] = []) {
        register(RawDecoder())
        for decoder in characteristics { register(decoder) }
        for decoder in advertisements { register(decoder) }
    }

    /// Registers a characteristic decoder under its UUID (replacing the previous one) and name.
    public mutating func register(_ decoder: any CharacteristicDecoder) {
        byUUID[decoder.uuid] = decoder
        byName[decoder.name] = decoder
    }

    /// Registers a decoder by name only (user layouts: `{"decoder": "my_layout"}` in the config).
    public mutating func register(_ decoder: any ValueDecoder) {
        byName[decoder.name] = decoder
    }

    public mutating func register(_ decoder: any AdvertisementDecoder) {
        advertisementOrder.removeAll { $0.name == decoder.name }
        advertisementOrder.append(decoder)
        advertisementByName[decoder.name] = decoder
    }

    /// The standard decoder for a characteristic UUID.
    public func decoder(for uuid: BluetoothUUID) -> (any CharacteristicDecoder)? {
        byUUID[uuid]
    }

    /// A value decoder (built-in characteristic, layout or `raw`) by name.
    public func decoder(named name: String) -> (any ValueDecoder)? {
        byName[name]
    }

    public func advertisementDecoder(named name: String) -> (any AdvertisementDecoder)? {
        advertisementByName[name]
    }

    /// Names of all value decoders, sorted.
    public var valueDecoderNames: [String] { byName.keys.sorted() }

    /// Names of all advertisement decoders, in trial order.
    public var advertisementDecoderNames: [String] { advertisementOrder.map(\.name) }

    /// Every name a configuration may use as `decoder` (value and advertisement decoders), for
    /// the configuration loader's `knownDecoders` check.
    public var knownNames: Set<String> { Set(byName.keys).union(advertisementByName.keys) }

    /// Decodes a characteristic value with the named decoder when given, else the UUID's standard
    /// decoder, else `raw`. An unknown name yields a reading with an `unknown_decoder` error.
    public func decode(_ bytes: [UInt8], uuid: BluetoothUUID?, decoder name: String? = nil) -> DecodedReading {
        if let name {
            guard let decoder = byName[name] else {
                return DecodedReading(
                    decoder: name, fields: [], raw: bytes,
                    error: DecoderError(.unknownDecoder, field: "decoder", message: "no decoder named '\(name)'"))
            }
            return decoder.reading(bytes)
        }
        if let uuid, let decoder = byUUID[uuid] { return decoder.reading(bytes) }
        return RawDecoder().reading(bytes)
    }

    /// Decodes whatever the advertisement carries in known formats: one reading per service-data
    /// or manufacturer-data entry that a decoder accepts (sorted by UUID, then company id). With
    /// `decoder`, only that format is tried, on every entry of its source.
    public func decodeAdvertisement(
        serviceData: [BluetoothUUID: [UInt8]], manufacturerData: [UInt16: [UInt8]],
        context: AdvertisementContext = AdvertisementContext(), decoder name: String? = nil
    ) -> [DecodedReading] {
        var context = context
        context.manufacturerData = manufacturerData
        var entries: [(AdvertisementSource, [UInt8])] = serviceData.keys.sorted().map {
            (.serviceData($0), serviceData[$0]!)
        }
        entries += manufacturerData.keys.sorted().map { (.manufacturerData($0), manufacturerData[$0]!) }
        if let name {
            guard let decoder = advertisementByName[name] else {
                let raw = entries.first?.1 ?? []
                return [
                    DecodedReading(
                        decoder: name, fields: [], raw: raw,
                        error: DecoderError(
                            .unknownDecoder, field: "decoder", message: "no advertisement decoder named '\(name)'"))
                ]
            }
            return entries.compactMap { source, payload in
                Self.payload(payload, from: source, for: decoder.source).map { decoder.reading($0, context: context) }
            }
        }
        var readings: [DecodedReading] = []
        for (source, payload) in entries {
            for decoder in advertisementOrder {
                guard let input = Self.payload(payload, from: source, for: decoder.source),
                    decoder.accepts(input, context: context)
                else { continue }
                readings.append(decoder.reading(input, context: context))
                break
            }
        }
        return readings
    }

    /// What a decoder of `wanted` gets from an entry of `source`: the entry itself when the sources
    /// are equal; for ``AdvertisementSource/anyManufacturerData`` the company-id bytes as sent on
    /// air (little-endian) followed by the entry; nil when the decoder does not read that entry.
    public static func payload(_ payload: [UInt8], from source: AdvertisementSource, for wanted: AdvertisementSource)
        -> [UInt8]?
    {
        if source == wanted { return payload }
        guard wanted == .anyManufacturerData, case .manufacturerData(let company) = source else { return nil }
        return [UInt8(company & 0xFF), UInt8(company >> 8)] + payload
    }
}
