import ByteLayouts
import Decoders
import Foundation
import FuzzSupport
import JSON

/// User byte layouts: the input is a layout as JSON (as in the configuration's `layouts`), a NUL,
/// and a value. A layout that decodes and validates decodes the value; the decoded fields are
/// encoded back through the same layout, as a `set` command with that layout would.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzByteLayouts(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (layoutBytes, value) = FuzzInput(data, size).splitAtNUL
    guard let layout = try? JSONDecoder().decode(ByteLayout.self, from: Data(layoutBytes)) else { return 0 }
    do {
        try layout.validate()
    } catch {
        return 0
    }
    let reading = layout.reading(value)
    _ = reading.jsonString(includeRaw: true)
    if reading.isSuccess {
        _ = try? layout.encode(json: JSONValue(reading.jsonValue()))
    }
    return 0
}
