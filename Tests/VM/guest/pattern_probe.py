#!/usr/bin/env python3
"""Registers four org.bluez.AdvertisementMonitor1 (or_patterns) on ADAPTER for SECONDS and prints
every Activate, Release and DeviceFound per monitor, to show how bluetoothd's software filter
compares patterns: `uuid-first` matches BTHome's UUID (d2 fc) at offset 0 of service data (AD
type 0x16), as the kernel and bluetoothd 5.66 read a service-data AD structure; `after-uuid`
matches BTHome's device-info byte 0x40 at offset 0, as bluetoothd 5.71 and later read it;
`uuid-list` d2 fc in a complete 16-bit UUID list (0x03) and `name` "bleb" at the start of the
complete local name (0x09), which 5.69 and later parse out of what patterns are compared with.
`gateway` holds the patterns of the gateway's first monitor for a BTHome device (the UUID, and
the device information bytes 40-45 after it), to show it is called under either reading.
Usage: pattern_probe.py ADAPTER SECONDS."""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

adapter, seconds = sys.argv[1], int(sys.argv[2])
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
loop = GLib.MainLoop()
ROOT = "/io/blebridge/pattern_probe"
MONITOR = "org.bluez.AdvertisementMonitor1"
MONITORS = {"uuid-first": [(0x16, bytes([0xD2, 0xFC]))], "after-uuid": [(0x16, bytes([0x40]))],
            "uuid-list": [(0x03, bytes([0xD2, 0xFC]))], "name": [(0x09, b"bleb")],
            "gateway": [(0x16, bytes([0xD2, 0xFC]))] + [(0x16, bytes([info])) for info in range(0x40, 0x46)]}


def path(name):
    return dbus.ObjectPath(ROOT + "/" + name.replace("-", "_"))


class Root(dbus.service.Object):
    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {
            path(name): {MONITOR: {
                "Type": dbus.String("or_patterns"),
                "Patterns": dbus.Array([dbus.Struct((dbus.Byte(0), dbus.Byte(ad_type), dbus.ByteArray(value)))
                                        for ad_type, value in patterns], signature="(yyay)")}}
            for name, patterns in MONITORS.items()}


class Monitor(dbus.service.Object):
    def __init__(self, name):
        self.name = name
        super().__init__(bus, path(name))

    @dbus.service.method(MONITOR)
    def Activate(self):
        print(self.name, "activated", flush=True)

    @dbus.service.method(MONITOR)
    def Release(self):
        print(self.name, "released", flush=True)

    @dbus.service.method(MONITOR, in_signature="o")
    def DeviceFound(self, device):
        print(self.name, "DeviceFound", device, flush=True)

    @dbus.service.method(MONITOR, in_signature="o")
    def DeviceLost(self, device):
        print(self.name, "DeviceLost", device, flush=True)


Root(bus, ROOT)
for name in MONITORS:
    Monitor(name)
manager = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/" + adapter), "org.bluez.AdvertisementMonitorManager1")
manager.RegisterMonitor(dbus.ObjectPath(ROOT), reply_handler=lambda: print("registered", flush=True),
                        error_handler=lambda e: print("register-failed", e.get_dbus_name(), flush=True))
GLib.timeout_add_seconds(seconds, loop.quit)
loop.run()
