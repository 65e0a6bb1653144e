import Bluetooth
import Configuration
import Foundation
import Testing

@testable import Gateway

/// A match without an address that catches several devices: each gets its own id, and the
/// assignment survives a restart (the bindings are what the gateway stores).
@Suite struct MatchInstancesTests {
    static let template = DeviceConfiguration(
        id: "one", name: "One", match: DeviceMatch(namePrefix: "ATC_"), connection: .passive,
        advertisement: AdvertisementSettings(decoder: "bthome"), onlyOnChange: true)
    static let pinned = DeviceConfiguration(
        id: "strap", match: DeviceMatch(address: BluetoothAddress("C0:FF:EE:00:00:01")), connection: .passive)
    static let configuration = BridgeConfiguration(devices: [template, pinned])

    /// The instances behind a reference, so `#expect` can call the mutating `assign`.
    final class Box {
        var instances: MatchInstances
        init(_ instances: MatchInstances = MatchInstances()) { self.instances = instances }
        func assign(
            _ address: BluetoothAddress, caughtBy template: DeviceConfiguration, at seconds: Double = 0,
            bound: DeviceBound = MatchInstances.bound
        ) -> MatchInstances.Assignment {
            instances.assign(
                address, caughtBy: template, at: MatchInstancesTests.start.addingTimeInterval(seconds), bound: bound)
        }
        func seen(_ id: String, at seconds: Double) {
            instances.seen(id, at: MatchInstancesTests.start.addingTimeInterval(seconds))
        }
        var bindings: [String: [String]] { instances.bindings }
        func expand(_ configuration: BridgeConfiguration) -> BridgeConfiguration { instances.expand(configuration) }
    }

    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let first = BluetoothAddress("A4:C1:38:8D:18:B2")!
    static let second = BluetoothAddress("A4:C1:38:CF:01:56")!

    @Test func theFirstFixedAddressIsTheDeviceAndEveryFurtherOneAnInstance() {
        let instances = Box()
        #expect(instances.assign(Self.first, caughtBy: Self.template) == .newTemplateBinding)
        #expect(instances.assign(Self.first, caughtBy: Self.template) == .template)
        #expect(instances.assign(Self.second, caughtBy: Self.template) == .newInstance("one_cf0156", evicted: []))
        #expect(instances.assign(Self.second, caughtBy: Self.template) == .instance("one_cf0156"))
        #expect(instances.bindings == ["one": [Self.first.string, Self.second.string]])

        let expanded = instances.expand(Self.configuration)
        #expect(expanded.devices.map(\.id) == ["one", "strap", "one_cf0156"])
        let instance = expanded.devices[2]
        #expect(instance.name == "One CF0156")
        #expect(instance.match == DeviceMatch(address: Self.second), "pinned to its address alone")
        #expect(instance.advertisement == Self.template.advertisement)
        #expect(instance.onlyOnChange, "the configured device's settings are copied")
        #expect(expanded.devices[0].match.address == nil, "the configured device keeps its match")
    }

    @Test func theAssignmentSurvivesARestartInTheOrderFirstSeen() {
        let instances = Box()
        _ = instances.assign(Self.first, caughtBy: Self.template)
        _ = instances.assign(Self.second, caughtBy: Self.template)
        // After a restart the second sensor may advertise first: it keeps its id all the same.
        let restored = Box(MatchInstances(bindings: instances.bindings))
        #expect(restored.assign(Self.second, caughtBy: Self.template) == .instance("one_cf0156"))
        #expect(restored.assign(Self.first, caughtBy: Self.template) == .template)
        #expect(restored.expand(Self.configuration).devices.map(\.id) == ["one", "strap", "one_cf0156"])
    }

    @Test func privateAddressesAndAddressMatchesAreNeverSplit() {
        let instances = Box()
        _ = instances.assign(Self.first, caughtBy: Self.template)
        let resolvable = BluetoothAddress("4A:11:22:33:44:55", type: .random)!
        let nonResolvable = BluetoothAddress("0A:11:22:33:44:55", type: .random)!
        let staticRandom = BluetoothAddress("CA:11:22:33:44:55", type: .random)!
        #expect(instances.assign(resolvable, caughtBy: Self.template) == .template)
        #expect(instances.assign(nonResolvable, caughtBy: Self.template) == .template)
        #expect(instances.assign(staticRandom, caughtBy: Self.template) == .newInstance("one_334455", evicted: []))
        #expect(instances.assign(Self.second, caughtBy: Self.pinned) == .template)
        #expect(instances.bindings["strap"] == nil)
    }

    @Test func instancesOfRemovedDevicesAndTakenIDsAreLeftOut() {
        let instances = Box()
        _ = instances.assign(Self.first, caughtBy: Self.template)
        _ = instances.assign(Self.second, caughtBy: Self.template)
        #expect(instances.expand(BridgeConfiguration(devices: [Self.pinned])).devices.map(\.id) == ["strap"])
        let taken = DeviceConfiguration(
            id: "one_cf0156", match: DeviceMatch(address: BluetoothAddress("C0:FF:EE:00:00:09")), connection: .passive)
        #expect(
            instances.expand(BridgeConfiguration(devices: [Self.template, taken])).devices.map(\.id)
                == ["one", "one_cf0156"])
    }

    /// The bound (issue 17): beyond it a new fixed address takes the place of an instance unseen
    /// for the idle age, and is refused while every instance is recent; the configured device's
    /// own address is never evicted.
    @Test func instancesAreBoundedWithoutChurn() {
        let instances = Box()
        let bound = DeviceBound(maximum: 2, idleAge: 600)
        let addresses = (1...4).map { BluetoothAddress("A4:C1:38:00:00:0\($0)")! }
        #expect(instances.assign(Self.first, caughtBy: Self.template, at: 0, bound: bound) == .newTemplateBinding)
        #expect(
            instances.assign(addresses[0], caughtBy: Self.template, at: 1, bound: bound)
                == .newInstance("one_000001", evicted: []))
        #expect(
            instances.assign(addresses[1], caughtBy: Self.template, at: 2, bound: bound)
                == .newInstance("one_000002", evicted: []))
        #expect(
            instances.assign(addresses[2], caughtBy: Self.template, at: 100, bound: bound) == .refused("one_000003"),
            "both instances were seen less than 10 minutes ago")
        #expect(instances.instances.refusals == 1)
        instances.seen("one_000001", at: 500)
        #expect(
            instances.assign(addresses[2], caughtBy: Self.template, at: 605, bound: bound)
                == .newInstance("one_000003", evicted: ["one_000002"]),
            "one_000002 was unseen for 603 s; one_000001 only for 105 s")
        #expect(instances.bindings["one"] == [Self.first.string, addresses[0].string, addresses[2].string])
        #expect(instances.instances.evictions == 1)
        #expect(
            instances.assign(addresses[1], caughtBy: Self.template, at: 606, bound: bound) == .refused("one_000002"),
            "the evicted one coming back does not evict another recent one")
        #expect(instances.assign(Self.first, caughtBy: Self.template, at: 5_000, bound: bound) == .template)
    }

    /// Instance ids are `<id>_<last 3 address bytes>`: a second address ending like an instance's
    /// must not become that instance (its readings would be published as the other sensor's).
    @Test func anotherAddressWithAnInstancesIdIsNotThatInstance() {
        let instances = Box()
        let one = BluetoothAddress("A4:C1:38:00:00:01")!
        let alike = BluetoothAddress("B8:27:EB:00:00:01")!
        #expect(instances.assign(Self.first, caughtBy: Self.template) == .newTemplateBinding)
        #expect(instances.assign(one, caughtBy: Self.template) == .newInstance("one_000001", evicted: []))
        #expect(
            instances.assign(alike, caughtBy: Self.template, at: 1)
                == .idTaken("one_000001", address: one.string))
        #expect(instances.bindings["one"] == [Self.first.string, one.string])
        #expect(instances.instances.refusals == 0 && instances.instances.evictions == 0)
        #expect(instances.assign(one, caughtBy: Self.template, at: 2) == .instance("one_000001"))
    }

    @Test func restoredInstancesCountAsSeenAtTheRestart() {
        let bindings = ["one": [Self.first.string, Self.second.string]]
        let restored = Box(MatchInstances(bindings: bindings, loadedAt: Self.start))
        let bound = DeviceBound(maximum: 1, idleAge: 600)
        let newcomer = BluetoothAddress("A4:C1:38:00:00:09")!
        #expect(restored.assign(newcomer, caughtBy: Self.template, at: 60, bound: bound) == .refused("one_000009"))
        #expect(
            restored.assign(newcomer, caughtBy: Self.template, at: 600, bound: bound)
                == .newInstance("one_000009", evicted: ["one_cf0156"]))
    }
}
