import FuzzSupport
import JSON

/// The JSON parser that reads every command payload. A document it accepts must serialise to
/// text that it parses back to the same value (the gateway echoes transactions and values); a
/// whole-number double may come back as an integer (`1.0` is written `1`), nothing else changes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let parser = JSONParser()
    guard let value = try? parser.parse(FuzzInput(data, size).bytes) else { return 0 }
    let text = value.serialized
    let again: JSONValue
    do {
        again = try parser.parse(text)
    } catch {
        fatalError("the serialisation of an accepted document does not parse: \(error): \(text)")
    }
    guard same(again, value) else { fatalError("the serialisation changed the value: \(text)") }
    return 0
}

/// Equal, counting a whole-number double and the integer it is written as the same number.
func same(_ left: JSONValue, _ right: JSONValue) -> Bool {
    switch (left, right) {
    case (.int(let integer), .double(let double)), (.double(let double), .int(let integer)):
        return Double(integer) == double
    case (.array(let lefts), .array(let rights)):
        return lefts.count == rights.count && zip(lefts, rights).allSatisfy { same($0, $1) }
    case (.object(let lefts), .object(let rights)):
        return lefts.count == rights.count
            && zip(lefts, rights).allSatisfy { $0.key == $1.key && same($0.value, $1.value) }
    default:
        return left == right
    }
}
