import BlueZ
import Bluetooth
import Foundation
import Logging

// ble-conformance: the central library's conformance scenario, and the peripheral that serves
// it on real BlueZ (VM tier). See docs/testing.md.
//
//   ble-conformance central [--adapter hci0] [--strap NAME] [--lamp NAME] [--thermometer NAME]
//   ble-conformance peripheral [--adapter hci1] [--name NAME] [--refresh-advertising-ms N]
//                              [--manufacturer-data CCCC:HEX] [--service-data UUID:HEX]
//
// The central prints one JSON line per step and exits 1 when any step failed.
let usage = """
    usage: ble-conformance central [--adapter hci0] [--strap NAME] [--lamp NAME] [--thermometer NAME]
           ble-conformance peripheral [--adapter hci1] [--name NAME] [--refresh-advertising-ms N]
                                      [--manufacturer-data CCCC:HEX] [--service-data UUID:HEX]
    """
var arguments = Array(CommandLine.arguments.dropFirst())
guard let role = arguments.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}
arguments.removeFirst()
var options: [String: String] = [:]
while let flag = arguments.first, flag.hasPrefix("--"), arguments.count >= 2 {
    options[String(flag.dropFirst(2))] = arguments[1]
    arguments.removeFirst(2)
}
guard arguments.isEmpty else {
    FileHandle.standardError.write(Data("ble-conformance: unexpected \(arguments)\n\(usage)\n".utf8))
    exit(64)
}
// Quiet by default; BLEBRIDGE_LOG=debug logs every connection lifecycle step (the VM tier sets it).
if getenv("BLEBRIDGE_LOG") == nil { LogConfiguration.shared.threshold = .warning }

switch role {
case "central":
    let strap = options["strap"] ?? "Polar H10 SIM"
    let scenario = ConformanceCentral(
        adapter: options["adapter"] ?? "hci0", strapName: strap, lampName: options["lamp"] ?? "Lamp SIM",
        thermometerName: options["thermometer"] ?? "Thermo SIM")
    let transcript = Transcript()
    do {
        try await scenario.run(transcript)
    } catch {
        transcript.fail("set-up", error)
    }
    exit(transcript.failureCount == 0 ? 0 : 1)
case "peripheral":
    var advertisement = LocalAdvertisement(localName: options["name"] ?? "BLEBridge Conformance")
    if let text = options["manufacturer-data"] {
        guard let (company, bytes) = keyAndBytes(text), let id = UInt16(company, radix: 16) else {
            FileHandle.standardError.write(Data("ble-conformance: --manufacturer-data wants CCCC:HEX\n".utf8))
            exit(64)
        }
        advertisement.manufacturerData[id] = bytes
    }
    if let text = options["service-data"] {
        guard let (key, bytes) = keyAndBytes(text), let uuid = BluetoothUUID(key) else {
            FileHandle.standardError.write(Data("ble-conformance: --service-data wants UUID:HEX\n".utf8))
            exit(64)
        }
        advertisement.serviceData[uuid] = bytes
    }
    let peripheral = ConformancePeripheral(
        adapter: options["adapter"] ?? "hci1", advertisement: advertisement,
        refreshAdvertising: options["refresh-advertising-ms"].flatMap(Int.init).map { .milliseconds($0) })
    do {
        try await peripheral.run()
    } catch {
        FileHandle.standardError.write(Data("ble-conformance peripheral: \(error)\n".utf8))
        exit(1)
    }
default:
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}

/// Splits `KEY:HEX` into the key and the bytes.
func keyAndBytes(_ text: String) -> (String, [UInt8])? {
    let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
    guard parts.count == 2, let bytes = Hex.bytes(parts[1]) else { return nil }
    return (parts[0], bytes)
}
