import Bluetooth
import Decoders
import FuzzSupport

/// Every built-in advertisement decoder: `decoder-name NUL payload` (or a selector byte and the
/// payload), the payload being the service or manufacturer data. The bind key and address of
/// the tests' BTHome vectors are configured, so the encrypted formats reach decryption (the
/// decrypted objects themselves are `fuzz-encrypted-advertisements`' job). Also the registry's
/// choice among the decoders of one source.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAdvertisements(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    guard let (decoder, payload) = input.choose(among: DecoderRegistry.builtInAdvertisements, name: { $0.name })
    else { return 0 }
    let context = AdvertisementContext(
        address: BluetoothAddress("54:48:E6:8F:80:A5"),
        bindKey: [0x23, 0x1D, 0x39, 0xC1, 0xD7, 0xCC, 0x1A, 0xB1, 0xAE, 0xE2, 0x24, 0xCD, 0x09, 0x6D, 0xB9, 0x32])
    if decoder.accepts(payload) {
        _ = decoder.reading(payload, context: context).jsonString(includeRaw: true)
    }
    let serviceData: [BluetoothUUID: [UInt8]]
    let manufacturerData: [UInt16: [UInt8]]
    switch decoder.source {
    case .serviceData(let uuid): (serviceData, manufacturerData) = ([uuid: payload], [:])
    case .manufacturerData(let company): (serviceData, manufacturerData) = ([:], [company: payload])
    case .anyManufacturerData:
        // The decoder's payload starts with the company-id bytes as sent on air (little-endian).
        let company = payload.count >= 2 ? UInt16(payload[0]) | UInt16(payload[1]) << 8 : 0
        (serviceData, manufacturerData) = ([:], payload.count >= 2 ? [company: Array(payload.dropFirst(2))] : [:])
    }
    for reading in DecoderRegistry.standard.decodeAdvertisement(
        serviceData: serviceData, manufacturerData: manufacturerData, context: context)
    {
        _ = reading.jsonString()
    }
    return 0
}
