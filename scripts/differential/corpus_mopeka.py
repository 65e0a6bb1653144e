"""Mopeka corpus for the differential suite (see oracle.py): Mopeka Pro advertisements
(manufacturer data of company 0x0059 with service 0xFEE5 listed, 10 bytes) built from the
sensor's advertisement layout, decoded by mopeka-iot-ble with its default medium, propane
(pinned in scripts/setup.sh).

Every device type, battery and temperature bytes over their whole range, the button bit, raw
levels over 14 bits with every reading quality, random accelerometer bytes; edge cases: unknown
device types and wrong lengths (both sides publish nothing).
"""

import random

from habluetooth.models import BluetoothServiceInfoBleak
from mopeka_iot_ble import MopekaIOTBluetoothDeviceData
from mopeka_iot_ble.parser import DEVICE_TYPES

COMPANY = 0x0059
SERVICE = "0000fee5-0000-1000-8000-00805f9b34fb"


def reference(address, data):
    info = BluetoothServiceInfoBleak(
        name="", address=address, rssi=-60, manufacturer_data={COMPANY: data}, service_data={},
        service_uuids=[SERVICE], source="local", device=None, advertisement=None, connectable=False, time=0.0,
        tx_power=None)
    update = MopekaIOTBluetoothDeviceData().update(info)
    values = {key.key: value.native_value for key, value in update.entity_values.items()
              if key.key != "signal_strength" and value.native_value is not None}
    for key, value in update.binary_entity_values.items():
        values["binary:" + key.key] = bool(value.native_value)
    return values or None


def corpus(rng: random.Random, count, random_address):
    types = sorted(DEVICE_TYPES)
    for _ in range(count):
        address = random_address(rng)
        case = "plain"
        device_type = rng.choice(types)
        if rng.random() < 0.02:
            device_type = rng.choice([0, 1, 2, 7, 0x0D, 0x20, 0xFF])
            case = "unknown_type"
        level = rng.randrange(1 << 14) | (rng.randrange(4) << 14)
        data = bytes([device_type, rng.randrange(256), rng.randrange(256)]) + level.to_bytes(2, "little") \
            + bytes.fromhex(address.replace(":", ""))[3:] + bytes([rng.randrange(256), rng.randrange(256)])
        if rng.random() < 0.02:
            data = data[:rng.randrange(1, 10)] if rng.random() < 0.5 else data + b"\x00"
            case = "wrong_length"
        oracle = reference(address, data)
        yield {"family": "mopeka", "case": case, "hex": data.hex(), "address": address, "key": None,
               "manufacturer_data": {str(COMPANY): data.hex()}, "service_uuids": ["fee5"], "oracle": oracle}
