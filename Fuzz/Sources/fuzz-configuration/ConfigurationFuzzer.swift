import Configuration
import Decoders
import Foundation
import FuzzSupport

/// The configuration loader on any bytes, as `blebridge run`, `check-config` and a reload read a
/// file: UTF-8 check, JSON syntax check with positions, strict decoding with key paths, and
/// validation (the decoder names the registry knows).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    let loader = ConfigurationLoader(knownDecoders: DecoderRegistry.standard.knownNames)
    do {
        _ = try loader.decode(Data(input.bytes), file: "fuzz.json")
    } catch {
        _ = error.description
    }
    return 0
}
