"""Qingping corpus for the differential suite (see oracle.py): service data 0xFDCD built from the
Qingping advertisement layout (frame control, device type, reversed address, `id, length, data`
objects), decoded by qingping-ble (pinned in scripts/setup.sh).

Every device type the reference knows, 1-5 distinct objects among temperature/humidity, battery
(0xFF: externally powered), door, pressure, motion with illuminance (also in event
advertisements, where the illuminance is not a reading), illuminance, light, PM2.5/PM10, CO2,
VOC index, noise, packet id and the capability bitmap; edge cases: unknown objects, an object of
the wrong length, frames cut inside an object.
"""

import random
import struct

from qingping_ble import QingpingBluetoothDeviceData
from qingping_ble.parser import DEVICE_TYPES

from oracle import service_info

UUID = "0000fdcd-0000-1000-8000-00805f9b34fb"


def values(update):
    """The reference's values by key (binary sensors as binary:<key>), without signal strength."""
    found = {}
    for key, value in update.entity_values.items():
        name = key.key[-1] if isinstance(key.key, tuple) else str(key.key)
        if name != "signal_strength":
            found[name] = value.native_value
    for key, value in update.binary_entity_values.items():
        name = key.key[-1] if isinstance(key.key, tuple) else str(key.key)
        found["binary:" + name] = bool(value.native_value)
    return found or None


def objects(rng):
    pool = {
        0x01: lambda: struct.pack("<hH", rng.randrange(-400, 1000), rng.randrange(0, 1001)),
        0x02: lambda: bytes([rng.choice([rng.randrange(0, 101), 0xFF])]),
        0x04: lambda: bytes([rng.randrange(0, 3)]),
        0x07: lambda: struct.pack("<H", rng.randrange(3000, 11000)),
        0x08: lambda: bytes([rng.randrange(0, 2)]) + rng.randrange(0, 1 << 24).to_bytes(3, "little"),
        0x09: lambda: struct.pack("<I", rng.randrange(0, 1 << 32)),
        0x0F: lambda: bytes([rng.randrange(256)]),
        0x11: lambda: bytes([rng.randrange(0, 2)]),
        0x12: lambda: struct.pack("<HH", rng.randrange(0, 1000), rng.randrange(0, 1000)),
        0x13: lambda: struct.pack("<H", rng.randrange(400, 10000)),
        0x15: lambda: struct.pack("<H", rng.randrange(1, 501)),
        0x18: lambda: struct.pack("<H", 0x0122),
        0x19: lambda: bytes([rng.randrange(30, 120)]),
    }
    # 0x08 and 0x09 both give illuminance: one of them per frame.
    left_out = rng.choice([0x08, 0x09])
    ids = [i for i in pool if i != left_out]
    chosen = rng.sample(ids, rng.randrange(1, 6))
    return [(i, pool[i]()) for i in chosen]


def corpus(rng: random.Random, count, random_address):
    types = sorted(DEVICE_TYPES)
    for _ in range(count):
        address = random_address(rng)
        event = rng.random() < 0.15
        control = 0x08 | (0x40 if event else 0) | (rng.randrange(2) << 7) | rng.randrange(4)
        frame = bytes([control, rng.choice(types)]) + bytes.fromhex(address.replace(":", ""))[::-1]
        body = objects(rng)
        case = "event" if event else "plain"
        edge = rng.random()
        if edge < 0.03:
            body.insert(rng.randrange(len(body) + 1), (rng.choice([0x03, 0x05, 0x0A, 0x1A, 0x30]),
                                                        bytes(rng.randrange(256) for _ in range(rng.randrange(4)))))
            case += "_unknown_object"
        elif edge < 0.05:
            body.append((0x01, b"\x01\x02\x03"))
            case += "_bad_object_length"
        frame += b"".join(bytes([i, len(d)]) + d for i, d in body)
        if edge > 0.98:
            frame = frame[:rng.randrange(10, len(frame))] if len(frame) > 10 else frame
            case += "_truncated"
        oracle = values(QingpingBluetoothDeviceData().update(service_info(address, UUID, frame)))
        yield {"family": "qingping", "case": case, "hex": frame.hex(), "address": address, "key": None,
               "service_data": {"fdcd": frame.hex()}, "oracle": oracle}
