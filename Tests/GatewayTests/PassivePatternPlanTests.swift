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

    /// BTHome's device information bytes after the UUID (bluetoothd 5.71 and later).
    static let bthomeMarkers = (UInt8(0x40)...0x47).map { pattern(0x16, [$0]) }

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
        let patterns =
            [Self.pattern(0x16, [0xD2, 0xFC])] + Self.bthomeMarkers
            + [Self.pattern(0x16, [0x1A, 0x18]), Self.pattern(0x16, [0x01, 0x00, 0x13, 0x38, 0xC1, 0xA4])]
            + [Self.pattern(0xFF, [0x99, 0x04])]
        #expect(
            plan.monitorPatterns == [Array(patterns[0..<7]), Array(patterns[7...])],
            "each pattern once (two BTHome devices, Ruuvi and the layout of 0x0499 share theirs), 7 to a monitor")
        #expect(plan.sets.map(\.purpose) == ["device one", "device one, device pvvx, device ruuvi"])
        #expect(plan.uncovered.isEmpty && plan.notSeenSince571.isEmpty)
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
                    Self.pattern(0x03, [0x0D, 0x18]), Self.pattern(0x09, Array("Lamp".utf8)),
                    Self.pattern(0x08, Array("Lamp".utf8)),
                ]
            ])
        #expect(plan.uncovered.count == 1)
        #expect(plan.uncovered.first?.hasPrefix("device blind") == true, "an address cannot be a pattern")
        #expect(
            plan.notSeenSince571.map { $0.prefix(5) } == ["devic", "devic"]
                && plan.notSeenSince571[0].hasPrefix("device strap")
                && plan.notSeenSince571[1].hasPrefix("device lamp"),
            "5.71 compares name and UUID-list patterns with nothing: \(plan.notSeenSince571)")
    }

    @Test func autoDevicesListenForEveryDecoderWithAFixedSource() throws {
        let plan = try Self.plan(#"{"auto_devices": {"enabled": true, "deny": {"decoders": ["ibeacon"]}}}"#)
        let patterns = plan.monitorPatterns.flatMap { $0 }
        #expect(patterns.contains(Self.pattern(0x16, [0xD2, 0xFC])), "BTHome")
        #expect(Self.bthomeMarkers.allSatisfy(patterns.contains), "BTHome after the UUID")
        #expect(patterns.contains(Self.pattern(0x16, [0x38, 0xC1, 0xA4], at: 3)), "pvvx: A4:C1:38 reversed")
        #expect(patterns.contains(Self.pattern(0x16, [0xA4, 0xC1, 0x38])), "ATC: A4:C1:38")
        #expect(patterns.contains(Self.pattern(0x16, [0x95, 0xFE])), "MiBeacon")
        #expect(!plan.sets.contains { $0.purpose.contains("decoder ibeacon") }, "denied")
        #expect(!patterns.contains(Self.pattern(0xFF, [0x4C, 0x00])), "denied")
        #expect(plan.sets.allSatisfy { $0.patterns.count <= PassivePatternPlan.maximumPatternsPerMonitor })
        #expect(plan.sets.count <= 8, "well within the kernel's 32 monitors: \(plan.sets.count)")
        #expect(plan.uncovered.contains { $0.contains("govee") }, "any company id cannot be a pattern")
        #expect(plan.notSeenSince571.contains { $0.contains("decoder mibeacon") }, "no fixed bytes after the UUID")
        #expect(!plan.notSeenSince571.contains { $0.contains("decoder bthome (") })
    }

    /// Whichever way bluetoothd reads a service-data pattern (5.66 or a controller from the UUID,
    /// 5.71 and later from the byte after it), the plan's patterns catch the formats with markers.
    @Test(arguments: AdvertisementPattern.Matching.allCases)
    func servicedataFormatsAreCaughtUnderBothReadings(_ matching: AdvertisementPattern.Matching) throws {
        let configured = try Self.plan(
            #"""
            {"devices": [
              {"id": "pvvx", "match": {"address": "C0:FF:EE:13:00:01"}, "advertisement": {"decoder": "pvvx"}},
              {"id": "atc", "match": {"address": "C0:FF:EE:13:00:02"}, "advertisement": {"decoder": "atc1441"}},
              {"id": "qingping", "match": {"address": "58:2D:34:00:00:03"}, "advertisement": {"decoder": "qingping"}},
              {"id": "mi", "match": {"address": "A4:C1:38:00:00:04"}, "advertisement": {"decoder": "mibeacon"}}
            ]}
            """#
        ).monitorPatterns.flatMap { $0 }
        let auto = try Self.plan(#"{"auto_devices": {"enabled": true}}"#).monitorPatterns.flatMap { $0 }
        func caught(_ patterns: [AdvertisementPattern], _ uuid: UInt16, _ payload: String) -> Bool {
            let data = AdvertisementData(serviceData: [BluetoothUUID(uuid): Hex.bytes(payload)!])
            return AdvertisementPattern.anyMatches(patterns, ADStructure.structures(of: data), matching)
        }
        for info in ["40", "41", "44", "45", "42"] {
            #expect(caught(auto, 0xFCD2, info + "02ca09"), "BTHome \(info)")
        }
        #expect(caught(auto, 0xFEAA, "10002d"), "Eddystone URL")
        #expect(caught(auto, 0x181A, "01001338c1a434088813b80b5a000f"), "pvvx A4:C1:38:13:00:01")
        #expect(caught(auto, 0x181A, "a4c138130002ffd2385d0b8b1d"), "ATC A4:C1:38:13:00:02")
        #expect(caught(configured, 0x181A, "010013eeffc034088813b80b5a000f"), "pvvx by its address")
        #expect(caught(configured, 0x181A, "c0ffee130002ffd2385d0b8b1d"), "ATC by its address")
        #expect(caught(configured, 0xFDCD, "0801030000342d580104d2003802"), "Qingping by its address")
        #expect(caught(configured, 0xFE95, "5858b0050104000038c1a40d1004d2003802"), "MiBeacon with its address")
        if matching == .afterServiceUUID {
            #expect(!caught(configured, 0x181A, "020013deadbe34088813b80b5a000f"), "another pvvx is not asked for")
        }
    }

    @Test func patternsArePackedSevenToAMonitor() throws {
        let devices = (1...9).map {
            #"{"id": "m\#($0)", "match": {"address": "C0:FF:EE:00:00:0\#($0)"}, "#
                + #""advertisement": {"layout": {"fields": [{"name": "t", "type": "int16_le"}]}, "manufacturer_id": \#($0)}}"#
        }
        let plan = try Self.plan(#"{"devices": ["# + devices.joined(separator: ",") + "]}")
        #expect(plan.monitorPatterns.map(\.count) == [7, 2])
        #expect(plan.monitorPatterns.flatMap { $0 } == (1...9).map { Self.pattern(0xFF, [UInt8($0), 0x00]) })
    }

    @Test func nothingToListenFor() throws {
        let plan = try Self.plan(
            #"{"devices": [{"id": "blind", "match": {"address": "C0:FF:EE:00:00:09"}, "subscribe": [{"characteristic": "2a19", "mode": "read", "interval": "10m"}]}]}"#
        )
        #expect(plan.sets.isEmpty)
    }
}
