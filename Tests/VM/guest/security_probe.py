"""Reads a characteristic that needs encryption from an unpaired device over real bluetoothd and
records what happens as one JSON line: the reply or the error (name and message) and when it came,
when the link dropped and when bluetoothd removed the device object (seconds from the read, or
absent), and whether the device is paired and bonded afterwards. bluetoothd answers the peer's
Insufficient Encryption by raising the link's security, which pairs through the default agent
(src/shared/att.c). The read waits at most READ_TIMEOUT seconds for its answer; after it, the probe
watches a dropped link's device for up to WATCH seconds more (bluetoothd removes a temporary device once it is
disconnected, and 5.82 does so while a read it never answers is pending).
Usage: security_probe.py OUT ADAPTER_PATH DEVICE_PATH CHARACTERISTIC_UUID LABEL"""
import json
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

READ_TIMEOUT = 30
WATCH = 35

out, adapter, device, uuid, label = sys.argv[1:6]
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
PROPS = "org.freedesktop.DBus.Properties"


def objects():
    manager = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    return manager.GetManagedObjects()


def until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    sys.exit("security_probe: %s not within %d s" % (what, seconds))


def device_property(name):
    return bus.get_object("org.bluez", device).Get("org.bluez.Device1", name, dbus_interface=PROPS)


# The discovery session belongs to this process; the example advertises (its guest toggles it).
adapter_object = dbus.Interface(bus.get_object("org.bluez", adapter), "org.bluez.Adapter1")
if device not in objects():
    adapter_object.SetDiscoveryFilter({"Transport": "le"})
    adapter_object.StartDiscovery()
    until(lambda: device in objects(), 60, "the device")
    adapter_object.StopDiscovery()
# bluetoothd can answer a connect "le-connection-abort-by-local" when the controller dropped the
# attempt (seen once in a clean-clone CI run, 2026-12-04, on the probe right after the rejected
# pairing's link went down); a client connects again then, as bleak does.
for attempt in range(3):
    try:
        dbus.Interface(bus.get_object("org.bluez", device), "org.bluez.Device1").Connect(timeout=60)
        break
    except dbus.exceptions.DBusException as error:
        if attempt == 2 or "le-connection-abort-by-local" not in str(error.get_dbus_message()):
            raise
        print("security_probe: connect aborted by the controller; connecting again", flush=True)
        time.sleep(1)
until(lambda: bool(device_property("ServicesResolved")), 30, "ServicesResolved")
path = next(
    p for p, interfaces in objects().items()
    if p.startswith(device + "/") and interfaces.get("org.bluez.GattCharacteristic1", {}).get("UUID") == uuid)
entry = {"label": label, "characteristic": uuid}
loop = GLib.MainLoop()
started = time.monotonic()


def since():
    return round(time.monotonic() - started, 2)


def answered(key, value):
    entry[key] = value
    entry["answered_after"] = since()


def failed(error):
    entry["message"] = error.get_dbus_message()
    answered("error", error.get_dbus_name())


def gone():
    return device not in objects()


def connected():
    try:
        return bool(device_property("Connected"))
    except dbus.exceptions.DBusException as error:
        if error.get_dbus_name() != "org.freedesktop.DBus.Error.UnknownObject":
            raise
        return False


def watch():
    if "disconnected_after" not in entry and not connected():
        entry["disconnected_after"] = since()
    if "removed_after" not in entry and gone():
        entry["removed_after"] = since()
    if "answered_after" in entry:
        after = since() - entry["answered_after"]
        # Done: the device is gone, or the link still up 2 s after the answer (kept), or WATCH over.
        if "removed_after" in entry or ("disconnected_after" not in entry and after > 2) or after > WATCH:
            loop.quit()
            return False
    return True


dbus.Interface(bus.get_object("org.bluez", path), "org.bluez.GattCharacteristic1").ReadValue(
    {}, timeout=READ_TIMEOUT, reply_handler=lambda value: answered("reply", [int(b) for b in value]),
    error_handler=failed)
GLib.timeout_add(100, watch)
loop.run()
if "removed_after" in entry:
    entry["paired"] = entry["bonded"] = entry["connected"] = False
else:
    entry["paired"] = bool(device_property("Paired"))
    entry["bonded"] = bool(device_property("Bonded"))
    entry["connected"] = bool(device_property("Connected"))
with open(out, "a") as file:
    file.write(json.dumps(entry) + "\n")
print("security_probe:", json.dumps(entry), flush=True)
