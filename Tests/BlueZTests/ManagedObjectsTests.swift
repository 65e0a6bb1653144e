import DBus
import Testing

@testable import BlueZ

/// The manager's one copy of BlueZ's objects, which its peripherals read their GATT objects from:
/// the per-device index must always give what a pass over every object gives.
@Suite struct ManagedObjectsTests {
    let device: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
    let other: DBusObjectPath = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    @Test func descendantsFollowAddsRemovalsAndReplacements() {
        var objects = ManagedObjects()
        objects.add("/org/bluez/hci0", ["org.bluez.Adapter1": [:]])
        objects.add(device, ["org.bluez.Device1": ["Name": .string("strap")]])
        objects.add(path(device, "service000c"), ["org.bluez.GattService1": [:]])
        objects.add(path(device, "service000c/char000d"), ["org.bluez.GattCharacteristic1": [:]])
        objects.add(path(device, "service000c/char000d/desc000f"), ["org.bluez.GattDescriptor1": [:]])
        objects.add(path(other, "service0010"), ["org.bluez.GattService1": [:]])
        expectConsistent(objects)
        #expect(objects.descendants(of: device).count == 3)
        #expect(objects.descendants(of: other).count == 1)

        // Removing one of two interfaces keeps the object; removing the last drops it.
        objects.add(path(device, "service000c"), ["org.freedesktop.DBus.Properties": [:]])
        objects.remove(path(device, "service000c"), ["org.bluez.GattService1"])
        #expect(objects.descendants(of: device).count == 3)
        objects.remove(path(device, "service000c"), ["org.freedesktop.DBus.Properties"])
        #expect(objects.descendants(of: device).count == 2)
        expectConsistent(objects)

        objects.replaceDescendants(
            of: device, with: [path(device, "service0020"): ["org.bluez.GattService1": ["UUID": .string("180d")]]])
        #expect(Set(objects.descendants(of: device).keys) == [path(device, "service0020")])
        #expect(objects.properties(device, "org.bluez.Device1")?["Name"] == .string("strap"))
        expectConsistent(objects)

        objects.removeDescendants(of: device)
        #expect(objects.descendants(of: device).isEmpty)
        #expect(objects.properties(device, "org.bluez.Device1") != nil)
        #expect(objects.descendants(of: other).count == 1)
        expectConsistent(objects)

        objects.removeAll()
        #expect(objects.descendants(of: other).isEmpty)
        objects.add(path(other, "service0010"), ["org.bluez.GattService1": [:]])
        #expect(objects.descendants(of: other).count == 1)
    }

    @Test func aReplyIsIndexedToo() {
        let reply = DBusValue.dictionary(
            keySignature: "o", valueSignature: "a{sa{sv}}",
            [
                DBusDictEntry(key: .objectPath(device), value: interfaces("org.bluez.Device1")),
                DBusDictEntry(
                    key: .objectPath(path(device, "service000c")), value: interfaces("org.bluez.GattService1")),
                DBusDictEntry(
                    key: .objectPath(path(other, "service0010")), value: interfaces("org.bluez.GattService1")),
            ])
        let objects = ManagedObjects(reply: reply)
        #expect(Set(objects.descendants(of: device).keys) == [path(device, "service000c")])
        expectConsistent(objects)
    }

    @Test func deviceLevel() {
        #expect(ManagedObjects.deviceLevel(of: "/org/bluez/hci0") == nil)
        #expect(ManagedObjects.deviceLevel(of: device) == device)
        #expect(ManagedObjects.deviceLevel(of: path(device, "service000c/char000d")) == device)
    }

    private func path(_ base: DBusObjectPath, _ rest: String) -> DBusObjectPath {
        DBusObjectPath(validating: base.rawValue + "/" + rest)!
    }

    private func interfaces(_ name: String) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "a{sv}", [DBusDictEntry(key: .string(name), value: .properties([:]))])
    }

    /// Every device-level path's descendants equal those a prefix filter over all objects finds.
    private func expectConsistent(_ objects: ManagedObjects, sourceLocation: SourceLocation = #_sourceLocation) {
        for device in [device, other] {
            let prefix = device.rawValue + "/"
            let expected = objects.objects.filter { $0.key.rawValue.hasPrefix(prefix) }
            #expect(objects.descendants(of: device) == expected, sourceLocation: sourceLocation)
        }
    }
}
