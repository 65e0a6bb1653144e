"""Runs the same probe sequence that Tests/VM/guest/capture-reference.sh runs against real
bluetoothd, here against whatever owns org.bluez on DBUS_SYSTEM_BUS_ADDRESS (the simulator).
Usage: drive_probe.py PROBE_SCRIPT OUT.jsonl DEVICE_NAME"""
import subprocess
import sys
import time

import dbus

probe, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
bus = dbus.SystemBus()


def objects():
    manager = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    return manager.GetManagedObjects()


def find_device():
    for path, interfaces in objects().items():
        device = interfaces.get("org.bluez.Device1")
        if device and str(device.get("Name", "")) == name:
            return str(path)
    return None


adapter = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/hci0"), "org.bluez.Adapter1")
# This process keeps the discovery session, as bluetoothctl does in the VM script.
adapter.StartDiscovery()
device = None
for _ in range(100):
    device = find_device()
    if device:
        break
    time.sleep(0.1)
if not device:
    sys.exit("drive_probe: device %r never discovered" % name)


def run(step):
    subprocess.run([sys.executable, probe, out, device, step], check=True)


def busctl_like(path, interface, method, *args):
    getattr(dbus.Interface(bus.get_object("org.bluez", path), interface), method)(*args)


open(out, "w").close()
busctl_like(device, "org.bluez.Device1", "Connect")
# Connect answers with the link up; the capture waits for ServicesResolved before probing, so here too.
props = dbus.Interface(bus.get_object("org.bluez", device), "org.freedesktop.DBus.Properties")
for _ in range(200):
    if props.Get("org.bluez.Device1", "ServicesResolved"):
        break
    time.sleep(0.05)
run("connected")
busctl_like(device, "org.bluez.Device1", "Disconnect")
time.sleep(0.3)
run("disconnected")
props = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/hci0"), "org.freedesktop.DBus.Properties")
props.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(False))
time.sleep(0.3)
run("poweredoff")
