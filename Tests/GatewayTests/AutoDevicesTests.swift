import Bluetooth
import Configuration
import Foundation
import Testing

@testable import Gateway

/// `auto_devices`: ids, the bound with least-recently-seen eviction, and the expansion.
@Suite struct AutoDevicesTests {
    static let on = BridgeConfiguration(autoDevices: AutoDeviceSettings(enabled: true, maxDevices: 2))
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// The devices behind a reference, so `#expect` can call the mutating methods.
    final class Box {
        var devices = AutoDevices()
        func add(
            _ address: String, _ decoder: String, at seconds: Double, bound: DeviceBound = DeviceBound(maximum: 2)
        ) -> AutoDevices.Admission? {
            devices.add(
                BluetoothAddress(address)!, decoder: decoder, at: AutoDevicesTests.start.addingTimeInterval(seconds),
                bound: bound, configuration: AutoDevicesTests.on)
        }
    }

    @Test func idsAreTheDecoderAndTheLastThreeAddressBytes() {
        #expect(AutoDevices.id(decoder: "bthome", address: BluetoothAddress("A4:C1:38:CF:01:56")!) == "bthome_cf0156")
        let box = Box()
        #expect(box.add("A4:C1:38:CF:01:56", "bthome", at: 0) == .added("bthome_cf0156", evicted: []))
        #expect(box.add("A4:C1:38:CF:01:56", "bthome", at: 1) == .known("bthome_cf0156"))
        let expanded = box.devices.expand(Self.on)
        let device = expanded.device(id: "bthome_cf0156")
        #expect(device != nil)
        #expect(device?.name == "bthome CF0156")
        #expect(device?.connection == .passive)
        #expect(device?.match == DeviceMatch(address: BluetoothAddress("A4:C1:38:CF:01:56")))
        #expect(device?.advertisement == AdvertisementSettings(decoder: "bthome"))
        #expect(box.devices.expand(BridgeConfiguration()).devices.isEmpty, "nothing when auto_devices is off")
    }

    @Test func beyondTheMaximumTheDeviceSeenLeastRecentlyGoesOnceIdle() {
        let box = Box()
        _ = box.add("A4:C1:38:00:00:01", "bthome", at: 0)
        _ = box.add("A4:C1:38:00:00:02", "pvvx", at: 1)
        box.devices.seen("bthome_000001", at: Self.start.addingTimeInterval(500))
        let third = box.add("A4:C1:38:00:00:03", "bthome", at: 700)
        #expect(third == .added("bthome_000003", evicted: ["pvvx_000002"]), "pvvx_000002 was unseen for 699 s")
        #expect(box.devices.entries.keys.sorted() == ["bthome_000001", "bthome_000003"])
        #expect(box.devices.evictions == 1)
    }

    /// Issue 17: with more recognised advertisers around than `max_devices`, an evicted device's
    /// next advertisement must not evict another (which would come back and evict the next…).
    @Test func aCrowdBeyondTheMaximumDoesNotChurn() {
        let box = Box()
        let addresses = (1...5).map { "A4:C1:38:00:00:0\($0)" }
        for (index, address) in addresses.enumerated() {
            _ = box.add(address, "bthome", at: Double(index))
        }
        #expect(box.devices.entries.keys.sorted() == ["bthome_000001", "bthome_000002"])
        #expect(box.devices.refusals == 3)
        // Everyone keeps advertising every 10 s for an hour: the two followed stay, nobody is evicted.
        for second in stride(from: 10.0, through: 3_600, by: 10) {
            for address in addresses {
                let id = AutoDevices.id(decoder: "bthome", address: BluetoothAddress(address)!)
                if box.devices.entries[id] != nil {
                    box.devices.seen(id, at: Self.start.addingTimeInterval(second))
                } else {
                    #expect(box.add(address, "bthome", at: second) == .refused(id))
                }
            }
        }
        #expect(box.devices.evictions == 0)
        #expect(box.devices.refusals == 3 + 3 * 360, "one per refused advertisement, not per device")
        #expect(box.devices.entries.keys.sorted() == ["bthome_000001", "bthome_000002"])
    }

    /// Two advertisers whose addresses end in the same 3 bytes get the same id: the second must not
    /// be taken for the first (`.known` would publish its readings as the first device's).
    @Test func anotherAddressWithTheSameIdIsNotTheKnownDevice() {
        let box = Box()
        #expect(box.add("A4:C1:38:00:00:01", "bthome", at: 0) == .added("bthome_000001", evicted: []))
        #expect(
            box.add("B8:27:EB:00:00:01", "bthome", at: 1) == .idTaken("bthome_000001", address: "A4:C1:38:00:00:01"))
        #expect(box.devices.entries["bthome_000001"]?.address == "A4:C1:38:00:00:01")
        #expect(box.devices.entries["bthome_000001"]?.lastSeen == Self.start, "the other address is not a sighting")
        #expect(box.add("A4:C1:38:00:00:01", "bthome", at: 2) == .known("bthome_000001"))
    }

    @Test func restoredDevicesCountAsSeenAtTheRestart() {
        let old = AutoDevices.Entry(address: "A4:C1:38:00:00:01", decoder: "bthome", lastSeen: Self.start)
        let restart = Self.start.addingTimeInterval(86_400)
        let box = Box()
        box.devices = AutoDevices(entries: ["bthome_000001": old], loadedAt: restart)
        #expect(box.devices.entries["bthome_000001"]?.lastSeen == restart)
        #expect(
            box.add("A4:C1:38:00:00:02", "bthome", at: 86_400 + 60, bound: DeviceBound(maximum: 1))
                == .refused("bthome_000002"))
    }

    @Test func configuredDevicesWin() {
        let configured = DeviceConfiguration(
            id: "bthome_000001", match: DeviceMatch(address: BluetoothAddress("C0:FF:EE:00:00:09")),
            connection: .passive)
        var configuration = Self.on
        configuration.devices = [configured]
        var devices = AutoDevices()
        #expect(
            devices.add(
                BluetoothAddress("A4:C1:38:00:00:01")!, decoder: "bthome", at: Self.start,
                bound: DeviceBound(maximum: 5),
                configuration: configuration) == nil,
            "a configured device has that id")
        _ = devices.add(
            BluetoothAddress("C0:FF:EE:00:00:09")!, decoder: "ibeacon", at: Self.start, bound: DeviceBound(maximum: 5),
            configuration: BridgeConfiguration(autoDevices: AutoDeviceSettings(enabled: true)))
        #expect(devices.expand(configuration).devices.map(\.id) == ["bthome_000001"], "its address is configured")
    }

    @Test func anEncryptedAdvertiserGetsItsBindKey() throws {
        let configuration = try ConfigurationLoader().decode(
            Data(
                #"{"auto_devices": {"enabled": true, "bind_keys": {"a4:c1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99"}}}"#
                    .utf8))
        let address = BluetoothAddress("A4:C1:38:56:53:84")!
        let key = try #require(configuration.autoDevices.bindKey(for: address))
        #expect(key.count == 16 && key.first == 0x81)
        var devices = AutoDevices()
        _ = devices.add(
            address, decoder: "mibeacon", at: Self.start, bound: DeviceBound(maximum: 5), configuration: configuration)
        let device = devices.expand(configuration).device(id: "mibeacon_565384")
        #expect(device?.advertisement == AdvertisementSettings(decoder: "mibeacon", bindKey: key))
        for bad in [
            #"{"bind_keys": {"A4:C1:38:56:53": "814aac74c4f17b6c1581e1ab87816b99"}}"#,
            #"{"bind_keys": {"A4:C1:38:56:53:84": "814aac74"}}"#,
            #"{"bind_keys": {"A4:C1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99", "a4:c1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99"}}"#,
            #"{"bind_keys": ["814aac74c4f17b6c1581e1ab87816b99"]}"#,
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ConfigurationLoader().decode(Data(("{\"auto_devices\": " + bad + "}").utf8))
            }
        }
    }

    @Test func theSwitchIsReadFromTheConfiguration() throws {
        let configuration = try ConfigurationLoader().decode(
            Data(#"{"auto_devices": {"enabled": true, "max_devices": 30, "evict_after": "1h"}}"#.utf8))
        #expect(
            configuration.autoDevices == AutoDeviceSettings(enabled: true, maxDevices: 30, evictAfter: .seconds(3_600)))
        #expect(try ConfigurationLoader().decode(Data("{}".utf8)).autoDevices.evictAfter == .seconds(600))
        #expect(try ConfigurationLoader().decode(Data("{}".utf8)).autoDevices.enabled == false)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(#"{"auto_devices": {"max_devices": 0}}"#.utf8))
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(#"{"auto_devices": {"enable": true}}"#.utf8))
        }
    }

    /// `auto_devices.allow` and `deny`: by decoder, address (whole or prefix) and name (exact or
    /// `prefix*`); deny wins; a name not known yet fails `allow.names` and passes `deny.names`; a
    /// reload with a new list drops a stored device it now refuses.
    @Test func allowAndDenyLists() throws {
        let configuration = try ConfigurationLoader(knownDecoders: ["bthome", "ibeacon", "pvvx", "mibeacon"]).decode(
            Data(
                #"""
                {"auto_devices": {"enabled": true,
                  "allow": {"decoders": ["bthome", "pvvx", "mibeacon"], "addresses": ["A4:C1:38", "c0-ff-ee-00-00-09"]},
                  "deny": {"addresses": ["A4:C1:38:00:00:66"], "names": ["Kitchen*", "ATC_BAD"]}}}
                """#.utf8))
        let auto = configuration.autoDevices
        func refusal(_ decoder: String, _ address: String, _ name: String? = nil) -> String? {
            auto.refusal(decoder: decoder, address: BluetoothAddress(address)!, name: name)
        }
        #expect(refusal("bthome", "A4:C1:38:00:00:01") == nil)
        #expect(refusal("pvvx", "C0:FF:EE:00:00:09", "ATC_GOOD") == nil)
        #expect(refusal("ibeacon", "A4:C1:38:00:00:01") == "allow.decoders")
        #expect(refusal("bthome", "C0:FF:EE:00:00:0A") == "allow.addresses", "a whole address is no prefix")
        #expect(refusal("bthome", "A4:C1:38:00:00:66") == "deny.addresses", "deny wins over allow")
        #expect(refusal("bthome", "A4:C1:38:00:00:02", "Kitchen 2") == "deny.names")
        #expect(refusal("bthome", "A4:C1:38:00:00:02", "ATC_BAD") == "deny.names")
        #expect(refusal("bthome", "A4:C1:38:00:00:02", "ATC_BAD2") == nil, "without * a name is exact")
        #expect(refusal("bthome", "A4:C1:38:00:00:02") == nil, "no name yet: deny.names cannot catch it")
        let named = AutoDeviceSettings(enabled: true, allow: AutoDeviceFilter(names: ["ATC_*"]))
        #expect(
            named.refusal(decoder: "pvvx", address: BluetoothAddress("A4:C1:38:00:00:01")!, name: nil) == "allow.names")

        var devices = AutoDevices()
        let bound = DeviceBound(maximum: 5)
        #expect(
            devices.add(
                BluetoothAddress("A4:C1:38:00:00:66")!, decoder: "bthome", at: Self.start, bound: bound,
                configuration: configuration) == .filtered("bthome_000066", list: "deny.addresses"))
        #expect(devices.entries.isEmpty && devices.refusals == 0, "a filtered device is not a refusal at the bound")
        _ = devices.add(
            BluetoothAddress("A4:C1:38:00:00:01")!, decoder: "bthome", name: "Lounge", at: Self.start, bound: bound,
            configuration: configuration)
        #expect(devices.expand(configuration).devices.map(\.id) == ["bthome_000001"])
        var reloaded = configuration
        reloaded.autoDevices.deny.names.append("Lounge")
        #expect(devices.expand(reloaded).devices.isEmpty, "its stored name is now denied")
    }

    /// A device stored without a name (restored from a state written before names were kept, or
    /// added while no name list was set) was judged by the name lists as nameless for good: with
    /// `allow.names` it never came back although it advertised an allowed name, with `deny.names`
    /// it stayed although it advertised a denied one. Its first named advertisement names it.
    @Test func aDeviceStoredWithoutANameTakesItsAdvertisedName() {
        let address = BluetoothAddress("A4:C1:38:00:00:01")!
        let stored = ["pvvx_000001": AutoDevices.Entry(address: address.string, decoder: "pvvx", lastSeen: Self.start)]
        let bound = DeviceBound(maximum: 5)

        var allowing = BridgeConfiguration(
            autoDevices: AutoDeviceSettings(enabled: true, allow: AutoDeviceFilter(names: ["ATC_*"])))
        var devices = AutoDevices(entries: stored, loadedAt: Self.start)
        #expect(devices.expand(allowing).devices.isEmpty, "no name yet: allow.names does not let it through")
        #expect(
            devices.add(
                address, decoder: "pvvx", name: "ATC_0001", at: Self.start, bound: bound, configuration: allowing)
                == .known("pvvx_000001"))
        #expect(devices.entries["pvvx_000001"]?.name == "ATC_0001")
        #expect(devices.expand(allowing).devices.map(\.id) == ["pvvx_000001"])

        allowing.autoDevices.allow = AutoDeviceFilter()
        allowing.autoDevices.deny = AutoDeviceFilter(names: ["Phone*"])
        devices = AutoDevices(entries: stored, loadedAt: Self.start)
        #expect(devices.expand(allowing).devices.map(\.id) == ["pvvx_000001"])
        #expect(
            devices.add(
                address, decoder: "pvvx", name: "Phone 7", at: Self.start, bound: bound, configuration: allowing)
                == .filtered("pvvx_000001", list: "deny.names"))
        #expect(devices.expand(allowing).devices.isEmpty, "its name is denied")

        // Another address ending in the same 3 bytes does not name it.
        devices = AutoDevices(entries: stored, loadedAt: Self.start)
        #expect(
            devices.add(
                BluetoothAddress("C0:FF:EE:00:00:01")!, decoder: "pvvx", name: "Other", at: Self.start, bound: bound,
                configuration: allowing) == .idTaken("pvvx_000001", address: address.string))
        #expect(devices.entries["pvvx_000001"]?.name == nil)
    }

    @Test func listsAreCheckedWithClearErrors() {
        let loader = ConfigurationLoader(knownDecoders: ["bthome", "ibeacon"])
        let cases: [(String, String)] = [
            (
                #"{"allow": {"decoders": ["bthom"]}}"#,
                #"auto_devices.allow.decoders[0]: unknown decoder "bthom" (did you mean "bthome"?)"#
            ),
            (#"{"deny": {"addresses": ["A4:C1"," A4"]}}"#, #"auto_devices.deny.addresses[1]: " A4" is not an address"#),
            (
                #"{"deny": {"addresses": ["A4:C1-38"]}}"#,
                #"auto_devices.deny.addresses[0]: "A4:C1-38" is not an address"#
            ),
            (#"{"deny": {"addresses": ["A4:C1:38:00:00:01:02"]}}"#, "auto_devices.deny.addresses[0]"),
            (#"{"allow": {"names": ["a", "a"]}}"#, #"auto_devices.allow.names[1]: "a" is listed twice"#),
            (#"{"allow": {"names": [""]}}"#, "auto_devices.allow.names[0]: empty"),
            (#"{"allow": {"decoder": ["bthome"]}}"#, #"unknown key "decoder" (did you mean "decoders"?)"#),
            (
                #"{"allow": {"addresses": ["a4:c1:38"]}, "deny": {"addresses": ["A4:C1:38"]}}"#,
                #"auto_devices.deny: address "A4:C1:38" is in both allow and deny"#
            ),
            (#"{"allow": {"decoders": "bthome"}}"#, "auto_devices.allow.decoders"),
        ]
        for (text, message) in cases {
            do {
                _ = try loader.decode(Data(("{\"auto_devices\": " + text + "}").utf8))
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(message), "\(text): \(error.description)")
            }
        }
    }
}
