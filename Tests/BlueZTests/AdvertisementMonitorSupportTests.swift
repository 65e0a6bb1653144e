import BlueZ
import DBus
import Testing

/// What `bluetooth.scan.mode` `"passive"` needs of the adapter, read from its
/// `AdvertisementMonitorManager1` properties (issue 17).
@Suite struct AdvertisementMonitorSupportTests {
    @Test func aMissingManagerNamesTheInterfaceAndTheExperimentalSwitch() {
        let support = AdvertisementMonitorSupport(manager: nil)
        #expect(support == .noManager)
        #expect(support.missing?.contains("no org.bluez.AdvertisementMonitorManager1") == true)
        #expect(support.missing?.contains("-E") == true)
    }

    @Test func aManagerWithoutOrPatternsNamesTheTypesItHas() {
        let empty = AdvertisementMonitorSupport(manager: ["SupportedMonitorTypes": .array(elementSignature: "s", [])])
        #expect(empty == .noOrPatterns(supportedTypes: []))
        #expect(empty.missing?.contains("SupportedMonitorTypes: none") == true)
        let other = AdvertisementMonitorSupport(manager: [
            "SupportedMonitorTypes": .array(elementSignature: "s", [.string("rssi")])
        ])
        #expect(other.missing?.contains("SupportedMonitorTypes: rssi") == true)
    }

    @Test func orPatternsAreSupportedWithTheControllerFeatures() {
        let support = AdvertisementMonitorSupport(manager: [
            "SupportedMonitorTypes": .array(elementSignature: "s", [.string("or_patterns")]),
            "SupportedFeatures": .array(elementSignature: "s", [.string("controller-patterns")]),
        ])
        #expect(support == .orPatterns(features: ["controller-patterns"]))
        #expect(support.missing == nil)
    }
}
