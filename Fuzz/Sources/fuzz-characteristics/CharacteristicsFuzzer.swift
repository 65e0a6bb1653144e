import Decoders
import FuzzSupport

/// Every built-in characteristic decoder: `decoder-name NUL value` (or a selector byte and the
/// value), the value as a peripheral sends it. The reading is serialised as the gateway
/// publishes it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCharacteristics(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    guard let (decoder, value) = input.choose(among: DecoderRegistry.builtInCharacteristics, name: { $0.name })
    else { return 0 }
    _ = decoder.reading(value).jsonString(includeRaw: true)
    return 0
}
