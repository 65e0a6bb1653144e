import Bluetooth
public import Bluetooth

/// Where in an advertisement a format lives.
public enum AdvertisementSource: Sendable, Hashable, CustomStringConvertible {
    /// Service data for this UUID (BlueZ `Device1.ServiceData`).
    case serviceData(BluetoothUUID)
    /// Manufacturer-specific data for this company identifier (BlueZ `Device1.ManufacturerData`;
    /// the payload excludes the two company-id bytes).
    case manufacturerData(UInt16)
    /// Manufacturer-specific data of any company identifier, for formats whose first two bytes
    /// are not a real company id but data (ThermoPro, Inkbird, SensorPush) or that several company
    /// ids carry (Govee). The payload starts with the two company-id bytes as sent on air (little-endian),
    /// then the rest of the entry, so a decoder reads them like any other field.
    case anyManufacturerData

    public var description: String {
        switch self {
        case .serviceData(let uuid): return "service data \(uuid)"
        case .manufacturerData(let company):
            return "manufacturer data 0x\(Hex.string([UInt8(company >> 8), UInt8(company & 0xFF)]))"
        case .anyManufacturerData: return "manufacturer data of any company id, its two bytes first"
        }
    }
}

/// What an advertisement decoder may need besides the payload.
public struct AdvertisementContext: Sendable, Hashable {
    /// The advertiser's address (BTHome encryption nonce).
    public var address: BluetoothAddress?
    /// A 16-byte AES key (BTHome bind key) from the configuration.
    public var bindKey: [UInt8]?
    /// The advertised local name (BlueZ `Device1.Name`): some formats (ThermoPro, Inkbird) are
    /// told apart only by it.
    public var localName: String?
    /// The whole advertisement's manufacturer data, for formats split over service data and
    /// manufacturer data (SwitchBot). ``DecoderRegistry/decodeAdvertisement(serviceData:manufacturerData:context:decoder:)``
    /// fills it in.
    public var manufacturerData: [UInt16: [UInt8]]
    /// The service UUIDs the advertiser lists: some formats of ``AdvertisementSource/anyManufacturerData``
    /// are recognised by them (SensorPush, Mopeka).
    public var serviceUUIDs: [BluetoothUUID]

    public init(
        address: BluetoothAddress? = nil, bindKey: [UInt8]? = nil, localName: String? = nil,
        manufacturerData: [UInt16: [UInt8]] = [:], serviceUUIDs: [BluetoothUUID] = []
    ) {
        self.address = address
        self.bindKey = bindKey
        self.localName = localName
        self.manufacturerData = manufacturerData
        self.serviceUUIDs = serviceUUIDs
    }
}

/// Decodes one advertisement format from raw service data or manufacturer data.
public protocol AdvertisementDecoder: Sendable {
    var name: String { get }
    var source: AdvertisementSource { get }
    /// True when the payload looks like this format (e.g. iBeacon's `02 15` prefix inside Apple's
    /// manufacturer data), so the registry can choose among decoders of one source.
    func accepts(_ payload: [UInt8]) -> Bool
    /// ``accepts(_:)`` with the context (the local name); by default the same as without.
    func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool
    func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField]
    /// Markers of which every payload this decoder reads carries one (BTHome's device information
    /// byte, Eddystone's frame type); empty when the format has no fixed bytes (the default).
    var payloadMarkers: [PayloadMarker] { get }
    /// The markers of the payloads of the device at `address`: the address itself where the
    /// format repeats it (pvvx, ATC), else ``payloadMarkers`` (the default).
    func payloadMarkers(for address: BluetoothAddress) -> [PayloadMarker]
}

extension AdvertisementDecoder {
    public func accepts(_ payload: [UInt8]) -> Bool { true }

    public func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool { accepts(payload) }

    public var payloadMarkers: [PayloadMarker] { [] }

    public func payloadMarkers(for address: BluetoothAddress) -> [PayloadMarker] { payloadMarkers }

    /// Decodes without throwing: on failure the reading carries the error and the raw bytes.
    public func reading(_ payload: [UInt8], context: AdvertisementContext = AdvertisementContext())
        -> DecodedReading
    {
        do {
            return DecodedReading(decoder: name, fields: try decode(payload, context: context), raw: payload)
        } catch {
            return DecodedReading(decoder: name, fields: [], raw: payload, error: error)
        }
    }
}
