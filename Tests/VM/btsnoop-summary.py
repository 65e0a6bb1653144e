#!/usr/bin/env python3
"""Prints the LE link-layer story of a VM scenario's hci.btsnoop, one line per HCI packet that
matters for scanning, advertising and connecting, with its time and controller.

The host's btmon (5.66) crashes part-way through these captures (on an ATT packet), so the
connection steps after the first one are lost; this reads the btsnoop monitor format directly
and decodes only the commands and events below.

Usage: Tests/VM/btsnoop-summary.py OUTDIR/hci.btsnoop [--all]
  --all  every command and event, not only the LE scan/advertise/connect ones
"""

import struct
import sys

COMMANDS = {
    0x0406: "Disconnect",
    0x200A: "LE Set Advertising Enable",
    0x200B: "LE Set Scan Parameters",
    0x200C: "LE Set Scan Enable",
    0x200D: "LE Create Connection",
    0x200E: "LE Create Connection Cancel",
    0x2010: "LE Clear Accept List",
    0x2011: "LE Add Device To Accept List",
    0x2012: "LE Remove Device From Accept List",
    0x2027: "LE Add Device To Resolving List",
    0x2029: "LE Clear Resolving List",
    0x202D: "LE Set Address Resolution Enable",
    0x2036: "LE Set Extended Advertising Parameters",
    0x2039: "LE Set Extended Advertising Enable",
    0x203C: "LE Remove Advertising Set",
    0x2041: "LE Set Extended Scan Parameters",
    0x2042: "LE Set Extended Scan Enable",
    0x2043: "LE Extended Create Connection",
}
LE_EVENTS = {
    0x01: "LE Connection Complete",
    0x02: "LE Advertising Report",
    0x0A: "LE Enhanced Connection Complete",
    0x0D: "LE Extended Advertising Report",
    0x12: "LE Advertising Set Terminated",
}
EPOCH_DELTA_US = 0x00DCDDB30F2F8000  # btsnoop time base (year 0) to the Unix epoch


def address(raw):
    return ":".join(f"{b:02X}" for b in reversed(raw))


def describe_command(opcode, params):
    name = COMMANDS.get(opcode)
    if name is None:
        return None, f"command 0x{opcode:04x}"
    detail = ""
    if opcode in (0x200A, 0x200C) and params:
        detail = f"enable={params[0]}"
    elif opcode == 0x2042 and params:
        detail = f"enable={params[0]} filter_dup={params[1] if len(params) > 1 else '?'}"
    elif opcode == 0x2039 and params:
        detail = f"enable={params[0]} sets={params[1] if len(params) > 1 else '?'}"
    elif opcode == 0x200D and len(params) >= 12:
        detail = f"filter={params[4]} peer={address(params[6:12])} type={params[5]}"
    elif opcode == 0x2043 and len(params) >= 10:
        detail = f"filter={params[0]} own={params[1]} peer={address(params[3:9])} type={params[2]}"
    elif opcode in (0x2011, 0x2012) and len(params) >= 7:
        detail = f"{address(params[1:7])} type={params[0]}"
    elif opcode == 0x0406 and len(params) >= 3:
        detail = f"handle={struct.unpack_from('<H', params)[0]} reason=0x{params[2]:02x}"
    return name, detail


def describe_event(code, params):
    if code == 0x05 and len(params) >= 4:
        handle = struct.unpack_from("<H", params, 1)[0]
        return "Disconnection Complete", f"status=0x{params[0]:02x} handle={handle} reason=0x{params[3]:02x}"
    if code == 0x0E and len(params) >= 4:
        opcode = struct.unpack_from("<H", params, 1)[0]
        if opcode not in COMMANDS:
            return None, ""
        return "Command Complete", f"{COMMANDS[opcode]} status=0x{params[3]:02x}"
    if code == 0x0F and len(params) >= 4:
        opcode = struct.unpack_from("<H", params, 2)[0]
        if opcode not in COMMANDS:
            return None, ""
        return "Command Status", f"{COMMANDS[opcode]} status=0x{params[0]:02x}"
    if code == 0x3E and params:
        sub = params[0]
        name = LE_EVENTS.get(sub)
        if name is None:
            return None, f"LE meta 0x{sub:02x}"
        if sub in (0x01, 0x0A) and len(params) >= 12:
            handle = struct.unpack_from("<H", params, 2)[0]
            return name, f"status=0x{params[1]:02x} handle={handle} role={params[4]} peer={address(params[6:12])}"
        if sub == 0x02 and len(params) >= 10:
            return name, f"type={params[2]} peer={address(params[4:10])}"
        if sub == 0x0D and len(params) >= 11:
            props = struct.unpack_from("<H", params, 2)[0]
            return name, f"props=0x{props:04x} peer={address(params[5:11])}"
        return name, ""
    return None, f"event 0x{code:02x}"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    show_all = "--all" in sys.argv[2:]
    data = open(sys.argv[1], "rb").read()
    if data[:8] != b"btsnoop\0":
        sys.exit(f"{sys.argv[1]}: not a btsnoop file")
    datalink = struct.unpack_from(">I", data, 12)[0]
    if datalink != 2001:
        sys.exit(f"{sys.argv[1]}: datalink {datalink}, expected 2001 (btmon -w)")
    offset = 16
    first = None
    while offset + 24 <= len(data):
        _, included, flags, _, stamp = struct.unpack_from(">IIIIq", data, offset)
        packet = data[offset + 24 : offset + 24 + included]
        offset += 24 + included
        if len(packet) < included:
            break
        index, kind = flags >> 16, flags & 0xFFFF
        seconds = (stamp - EPOCH_DELTA_US) / 1e6
        first = seconds if first is None else first
        when = f"{seconds - first:10.6f}"
        if kind == 2 and len(packet) >= 3:
            opcode = struct.unpack_from("<H", packet)[0]
            name, detail = describe_command(opcode, packet[3:])
            if name or show_all:
                print(f"{when} hci{index} > {name or detail} {detail if name else ''}".rstrip())
        elif kind == 3 and len(packet) >= 2:
            name, detail = describe_event(packet[0], packet[2:])
            if name or (show_all and detail):
                print(f"{when} hci{index} < {name or detail} {detail if name else ''}".rstrip())
        elif kind == 12:
            print(f"{when} note: {packet.rstrip(bytes([0])).decode(errors='replace')}")


if __name__ == "__main__":
    main()
