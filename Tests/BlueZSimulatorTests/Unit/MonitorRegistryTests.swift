import Bluetooth
import DBus
import Testing

@testable import BlueZSimulator

/// The simulated AdvertisementMonitorManager1's registry (src/adv_monitor.c 5.66 rules).
@Suite struct MonitorRegistryTests {
    static func properties(
        type: String = "or_patterns", patterns: [(UInt8, UInt8, [UInt8])] = [(0, 0x16, [0xD2, 0xFC])],
        extra: [String: DBusValue] = [:]
    ) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [
            "Type": .variant(.string(type)),
            "Patterns": .variant(
                .array(
                    elementSignature: "(yyay)",
                    patterns.map { .structure([.byte($0.0), .byte($0.1), .bytes($0.2)]) })),
        ]
        properties.merge(extra.mapValues { .variant($0) }) { $1 }
        return properties
    }

    @Test func registrationErrorsAreBluetoothds() throws {
        var registry = MonitorRegistry()
        try registry.register(owner: ":1.5", root: "/app")
        #expect(throws: BlueZError.alreadyExists) { try registry.register(owner: ":1.5", root: "/app") }
        try registry.register(owner: ":1.6", root: "/app")
        #expect(throws: BlueZError.invalidArguments) { try registry.register(owner: ":1.5", root: "app") }
        #expect(throws: BlueZError.doesNotExist) { _ = try registry.unregister(owner: ":1.5", root: "/other") }
        #expect(
            registry.monitorAdded(owner: ":1.5", root: "/app", path: "/app/m0", properties: Self.properties())
                == .activate)
        #expect(try registry.unregister(owner: ":1.5", root: "/app") == [.init(owner: ":1.5", path: "/app/m0")])
        registry.ownerVanished(":1.6")
        #expect(registry.applications.isEmpty)
    }

    @Test func invalidMonitorsAreReleased() {
        var registry = MonitorRegistry()
        try? registry.register(owner: ":1.5", root: "/app")
        func outcome(_ path: String, _ properties: [String: DBusValue]) -> MonitorRegistry.Outcome {
            registry.monitorAdded(owner: ":1.5", root: "/app", path: path, properties: properties)
        }
        #expect(outcome("/elsewhere/m", Self.properties()) == .ignore, "outside the root")
        #expect(outcome("/app/a", Self.properties(type: "and_patterns")) == .release)
        #expect(outcome("/app/b", Self.properties(patterns: [])) == .release)
        #expect(outcome("/app/c", Self.properties(patterns: [(0, 0x16, [])])) == .release, "empty content")
        #expect(outcome("/app/d", Self.properties(patterns: [(30, 0x16, [1, 2])])) == .release, "past 31 bytes")
        #expect(outcome("/app/e", Self.properties(patterns: [(0, 0x00, [1])])) == .release, "AD type 0")
        #expect(outcome("/app/f", Self.properties(extra: ["RSSILowThreshold": .int32(-80)])) == .release, "type")
        #expect(
            outcome(
                "/app/g", Self.properties(extra: ["RSSIHighThreshold": .int16(-90), "RSSILowThreshold": .int16(-80)]))
                == .release, "high below low")
        // 8 patterns: bluetoothd 5.66's kernel command wraps its length and is refused (measured on
        // kernel 6.1 in the VM tier); 7 are taken.
        let eight = (UInt8(0)..<8).map { (UInt8(0), UInt8(0x16), [0x10 + $0, 0xFD]) }
        #expect(outcome("/app/i", Self.properties(patterns: eight)) == .release, "8 patterns")
        #expect(outcome("/app/j", Self.properties(patterns: Array(eight.prefix(7)))) == .activate, "7 patterns")
        #expect(outcome("/app/h", Self.properties(extra: ["RSSIHighThreshold": .int16(-60)])) == .activate)
        #expect(outcome("/app/h", Self.properties()) == .ignore, "known already")
        #expect(registry.isMonitoring)
    }

    @Test func matchingAndControllerTracking() {
        var registry = MonitorRegistry()
        try? registry.register(owner: ":1.5", root: "/app")
        _ = registry.monitorAdded(owner: ":1.5", root: "/app", path: "/app/bthome", properties: Self.properties())
        _ = registry.monitorAdded(
            owner: ":1.5", root: "/app", path: "/app/pvvx",
            properties: Self.properties(patterns: [(0, 0x16, [0x1A, 0x18])]))
        let bthome = ADStructure.structures(
            of: AdvertisementData(serviceData: [BluetoothUUID(UInt16(0xFCD2)): [0x40]]))
        let target = MonitorRegistry.Target(owner: ":1.5", path: "/app/bthome")
        #expect(registry.matching(bthome) == [target])
        #expect(registry.matching(ADStructure.structures(of: AdvertisementData(localName: "x"))).isEmpty)
        let first = registry.startTracking("A", for: target)
        let second = registry.startTracking("A", for: target)
        #expect(first && !second, "DeviceFound once")
        let lost = registry.stopTracking("A")
        let again = registry.stopTracking("A")
        #expect(lost == [target] && again.isEmpty)
    }
}
