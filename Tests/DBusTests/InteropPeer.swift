import DBus
import TestSupport

/// An independent D-Bus peer written with python3-dbus (system /usr/bin/python3), used to check
/// this module's wire format against a different implementation in both directions.
enum InteropPeer {
    static let python = "/usr/bin/python3"
    static let serviceName = "io.blebridge.PyService"
    static let ourName = "io.blebridge.Interop"

    /// The value both sides build independently (Swift here, Python in `script`).
    static let sample: DBusValue = .properties([
        "Name": .string("lamp ✓"),
        "RSSI": .int16(-70),
        "Value": .bytes(Array(0..<20)),
        "UUIDs": .strings(["180d", "180f"]),
        "Struct": .structure([.int32(7), .uint32(4_000_000_000), .string("x")]),
        "Nested": .variant(.uint32(5)),
        "Map": .dictionary(
            keySignature: "q", valueSignature: "ay", [DBusDictEntry(key: .uint16(76), value: .bytes([2, 21]))]),
        "Flag": .boolean(true),
        "Big": .uint64(.max),
        "Path": .objectPath("/org/bluez/hci0"),
        "Real": .double(1.5),
        "Empty": .array(elementSignature: "s", []),
    ])

    static func writeScript(in directory: TemporaryDirectory) throws -> String {
        try directory.write("interop.py", script).path
    }

    static let script = #"""
        import os, sys, socket
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        def sample():
            # variant_level=1: each value sits in the dictionary's variant; Nested in two.
            return dbus.Dictionary({
                "Name": dbus.String("lamp \u2713", variant_level=1),
                "RSSI": dbus.Int16(-70, variant_level=1),
                "Value": dbus.Array([dbus.Byte(i) for i in range(20)], signature="y", variant_level=1),
                "UUIDs": dbus.Array(["180d", "180f"], signature="s", variant_level=1),
                "Struct": dbus.Struct((dbus.Int32(7), dbus.UInt32(4000000000), dbus.String("x")), signature="ius", variant_level=1),
                "Nested": dbus.UInt32(5, variant_level=2),
                "Map": dbus.Dictionary({dbus.UInt16(76): dbus.Array([dbus.Byte(2), dbus.Byte(21)], signature="y")}, signature="qay", variant_level=1),
                "Flag": dbus.Boolean(True, variant_level=1),
                "Big": dbus.UInt64(18446744073709551615, variant_level=1),
                "Path": dbus.ObjectPath("/org/bluez/hci0", variant_level=1),
                "Real": dbus.Double(1.5, variant_level=1),
                "Empty": dbus.Array([], signature="s", variant_level=1),
            }, signature="sv")

        def canon(value):
            """Type-aware canonical form: python-dbus types compare equal across widths, this does not."""
            level = getattr(value, "variant_level", 0)
            kind = type(value).__name__
            if kind == "str":
                kind = "String"  # plain keys built here; received strings are dbus.String
            if isinstance(value, dbus.Dictionary) or isinstance(value, dict):
                return (kind, level, tuple(sorted((repr(canon(k)), canon(v)) for k, v in value.items())))
            if isinstance(value, (dbus.Array, dbus.Struct, list, tuple)):
                return (kind, level, tuple(canon(v) for v in value))
            return (kind, level, str(value))

        def check(name, got, expected):
            if canon(got) != canon(expected):
                print("MISMATCH %s: got %r expected %r" % (name, canon(got), canon(expected)), flush=True)
                sys.exit(1)
            print("OK " + name, flush=True)

        def client(address, dest):
            bus = dbus.bus.BusConnection(address)
            obj = bus.get_object(dest, "/interop")
            iface = dbus.Interface(obj, "io.blebridge.Interop1")
            check("Add", iface.Add(dbus.Int32(40), dbus.Int32(2)), dbus.Int32(42))
            check("Sample", iface.Sample(), sample())
            check("Expect", iface.Expect(sample()), dbus.Boolean(True))
            props = dbus.Interface(obj, "org.freedesktop.DBus.Properties")
            check("Get", props.Get("io.blebridge.Interop1", "Name"), dbus.String("interop", variant_level=1))
            props.Set("io.blebridge.Interop1", "Level", dbus.Byte(9, variant_level=1))
            check("Set", props.GetAll("io.blebridge.Interop1"),
                  dbus.Dictionary({"Name": dbus.String("interop", variant_level=1), "Level": dbus.Byte(9, variant_level=1)}, signature="sv"))
            try:
                iface.Busy()
                print("MISMATCH Busy did not fail", flush=True); sys.exit(1)
            except dbus.exceptions.DBusException as error:
                check("Busy", dbus.String(error.get_dbus_name() + "|" + error.get_dbus_message()),
                      dbus.String("org.bluez.Error.InProgress|Operation already in progress"))
            try:
                iface.Add(dbus.String("x"), dbus.Int32(1), signature="si")
                print("MISMATCH bad Add did not fail", flush=True); sys.exit(1)
            except dbus.exceptions.DBusException as error:
                check("InvalidArgs", dbus.String(error.get_dbus_name()), dbus.String("org.freedesktop.DBus.Error.InvalidArgs"))
            fd, mtu = iface.AcquireNotify(dbus.Dictionary({}, signature="sv"))
            check("MTU", mtu, dbus.UInt16(23))
            sock = socket.socket(fileno=fd.take())
            check("Notification", dbus.ByteArray(sock.recv(64)), dbus.ByteArray(b"\x06\x48"))
            managed = dbus.Interface(bus.get_object(dest, "/"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
            check("Managed", dbus.Boolean("/interop" in managed and "io.blebridge.Interop1" in managed["/interop"]), dbus.Boolean(True))
            print("DONE", flush=True)

        def service(address):
            dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
            bus = dbus.bus.BusConnection(address)

            class Service(dbus.service.Object):
                @dbus.service.method("io.blebridge.Py1", in_signature="", out_signature="a{sv}")
                def Sample(self):
                    return sample()

                @dbus.service.method("io.blebridge.Py1", in_signature="a{sv}", out_signature="s")
                def Expect(self, value):
                    return "OK" if canon(value) == canon(sample()) else "got %r expected %r" % (canon(value), canon(sample()))

                @dbus.service.method("io.blebridge.Py1", in_signature="u", out_signature="")
                def Notify(self, count):
                    for i in range(count):
                        self.PropertiesChanged("org.bluez.GattCharacteristic1",
                            dbus.Dictionary({"Value": dbus.Array([dbus.Byte(i % 256)] * 20, signature="y")}, signature="sv"),
                            dbus.Array([], signature="s"))

                @dbus.service.signal("org.freedesktop.DBus.Properties", signature="sa{sv}as")
                def PropertiesChanged(self, interface, changed, invalidated):
                    pass

                @dbus.service.method("io.blebridge.Py1", in_signature="", out_signature="s")
                def Vanish(self):
                    os._exit(0)

            name = dbus.service.BusName("io.blebridge.PyService", bus)
            Service(bus, "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/char0010")
            print("READY", flush=True)
            GLib.MainLoop().run()

        if __name__ == "__main__":
            if sys.argv[1] == "client":
                client(sys.argv[2], sys.argv[3])
            else:
                service(sys.argv[2])
        """#
}
