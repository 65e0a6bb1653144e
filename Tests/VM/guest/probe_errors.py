"""Calls real bluetoothd with valid and invalid requests and records each reply or error
(name and message) as JSON lines, as reference data for the simulator's fidelity."""
import json
import os
import re
import sys
import time

import dbus

bus = dbus.SystemBus()
out = open(sys.argv[1], "a")
device = sys.argv[2]
# The central adapter (the VM's capture uses whichever controller the example server did not take).
adapter = os.environ.get("PROBE_ADAPTER", "/org/bluez/hci0")
# Characteristics of BlueZ's example server that need encryption or Secure Connections: an unpaired
# access starts pairing, which would change the bond state the rest of the probe expects
# (scenario-security-raise.sh measures it on its own).
NEEDS_SECURITY = {"12345678-1234-5678-1234-56789abcdef3", "12345678-1234-5678-1234-56789abcdef5"}


def shown(reply):
    """The reply's repr without the per-run object address of a passed file descriptor (so that a
    fresh capture differs from the last one only where bluetoothd's answers did)."""
    return re.sub(r"<dbus.UnixFd object at 0x[0-9a-f]+>", "<dbus.UnixFd>", repr(reply))


def obj(path):
    return bus.get_object("org.bluez", path)


def record(label, path, interface, method, *args, **kwargs):
    entry = {"label": label, "path": path, "interface": interface, "method": method}
    try:
        reply = getattr(dbus.Interface(obj(path), interface), method)(*args, **kwargs)
        if isinstance(reply, tuple):
            reply = list(reply)
        entry["reply"] = shown(reply)
    except dbus.exceptions.DBusException as error:
        entry["error"] = error.get_dbus_name()
        entry["message"] = error.get_dbus_message()
    except Exception as error:  # client-side marshalling errors
        entry["client_error"] = repr(error)
    out.write(json.dumps(entry) + "\n")
    out.flush()


def record_raw(label, path, interface, method, signature, args):
    """Like record, but sends exactly `signature` (no introspection, so no client-side check)."""
    entry = {"label": label, "path": path, "interface": interface, "method": method, "signature": signature}
    try:
        reply = bus.call_blocking("org.bluez", path, interface, method, signature, args)
        entry["reply"] = shown(reply)
    except dbus.exceptions.DBusException as error:
        entry["error"] = error.get_dbus_name()
        entry["message"] = error.get_dbus_message()
    out.write(json.dumps(entry) + "\n")
    out.flush()


def tree():
    manager = dbus.Interface(obj("/"), "org.freedesktop.DBus.ObjectManager")
    return manager.GetManagedObjects()


step = sys.argv[3]
if step == "connected":
    record("connect again while connected", device, "org.bluez.Device1", "Connect")
    objects = tree()
    for path in sorted(objects):
        if not path.startswith(device + "/"):
            continue
        owner = path.rsplit("/", 1)[0] if "org.bluez.GattDescriptor1" in objects[path] else path
        if str(objects.get(owner, {}).get("org.bluez.GattCharacteristic1", {}).get("UUID", "")) in NEEDS_SECURITY:
            continue
        if "org.bluez.GattCharacteristic1" in objects[path]:
            flags = [str(f) for f in objects[path]["org.bluez.GattCharacteristic1"]["Flags"]]
            label = "char " + str(objects[path]["org.bluez.GattCharacteristic1"]["UUID"]) + " flags=" + ",".join(flags)
            iface = "org.bluez.GattCharacteristic1"
            record(label + " ReadValue", path, iface, "ReadValue", dbus.Dictionary({}, signature="sv"))
            record(label + " ReadValue offset 200", path, iface, "ReadValue", dbus.Dictionary({"offset": dbus.UInt16(200)}, signature="sv"))
            record(label + " WriteValue request", path, iface, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), dbus.Dictionary({"type": "request"}, signature="sv"))
            record(label + " WriteValue command", path, iface, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), dbus.Dictionary({"type": "command"}, signature="sv"))
            record(label + " WriteValue bad type", path, iface, "WriteValue", dbus.Array([dbus.Byte(1)], signature="y"), dbus.Dictionary({"type": "bogus"}, signature="sv"))
            record(label + " WriteValue 600 bytes", path, iface, "WriteValue", dbus.Array([dbus.Byte(1)] * 600, signature="y"), dbus.Dictionary({}, signature="sv"))
            record(label + " WriteValue 512 bytes", path, iface, "WriteValue", dbus.Array([dbus.Byte(1)] * 512, signature="y"), dbus.Dictionary({}, signature="sv"))
            record(label + " StartNotify", path, iface, "StartNotify")
            record(label + " StartNotify again", path, iface, "StartNotify")
            record(label + " StopNotify", path, iface, "StopNotify")
            record(label + " StopNotify again", path, iface, "StopNotify")
            record(label + " AcquireNotify", path, iface, "AcquireNotify", dbus.Dictionary({}, signature="sv"))
            record(label + " AcquireWrite", path, iface, "AcquireWrite", dbus.Dictionary({}, signature="sv"))
            record_raw(label + " ReadValue wrong signature", path, iface, "ReadValue", "s", ["x"])
        if "org.bluez.GattDescriptor1" in objects[path]:
            iface = "org.bluez.GattDescriptor1"
            label = "desc " + str(objects[path][iface]["UUID"]) + " of " + str(objects[owner]["org.bluez.GattCharacteristic1"]["UUID"])
            record(label + " ReadValue", path, iface, "ReadValue", dbus.Dictionary({}, signature="sv"))
            record(label + " WriteValue", path, iface, "WriteValue", dbus.Array([dbus.Byte(1), dbus.Byte(0)], signature="y"), dbus.Dictionary({}, signature="sv"))
    record("unknown method", device, "org.bluez.Device1", "Frobnicate")
    record_raw("Connect wrong signature", device, "org.bluez.Device1", "Connect", "s", ["x"])
    record_raw("Get wrong signature", device, "org.freedesktop.DBus.Properties", "Get", "s", ["org.bluez.Device1"])
    record_raw("Introspect wrong signature", device, "org.freedesktop.DBus.Introspectable", "Introspect", "s", ["x"])
    record_raw("GetManagedObjects wrong signature", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", "s", ["x"])
    record("Get unknown property", device, "org.freedesktop.DBus.Properties", "Get", "org.bluez.Device1", "Nope")
    record("Set read-only property", device, "org.freedesktop.DBus.Properties", "Set", "org.bluez.Device1", "Address", dbus.String("00:00:00:00:00:00", variant_level=1))
    record("Set Alias", device, "org.freedesktop.DBus.Properties", "Set", "org.bluez.Device1", "Alias", dbus.String("Renamed", variant_level=1))
    props = "org.freedesktop.DBus.Properties"
    record("Get Battery1 Percentage", device, props, "Get", "org.bluez.Battery1", "Percentage")
    record("ConnectProfile heart rate", device, "org.bluez.Device1", "ConnectProfile", "0000180d-0000-1000-8000-00805f9b34fb")
    record("DisconnectProfile heart rate", device, "org.bluez.Device1", "DisconnectProfile", "0000180d-0000-1000-8000-00805f9b34fb")
    record("Get adapter PowerState", adapter, props, "Get", "org.bluez.Adapter1", "PowerState")
    record("Get device AdvertisingFlags", device, props, "Get", "org.bluez.Device1", "AdvertisingFlags")
    record("Set Powered with a string", adapter, props, "Set", "org.bluez.Adapter1", "Powered", dbus.String("on", variant_level=1))
    record("Set Pairable true", adapter, props, "Set", "org.bluez.Adapter1", "Pairable", dbus.Boolean(True, variant_level=1))
    record("Get Pairable after Set", adapter, props, "Get", "org.bluez.Adapter1", "Pairable")
    record("Set Pairable false", adapter, props, "Set", "org.bluez.Adapter1", "Pairable", dbus.Boolean(False, variant_level=1))
    record("Set DiscoverableTimeout 0", adapter, props, "Set", "org.bluez.Adapter1", "DiscoverableTimeout", dbus.UInt32(0, variant_level=1))
    record("Set Discoverable true", adapter, props, "Set", "org.bluez.Adapter1", "Discoverable", dbus.Boolean(True, variant_level=1))
    record("Get Discoverable after Set", adapter, props, "Get", "org.bluez.Adapter1", "Discoverable")
    record("Set Discoverable false", adapter, props, "Set", "org.bluez.Adapter1", "Discoverable", dbus.Boolean(False, variant_level=1))
    record("Set DiscoverableTimeout 180", adapter, props, "Set", "org.bluez.Adapter1", "DiscoverableTimeout", dbus.UInt32(180, variant_level=1))
    record("Get DiscoverableTimeout", adapter, props, "Get", "org.bluez.Adapter1", "DiscoverableTimeout")
elif step == "disconnected":
    objects = tree()
    record("disconnect while disconnected", device, "org.bluez.Device1", "Disconnect")
    chars = [p for p in sorted(objects) if p.startswith(device + "/") and "org.bluez.GattCharacteristic1" in objects[p]]
    if chars:
        record("ReadValue after disconnect", chars[0], "org.bluez.GattCharacteristic1", "ReadValue", dbus.Dictionary({}, signature="sv"))
    else:
        out.write(json.dumps({"label": "after disconnect the GATT objects are gone", "objects": sorted(p for p in objects if p.startswith(device))}) + "\n")
    record("StopDiscovery without session", adapter, "org.bluez.Adapter1", "StopDiscovery")
    record("SetDiscoveryFilter bad transport", adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", dbus.Dictionary({"Transport": "bogus"}, signature="sv"))
    record("SetDiscoveryFilter ok", adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", dbus.Dictionary({"Transport": "le", "RSSI": dbus.Int16(-90), "DuplicateData": True, "UUIDs": dbus.Array(["180d"], signature="s")}, signature="sv"))
    record("GetDiscoveryFilters", adapter, "org.bluez.Adapter1", "GetDiscoveryFilters")
    record("RemoveDevice unknown", adapter, "org.bluez.Adapter1", "RemoveDevice", dbus.ObjectPath(adapter + "/dev_11_22_33_44_55_66"))
    record_raw("SetDiscoveryFilter wrong signature", adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", "s", ["le"])
    record("StartDiscovery", adapter, "org.bluez.Adapter1", "StartDiscovery")
    record("StartDiscovery twice same client", adapter, "org.bluez.Adapter1", "StartDiscovery")
    record("StopDiscovery", adapter, "org.bluez.Adapter1", "StopDiscovery")
elif step == "poweredoff":
    record("StartDiscovery powered off", adapter, "org.bluez.Adapter1", "StartDiscovery")
    record("Set Discoverable powered off", adapter, "org.freedesktop.DBus.Properties", "Set", "org.bluez.Adapter1", "Discoverable", dbus.Boolean(True, variant_level=1))
    record("Connect powered off", device, "org.bluez.Device1", "Connect")
    record("RemoveDevice powered off", adapter, "org.bluez.Adapter1", "RemoveDevice", dbus.ObjectPath(device))
