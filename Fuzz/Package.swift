// swift-tools-version:5.4
// libFuzzer harnesses for every parser of outside input (issue 19). Built only by `make fuzz`
// (scripts/fuzz.sh) with `-sanitize=fuzzer,address` into .build/fuzz; the main package's build
// and `swift test` never see it. One executable per target; each defines
// `LLVMFuzzerTestOneInput` and gets libFuzzer's `main`.
// Tools version 5.4 on purpose: from 5.5 on, SwiftPM renames an executable's entry point to
// `<module>_main` and links with `--defsym main=<module>_main`, which a harness compiled with
// -parse-as-library (no Swift `main`; libFuzzer provides it) cannot satisfy. The harnesses are
// still compiled in Swift 6 language mode (`-swift-version 6` from scripts/fuzz.sh).
import PackageDescription

/// One harness: an executable target on the named products of the main package.
func harness(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name, dependencies: ["FuzzSupport"] + products.map { .product(name: $0, package: "BLEBridge") })
}

let package = Package(
    name: "BLEBridgeFuzz",
    dependencies: [.package(name: "BLEBridge", path: "..")],
    targets: [
        .target(name: "FuzzSupport"),
        harness("fuzz-characteristics", ["Decoders"]),
        harness("fuzz-advertisements", ["Decoders", "Bluetooth"]),
        harness("fuzz-encrypted-advertisements", ["Decoders", "Bluetooth"]),
        harness("fuzz-commands", ["Gateway", "Configuration", "Decoders"]),
        harness("fuzz-configuration", ["Configuration", "Decoders"]),
        harness("fuzz-byte-layouts", ["ByteLayouts", "Decoders", "JSON"]),
        harness("fuzz-json", ["JSON"]),
        harness("fuzz-dbus-message", ["DBus"]),
        harness("fuzz-scenario", ["BlueZSimulator"]),
    ]
)
