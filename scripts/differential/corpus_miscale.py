"""Xiaomi scale corpus for the differential suite (see oracle.py): service data 0x181D (Mi Smart
Scale, 10 bytes) and 0x181B (Mi Body Composition Scale, 13 bytes) built from the scales' layout
(control bits, weight, the scale's clock, v2 impedance), decoded by xiaomi-ble (pinned in
scripts/setup.sh).

Both versions alike; every control bit at random (kilograms, pounds, jin, both unit bits, stable,
load removed, v2 impedance measured, the reserved bits), weights over the whole uint16 range with
a tenth at zero, impedances over the whole range, valid clock values and a tenth with the clock
not set (year 0). Not compared: the clock (the reference skips it) and `mass`, the reference's
copy of the weight once it is final (checked equal to `mass_non_stabilized` here).
"""

import random
import struct

from xiaomi_ble import XiaomiBluetoothDeviceData

from oracle import oracle_values, service_info

UUIDS = {1: "0000181d-0000-1000-8000-00805f9b34fb", 2: "0000181b-0000-1000-8000-00805f9b34fb"}


def reference(address, version, frame):
    values = oracle_values(XiaomiBluetoothDeviceData().update(service_info(address, UUIDS[version], frame))) or {}
    # The final weight is published twice by the reference; one copy is compared.
    if "mass" in values and values["mass"] == values.get("mass_non_stabilized"):
        del values["mass"]
    return values or None


def clock(rng):
    if rng.random() < 0.1:
        return bytes(7)
    return struct.pack("<HBBBBB", rng.randrange(2000, 2040), rng.randrange(1, 13), rng.randrange(1, 29),
                       rng.randrange(24), rng.randrange(60), rng.randrange(60))


def corpus(rng: random.Random, count, random_address):
    for _ in range(count):
        address = random_address(rng)
        version = rng.choice([1, 2])
        weight = 0 if rng.random() < 0.1 else rng.randrange(1, 0x10000)
        if version == 1:
            frame = bytes([rng.randrange(256)]) + struct.pack("<H", weight) + clock(rng)
        else:
            frame = bytes([rng.randrange(256), rng.randrange(256)]) + clock(rng) + \
                struct.pack("<HH", rng.randrange(0x10000), weight)
        case = f"v{version}" + ("_zero" if weight == 0 else "")
        yield {"family": "miscale", "case": case, "hex": frame.hex(), "address": address, "key": None,
               "service_data": {"181d" if version == 1 else "181b": frame.hex()},
               "oracle": reference(address, version, frame)}
