"""SensorPush corpus for the differential suite (see oracle.py): HT.w, HTP.xw and TC.x
advertisements (service ef090000-…-0ab0, readings packed in mixed radix into the manufacturer
data including its company-id bytes) and HT1 advertisements (service …-0aa9, the Sensirion words),
built from the format as SensorPush's devices send it, decoded by sensorpush-ble (pinned in
scripts/setup.sh).

Every reading over its whole range (digits 0…n), with and without the model in the local name;
edge cases: pages 1-3 (no readings), an HT1 word with another device type.
"""

import random

from habluetooth.models import BluetoothServiceInfoBleak
from sensorpush_ble import SensorPushBluetoothDeviceData

V2 = "ef090000-11d6-42ba-93b8-9dd7ec090ab0"
HT1 = "ef090000-11d6-42ba-93b8-9dd7ec090aa9"

# Device type -> model, data length after the company id, the digits' sizes (steps + 1).
MODELS = {64: ("HTP.xw", 5, [72001, 40001, 95001]), 65: ("HT.w", 3, [66001, 40001]), 66: ("TC.x", 2, [32001])}


def reference(address, name, uuid, company, data):
    info = BluetoothServiceInfoBleak(
        name=name, address=address, rssi=-60, manufacturer_data={company: data}, service_data={},
        service_uuids=[uuid], source="local", device=None, advertisement=None, connectable=False, time=0.0,
        tx_power=None)
    update = SensorPushBluetoothDeviceData().update(info)
    values = {key.key: value.native_value for key, value in update.entity_values.items()
              if key.key != "signal_strength"}
    return values or None


def corpus(rng: random.Random, count, random_address):
    for _ in range(count):
        address = random_address(rng)
        if rng.random() < 0.2:
            humidity = rng.randrange(4096)
            temperature = rng.randrange(16384)
            device_type = 1 if rng.random() < 0.97 else rng.choice([0, 2, 5, 31])
            word = humidity | (temperature << 12) | (device_type << 26) | (rng.randrange(2) << 31)
            raw = word.to_bytes(4, "little")
            case = "ht1" if device_type == 1 else "ht1_other_type"
            uuid, name = HT1, "s"
        else:
            device_type = rng.choice(list(MODELS))
            model, length, radices = MODELS[device_type]
            packed, scale = 0, 1
            for radix in radices:
                packed += rng.randrange(radix) * scale
                scale *= radix
            page = 0 if rng.random() < 0.95 else rng.randrange(1, 4)
            raw = bytes([((device_type - 64) << 2) | page]) + packed.to_bytes(length + 1, "little")
            case = model.lower().replace(".", "_") + ("" if page == 0 else "_page")
            uuid, name = V2, rng.choice([f"SensorPush {model} {rng.randrange(0x10000):04X}", "SensorPush"])
        company = int.from_bytes(raw[:2], "little")
        data = raw[2:]
        oracle = reference(address, name, uuid, company, data)
        yield {"family": "sensorpush", "case": case, "hex": raw.hex(), "address": address, "key": None,
               "manufacturer_data": {str(company): data.hex()}, "service_uuids": [uuid], "oracle": oracle}
