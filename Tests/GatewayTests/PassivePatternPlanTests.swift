import Bluetooth
import Configuration
import Decoders
import Foundation
import Testing

@testable import Gateway

/// What `scan.mode` `"passive"` asks bluetoothd to listen for.
@Suite struct PassivePatternPlanTests {
    static func plan(_ json: String) throws -> PassivePatternPlan {
        PassivePatternPlan(
            configuration: try ConfigurationLoader().decode(Data(json.utf8)),
            decoders: DecoderRegistry.builtInAdvertisements)
    }

    static func pattern(_ type: UInt8, _ content: [UInt8], at start: UInt8 = 0) -> AdvertisementPattern {
        AdvertisementPattern(startPosition: start, adType: type, content: content)!
    }

    @Test func devicesAreListenedForByTheDataTheirDecodersRead() throws {
        let plan = try Self.plan(
            #"""
            {"devices": [
              {"id": "one", "match": {"address": "C0:FF:EE:00:00:03"}, "advertisement": {"decoder": "bthome"}},
              {"id": "two", "match": {"address": "C0:FF:EE:00:00:13"}, "advertisement": {"decoder": "bthome"}},
              {"id": "pvvx", "match": {"address": "A4:C1:38:13:00:01"}, "advertisement": {"decoder": "pvvx"}},
              {"id": "ruuvi", "match": {"address": "C0:FF:EE:00:00:21"}, "advertisement": {"decoder": "ruuvi"}},
              {"id": "meter", "match": {"address": "C0:FF:EE:00:00:22"},
               "advertisement": {"layout": {"fields": [{"name": "t", "type": "int16_le"}]}, "manufacturer_id": 1177}}
            ]}
            """#)
        #expect(
            plan.monitorPatterns == [
                [Self.pattern(0x16, [0xD2, 0xFC])], [Self.pattern(0x16, [0x1A, 0x18])],
                [Self.pattern(0xFF, [0x99, 0x04])],
            ], "one monitor per pattern set; two BTHome devices share one, Ruuvi and the layout share 0x0499")
        #expect(plan.sets.map(\.purpose) == ["device one", "device pvvx", "device ruuvi"])
        #expect(plan.uncovered.isEmpty)
    }

    @Test func matchesWithoutAdvertisementDecodingUseServiceOrName() throws {
        let plan = try Self.plan(
            #"""
            {"devices": [
              {"id": "strap", "match": {"service": "180d"}, "subscribe": [{"characteristic": "2a37", "mode": "notify"}]},
              {"id": "lamp", "match": {"name_prefix": "Lamp"}, "subscribe": [{"characteristic": "2a19", "mode": "read", "interval": "10m"}]},
              {"id": "blind", "match": {"address": "C0:FF:EE:00:00:09"}, "subscribe": [{"characteristic": "2a19", "mode": "read", "interval": "10m"}]}
            ]}
            """#)
        #expect(
            plan.monitorPatterns == [
                [
                    Self.pattern(0x16, [0x0D, 0x18]), Self.pattern(0x02, [0x0D, 0x18]),
                    Self.pattern(0x03, [0x0D, 0x18]),
                ],
                [Self.pattern(0x09, Array("Lamp".utf8)), Self.pattern(0x08, Array("Lamp".utf8))],
            ])
        #expect(plan.uncovered.count == 1)
        #expect(plan.uncovered.first?.hasPrefix("device blind") == true, "an address cannot be a pattern")
    }

    @Test func autoDevicesListenForEveryDecoderWithAFixedSource() throws {
        let plan = try Self.plan(#"{"auto_devices": {"enabled": true, "deny": {"decoders": ["ibeacon"]}}}"#)
        let patterns = plan.monitorPatterns.flatMap { $0 }
        #expect(patterns.contains(Self.pattern(0x16, [0xD2, 0xFC])), "BTHome")
        #expect(patterns.contains(Self.pattern(0x16, [0x95, 0xFE])), "MiBeacon")
        #expect(!plan.sets.contains { $0.purpose == "decoder ibeacon" }, "denied")
        #expect(plan.sets.allSatisfy { $0.patterns.count <= PassivePatternPlan.maximumPatternsPerMonitor })
        #expect(plan.uncovered.contains { $0.contains("govee") }, "any company id cannot be a pattern")
    }

    @Test func largeSetsAreSplitForBluetoothds566CommandSize() {
        let patterns = (1...9).map { Self.pattern(0xFF, [UInt8($0), 0x00]) }
        let monitors = PassivePatternPlan.monitors(for: patterns + patterns)
        #expect(monitors.map(\.count) == [7, 2], "repeats dropped, 7 patterns at most per monitor")
        #expect(monitors.flatMap { $0 } == patterns)
    }

    @Test func nothingToListenFor() throws {
        let plan = try Self.plan(
            #"{"devices": [{"id": "blind", "match": {"address": "C0:FF:EE:00:00:09"}, "subscribe": [{"characteristic": "2a19", "mode": "read", "interval": "10m"}]}]}"#
        )
        #expect(plan.sets.isEmpty)
    }
}
