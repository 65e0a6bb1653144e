import Bluetooth
import Decoders
import FuzzSupport

/// The decryption paths past the MIC check: the input is a plaintext (after a selector byte) that
/// the harness encrypts as a BTHome v2, BTHome v1 or MiBeacon v4/v5 sensor would, with a known
/// key, address and counter. The decoder must authenticate it (a `decryption_failed` answer to a
/// correctly sealed payload is a bug, so the harness traps) and then parse the objects.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEncryptedAdvertisements(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let (selector, plaintext) = FuzzInput(data, size).selectorAndRest else { return 0 }
    let key: [UInt8] = [
        0x23, 0x1D, 0x39, 0xC1, 0xD7, 0xCC, 0x1A, 0xB1, 0xAE, 0xE2, 0x24, 0xCD, 0x09, 0x6D, 0xB9, 0x32,
    ]
    let address = BluetoothAddress("54:48:E6:8F:80:A5")!
    let counter: [UInt8] = [0x00, 0x11, 0x22, 0x33]
    let reading: DecodedReading
    do {
        if selector & 0x01 == 0 {
            // BTHome v2: device information (encrypted, version 2; trigger and address flags from
            // the selector), the address when flagged, ciphertext, counter, MIC.
            let info = 0x41 | (selector & 0x06)
            let withAddress = info & 0x02 != 0
            let sealed = try AESCCM.seal(
                plaintext: plaintext, key: key, nonce: address.bytes + [0xD2, 0xFC, info] + counter)
            let payload =
                [info] + (withAddress ? Array(address.bytes.reversed()) : []) + sealed.ciphertext + counter
                + sealed.tag
            let context = AdvertisementContext(address: withAddress ? nil : address, bindKey: key)
            reading = BTHomeDecoder().reading(payload, context: context)
        } else if selector & 0x02 != 0 {
            reading = try mibeacon(plaintext, selector: selector, key: key, address: address)
        } else {
            // BTHome v1 (service data 0x181E): ciphertext, counter, MIC; associated data 0x11.
            let sealed = try AESCCM.seal(
                plaintext: plaintext, key: key, nonce: address.bytes + [0x1E, 0x18] + counter,
                associatedData: [0x11])
            reading = BTHomeV1Decoder.encrypted.reading(
                sealed.ciphertext + counter + sealed.tag, context: AdvertisementContext(address: address, bindKey: key))
        }
    } catch {
        fatalError("sealing failed: \(error)")
    }
    if let error = reading.error, error.code == .decryptionFailed {
        fatalError("a correctly sealed payload was refused: \(error)")
    }
    _ = reading.jsonString(includeRaw: true)
    return 0
}

/// A MiBeacon v4 or v5 frame (service data 0xFE95) sealed as the sensor seals it: frame control
/// (encrypted, objects, the address when the selector says so), product id, frame counter, the
/// address reversed when included, then ciphertext, extended counter (3) and MIC (4), under the
/// nonce `address reversed · product id · frame counter · extended counter`, associated data 0x11.
func mibeacon(_ plaintext: [UInt8], selector: UInt8, key: [UInt8], address: BluetoothAddress) throws -> DecodedReading {
    let withAddress = selector & 0x04 != 0
    let version: UInt16 = selector & 0x08 != 0 ? 5 : 4
    let control: UInt16 = version << 12 | 0x0048 | (withAddress ? 0x0010 : 0)
    let products: [UInt16] = [0x055B, 0x0098, 0x0347, 0x03BC, 0x0A83]
    let product = products[Int(selector >> 4) % products.count]
    let header: [UInt8] = [UInt8(product & 0xFF), UInt8(product >> 8), selector]
    let extended: [UInt8] = [0x01, 0x02, 0x03]
    let sealed = try AESCCM.seal(
        plaintext: plaintext, key: key, nonce: Array(address.bytes.reversed()) + header + extended,
        associatedData: [0x11])
    let payload =
        [UInt8(control & 0xFF), UInt8(control >> 8)] + header + (withAddress ? Array(address.bytes.reversed()) : [])
        + sealed.ciphertext + extended + sealed.tag
    return MiBeaconDecoder().reading(
        payload, context: AdvertisementContext(address: withAddress ? nil : address, bindKey: key))
}
