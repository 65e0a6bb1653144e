"""Oral-B corpus for the differential suite (see oracle.py): manufacturer data of company 0x00DC
(9 and 11 bytes) built from the toothbrush advertisement layout, decoded by oralb-ble (pinned in
scripts/setup.sh).

Every model id of the tables (and unknown ones), every state and mode of the tables, the status
byte over all 256 values, brushing times, sector bytes 0-7 with and without the sector count;
edge cases: states and modes missing from the tables.
"""

import random

from habluetooth.models import BluetoothServiceInfoBleak
from oralb_ble import OralBBluetoothDeviceData
from oralb_ble.parser import IO_SERIES_MODES, MODEL_ID_TO_MODEL, SMART_SERIES_MODES, STATES

COMPANY = 0x00DC


def reference(address, data):
    info = BluetoothServiceInfoBleak(
        name="Oral-B Toothbrush", address=address, rssi=-60, manufacturer_data={COMPANY: data}, service_data={},
        service_uuids=[], source="local", device=None, advertisement=None, connectable=False, time=0.0,
        tx_power=None)
    update = OralBBluetoothDeviceData().update(info)
    values = {}
    for key, value in update.entity_values.items():
        if key.key == "signal_strength":
            continue
        found = value.native_value
        if key.key == "sector":
            found = 0 if found == "no sector" else int(found.split()[-1])
        values[key.key] = found
    for key, value in update.binary_entity_values.items():
        values["binary:" + key.key] = bool(value.native_value)
    return values or None


def corpus(rng: random.Random, count, random_address):
    models = sorted(MODEL_ID_TO_MODEL)
    for _ in range(count):
        address = random_address(rng)
        model = rng.choice(models) if rng.random() < 0.95 else rng.choice([3, 100, 200, 255])
        modes = IO_SERIES_MODES if 48 <= model <= 54 else SMART_SERIES_MODES
        case = "plain"
        state = rng.choice([3, 3, 3] + sorted(STATES))
        mode = rng.choice(sorted(modes))
        if rng.random() < 0.03:
            state = rng.choice([s for s in range(256) if s not in STATES])
            case = "unknown_state"
        elif rng.random() < 0.03:
            mode = rng.choice([m for m in range(256) if m not in modes])
            case = "unknown_mode"
        data = bytes([rng.randrange(1, 5), model, rng.randrange(256), state, rng.randrange(256),
                      rng.randrange(0, 5), rng.randrange(0, 60), mode, rng.randrange(256)])
        if rng.random() < 0.6:
            data += bytes([rng.randrange(0, 60), rng.choice([0, 4, 6, rng.randrange(256)])])
        oracle = reference(address, data)
        yield {"family": "oralb", "case": case, "hex": data.hex(), "address": address, "key": None,
               "manufacturer_data": {str(COMPANY): data.hex()}, "oracle": oracle}
