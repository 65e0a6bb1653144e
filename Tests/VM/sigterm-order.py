#!/usr/bin/env python3
"""Reduces a dbus-monitor capture of bluetoothd's signals (Tests/VM/guest/scenario-sigterm-capture.sh)
to one line per signal, in bus order: `NameOwnerChanged lost|acquired`, `InterfacesAdded PATH
[interfaces] Powered=…`, `InterfacesRemoved PATH [interfaces]`, `PropertiesChanged PATH
Name=value,…` (booleans only; other values as `…`, invalidated names as `-Name`). Paths are
given by role: the gateway's adapter is `GW`, the peripheral's `PERIPHERAL`, the gateway's device
(DEVICE, its object path) `GW/DEV`, any other device `…/OTHER`; GATT objects below a device keep
their tail (`GW/DEV/service0015/char0016`).
Usage: sigterm-order.py MONITOR_FILE GW_ADAPTER(hciN) DEVICE [--gateway-only]"""
import re
import sys

DEVICE = ""


def role(path, gw, device):
    if path == device or path.startswith(device + "/"):
        path = "/DEV" + path[len(device):]
        return "GW" + path
    path = re.sub(r"/dev_[0-9A-F_]{17}", "/OTHER", path)
    return path.replace("/org/bluez/" + gw, "GW").replace("/org/bluez/hci0", "PERIPHERAL").replace(
        "/org/bluez/hci1", "PERIPHERAL")


def blocks(lines):
    block = []
    for line in lines:
        if line.startswith(("signal ", "method call ", "method return ", "error ")):
            if block:
                yield block
            block = [line]
        elif block:
            block.append(line)
    if block:
        yield block


def describe(block, gw):
    head = block[0]
    member = re.search(r"member=(\w+)", head)
    if not member or not head.startswith("signal "):
        return None
    member = member.group(1)
    body = "\n".join(block[1:])
    strings = re.findall(r'string "([^"]*)"', body)
    if member == "NameOwnerChanged":
        if not strings or strings[0] != "org.bluez":
            return None
        return "NameOwnerChanged " + ("lost" if strings[-1] == "" else "acquired")
    if member in ("InterfacesAdded", "InterfacesRemoved"):
        path = re.search(r'object path "([^"]+)"', body).group(1)
        interfaces = sorted(s for s in strings if s.startswith("org.bluez."))
        text = "%s %s %s" % (member, role(path, gw, DEVICE), ",".join(interfaces))
        if member == "InterfacesAdded" and "org.bluez.Adapter1" in interfaces:
            powered = re.search(r'string "Powered"\s*variant\s*boolean (\w+)', body)
            if powered:
                text += " Powered=" + powered.group(1)
        return text
    if member == "PropertiesChanged":
        path = re.search(r"path=([^;]+);", head).group(1)
        # The first array holds the changed properties (a name, then its variant), the second the
        # invalidated names.
        arrays = body.split("array [")[1:]
        changed = re.findall(r'string "(\w+)"\s*variant\s*(boolean (\w+))?', arrays[0] if arrays else "")
        parts = [name + "=" + (value or "…") for name, _, value in changed]
        if len(arrays) > 1:
            parts += ["-" + name for name in re.findall(r'string "(\w+)"', arrays[-1])]
        return "PropertiesChanged %s %s" % (role(path, gw, DEVICE), ",".join(parts))
    return None


def main():
    global DEVICE
    gw = sys.argv[2]
    DEVICE = sys.argv[3]
    only = "--gateway-only" in sys.argv
    with open(sys.argv[1]) as handle:
        lines = handle.read().splitlines()
    for block in blocks(lines):
        text = describe(block, gw)
        if text is None:
            continue
        if only and not (text.startswith("NameOwnerChanged") or " GW" in text):
            continue
        print(text)


main()
