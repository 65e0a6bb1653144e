#!/usr/bin/env python3
"""Registers one org.bluez.AdvertisementMonitor1 (or_patterns) with COUNT patterns on ADAPTER and
prints what bluetoothd does with it: `activated`, `released`, `register-failed <error>` or
`no-answer` after TIMEOUT seconds, and whether bluetoothd still owns org.bluez afterwards.
Usage: monitor_probe.py ADAPTER COUNT [TIMEOUT]. The patterns are COUNT distinct service-data
UUID prefixes (AD type 0x16); a guest-side probe of the kernel's and bluetoothd's limits,
independent of the gateway's code."""
import sys

import dbus
import dbus.service
import dbus.mainloop.glib
from gi.repository import GLib

adapter, count = sys.argv[1], int(sys.argv[2])
timeout = int(sys.argv[3]) if len(sys.argv) > 3 else 15
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
loop = GLib.MainLoop()
outcome = []
ROOT = "/io/blebridge/probe"
PATH = ROOT + "/monitor0"
MONITOR = "org.bluez.AdvertisementMonitor1"


def finish(what):
    if not outcome:
        outcome.append(what)
        print(what, flush=True)
        GLib.timeout_add(500, loop.quit)


class Root(dbus.service.Object):
    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        patterns = dbus.Array(
            [dbus.Struct((dbus.Byte(0), dbus.Byte(0x16), dbus.ByteArray(bytes([0x10 + i, 0xFD]))))
             for i in range(count)], signature="(yyay)")
        return {dbus.ObjectPath(PATH): {MONITOR: {"Type": dbus.String("or_patterns"), "Patterns": patterns}}}


class Monitor(dbus.service.Object):
    @dbus.service.method(MONITOR)
    def Activate(self):
        finish("activated")

    @dbus.service.method(MONITOR)
    def Release(self):
        finish("released")

    @dbus.service.method(MONITOR, in_signature="o")
    def DeviceFound(self, device):
        pass

    @dbus.service.method(MONITOR, in_signature="o")
    def DeviceLost(self, device):
        pass

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return Root.GetManagedObjects(None)[dbus.ObjectPath(PATH)][MONITOR][name]

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return Root.GetManagedObjects(None)[dbus.ObjectPath(PATH)][MONITOR]


Root(bus, ROOT)
Monitor(bus, PATH)
manager = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/" + adapter), "org.bluez.AdvertisementMonitorManager1")
manager.RegisterMonitor(dbus.ObjectPath(ROOT), reply_handler=lambda: None,
                        error_handler=lambda e: finish("register-failed " + e.get_dbus_name()))
GLib.timeout_add_seconds(timeout, lambda: finish("no-answer"))
loop.run()
alive = bus.name_has_owner("org.bluez")
print("bluetoothd-alive" if alive else "bluetoothd-gone", flush=True)
if alive and outcome[0] == "activated":
    manager.UnregisterMonitor(dbus.ObjectPath(ROOT))
