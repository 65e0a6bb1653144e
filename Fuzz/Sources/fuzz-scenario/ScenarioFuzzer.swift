import BlueZSimulator
import Foundation
import FuzzSupport

/// The simulator's scenario loader (`blebridge simulate --scenario FILE`) on any bytes: JSON,
/// strict keys, durations, hex, UUIDs, addresses, generators, faults, with error key paths.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScenario(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    do {
        _ = try Scenario.decode(Data(FuzzInput(data, size).bytes), source: "fuzz.json")
    } catch {
        _ = error.description
    }
    return 0
}
