#!/usr/bin/env python3
"""The reference side of the differential decoder suite (Tests/DifferentialTests).

Generates a seeded corpus of advertisement payloads per family from the public format
descriptions (MiBeacon: Xiaomi's object definition; BTHome v2: bthome.io/format), encrypts some
with a known key, decodes every payload with Home Assistant's reference parser (xiaomi-ble,
bthome-ble, pinned in scripts/setup.sh, run from .build/venv-oracles) and prints one JSON object
per line:

  {"family", "case", "hex", "address", "key", "oracle": {name: value} | null, ...}

`oracle` holds what the reference parser reported (sensor values under their key, binary sensors
under "binary:<key>"; null when it reported nothing, i.e. rejected the payload). The Swift side
decodes the same bytes and compares. `case` names how the payload was made, so that a known
disagreement can be tied to the cases where it is expected.

Usage: oracle.py [--count N] [--seed S] [--family mibeacon|bthome|govee|thermopro|inkbird ...]
"""

import argparse
import functools
import importlib
import json
import logging
import random
import struct
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESCCM
from habluetooth.models import BluetoothServiceInfoBleak

import manufacturer

logging.disable(logging.CRITICAL)

# Families with a corpus module of their own (scripts/differential/corpus_<family>.py).
ADVERTISEMENT_FAMILIES = ["switchbot", "qingping", "sensorpush", "oralb", "mopeka", "victron", "miscale"]

MIBEACON_UUID = "0000fe95-0000-1000-8000-00805f9b34fb"
BTHOME_UUID = "0000fcd2-0000-1000-8000-00805f9b34fb"


def service_info(address, uuid, payload):
    # The reference parsers only read the address and the service data (bthome-ble also `time`).
    return BluetoothServiceInfoBleak(
        name="test", address=address, rssi=-60, manufacturer_data={}, service_data={uuid: payload},
        service_uuids=[uuid], source="local", device=None, advertisement=None, connectable=False, time=0.0,
        tx_power=None)


def oracle_values(update):
    """What a reference parser reported, without the signal strength it adds to everything."""
    values = {}
    for key, value in update.entity_values.items():
        if key.key != "signal_strength":
            values[key.key] = value.native_value
    for key, value in update.binary_entity_values.items():
        values["binary:" + key.key] = bool(value.native_value)
    # Button, dimmer and cube events: the event type, and each of its properties (a dimmer's steps).
    for key, event in update.events.items():
        values["event:" + key.key] = event.event_type
        for name, value in (event.event_properties or {}).items():
            values["event:" + key.key + ":" + name] = value
    return values or None


def random_address(rng):
    # A public-looking address with a fixed (non-random) top: the reference checks the frame's
    # copy against it.
    return ":".join(f"{b:02X}" for b in [0xA4, 0xC1, 0x38] + [rng.randrange(256) for _ in range(3)])


# --- MiBeacon ------------------------------------------------------------------------------------

# Product ids by what the reference decodes for them (its device table; ids are Xiaomi's).
THERMOMETERS = [0x01AA, 0x055B, 0x0387, 0x0347, 0x0B48, 0x045B, 0x066F]
FLOORED_HUMIDITY = {0x055B, 0x0387}  # LYWSD03MMC, MHO-C401
PLANT = [0x0098, 0x03BC]  # HHCCJCY01, GCLS002
FORMALDEHYDE = [0x02DF]
DOOR = [0x098B]
FLOOD = [0x0863]
MOTION = [0x0A83]  # CGPR1: motion with illuminance in lux
# The button object 0x1001 (button, value, press type): product id -> how many buttons byte 0
# selects among and which press types the model sends.
BUTTONS = {
    0x0A8D: (1, [0, 1, 2]),  # RTCGQ02LM (motion sensor with a button)
    0x0863: (1, [0, 1, 2]),  # SJWS01LM
    0x0997: (1, [0, 1, 2]),  # JTYJGD03MI
    0x07BF: (1, [0, 1, 2]),  # YLAI003
    0x1568: (1, [0, 1, 2]),  # K9B-1BTN
    0x1569: (3, [0, 1, 2]),  # K9B-2BTN: left, right, both
    0x0DFD: (7, [0, 1, 2]),  # K9B-3BTN: every combination of three
    0x0153: (6, [0, 2]),  # YLYK01YL
    0x068E: (6, [0, 2]),  # YLYK01YL-FANCL
    0x04E6: (6, [0, 2]),  # YLYK01YL-VENFAN
    0x03BF: (9, [0, 2]),  # YLYB01YL-BHFRC
}
DIMMER = 0x03B6  # YLKG07YL/YLKG08YL
CUBE = 0x04E1  # XMMF01JQD
REMOTES = {0x0153}  # the reference also sets a power state from its on/off buttons


def button_object(rng, product):
    """One 0x1001 object (button, value, press type) as the model sends it."""
    if product == DIMMER:
        if rng.random() < 0.5:
            return (0x1001, bytes([rng.randrange(0, 2), rng.randrange(256), 3]))
        index = 0 if rng.random() < 0.5 else rng.randrange(1, 256)
        return (0x1001, bytes([index, rng.randrange(256), 4]))
    if product == CUBE:
        return (0x1001, bytes([rng.randrange(0, 2), 0, 0]))
    buttons, presses = BUTTONS[product]
    return (0x1001, bytes([rng.randrange(buttons), 0, rng.choice(presses)]))


def mibeacon_objects(rng, product):
    """Up to three (type id, data) the reference decodes for this product, each field once."""
    temperature = struct.pack("<h", rng.randrange(-400, 600))
    humidity = struct.pack("<H", rng.randrange(0, 1000))
    battery = bytes([rng.randrange(0, 101)])
    if product in THERMOMETERS:
        if rng.random() < 0.3:
            return rng.sample([(0x100D, temperature + humidity), (0x100A, battery)], rng.randrange(1, 3))
        pool = [(0x1004, temperature), (0x1006, humidity), (0x100A, battery)]
    elif product in PLANT:
        pool = [(0x1004, temperature), (0x1007, struct.pack("<I", rng.randrange(0, 1 << 24))[:3]),
                (0x1008, bytes([rng.randrange(0, 101)])), (0x1009, struct.pack("<H", rng.randrange(0, 65536))),
                (0x100A, battery)]
    elif product in FORMALDEHYDE:
        pool = [(0x1010, struct.pack("<H", rng.randrange(0, 65536))), (0x1004, temperature), (0x1006, humidity),
                (0x100A, battery)]
    elif product in DOOR:
        pool = [(0x1019, bytes([rng.randrange(0, 3)])), (0x1018, bytes([rng.randrange(0, 2)])), (0x100A, battery)]
    elif (product in BUTTONS and product not in FLOOD) or product in (DIMMER, CUBE):
        # One press per frame; a battery report beside it now and then.
        return [button_object(rng, product)] + ([(0x100A, battery)] if rng.random() < 0.2 else [])
    elif product in MOTION:
        pool = [(0x000F, struct.pack("<I", rng.randrange(0, 1 << 24))[:3]), (0x1018, bytes([rng.randrange(0, 2)])),
                (0x100A, battery)]
    else:
        # The flood sensor's leak object, and the generic switch, consumable and smoke objects (the
        # reference decodes those for any product).
        pool = [(0x1014, bytes([rng.randrange(0, 2)])), (0x1012, bytes([rng.randrange(0, 2)])),
                (0x1013, bytes([rng.randrange(0, 101)])), (0x1015, bytes([rng.randrange(0, 2)])), (0x100A, battery)]
        if product in BUTTONS:
            pool.append(button_object(rng, product))
    # Mostly one object per frame (as v4/v5 devices send); several occur in v2/v3 and are legal in v5.
    return rng.sample(pool, min(len(pool), rng.choice([1, 1, 1, 2, 3])))


def mibeacon_frame(rng, address, product, version, objects, encrypted, key, mac, capability, counter):
    control = (version << 12) | 0x0040 | (0x0008 if encrypted else 0) | (0x0010 if mac else 0)
    control |= 0x0020 if capability is not None else 0
    mac_le = bytes.fromhex(address.replace(":", ""))[::-1]
    head = struct.pack("<HHB", control, product, counter & 0xFF)
    frame = head + (mac_le if mac else b"")
    if capability is not None:
        frame += bytes([capability]) + (bytes([rng.randrange(256)]) if capability & 0x20 else b"")
    body = b"".join(struct.pack("<HB", t, len(d)) + d for t, d in objects)
    if not encrypted:
        return frame + body
    ext = struct.pack("<I", counter >> 8)[:3]
    nonce = mac_le + head[2:5] + ext
    sealed = AESCCM(key, tag_length=4).encrypt(nonce, body, b"\x11")
    return frame + sealed[:-4] + ext + sealed[-4:]


def mibeacon_corpus(rng, count):
    from xiaomi_ble import XiaomiBluetoothDeviceData

    products = THERMOMETERS + PLANT + FORMALDEHYDE + DOOR + FLOOD + MOTION + list(BUTTONS) + [DIMMER, CUBE]
    for index in range(count):
        address = random_address(rng)
        product = rng.choice(products)
        key = bytes(rng.randrange(256) for _ in range(16))
        encrypted = rng.random() < 0.5
        version = rng.choice([4, 5]) if encrypted else rng.choice([2, 3, 4, 5])
        objects = mibeacon_objects(rng, product)
        mac = rng.random() < 0.8 or not encrypted
        capability = rng.choice([None, None, 0x08, 0x28])
        counter = rng.randrange(1 << 32)
        case = "encrypted" if encrypted else "plain"
        give_key = key
        edge = rng.random()
        if edge < 0.03:
            # 0x1001 is an unknown object only to a product without buttons.
            pressable = product in BUTTONS or product in (DIMMER, CUBE)
            unknown = [0x4C01, 0x2000] if pressable else [0x4C01, 0x2000, 0x1001]
            objects.append((rng.choice(unknown), bytes(rng.randrange(256) for _ in range(3))))
            case += "_unknown_object"
        elif edge < 0.06 and encrypted:
            give_key = bytes(rng.randrange(256) for _ in range(16))
            case = "wrong_key"
        elif edge < 0.08:
            # One byte short, after the valid objects: an object type none of them has.
            objects.append((0x1010, b"\x01") if product in PLANT else (0x1009, b"\x01"))
            case += "_bad_object_length"
        if product in FLOORED_HUMIDITY and any(t in (0x1006, 0x100D) for t, _ in objects):
            case += "_humidity_floor"
        frame = mibeacon_frame(rng, address, product, version, objects, encrypted, key, mac, capability, counter)
        if edge > 0.98 and not encrypted:
            frame = frame[: rng.randrange(5, len(frame))]
            case = "truncated"
        parser = XiaomiBluetoothDeviceData(bindkey=give_key if encrypted else None)
        oracle = oracle_values(parser.update(service_info(address, MIBEACON_UUID, frame)))
        if oracle is not None:
            # An estimate the reference derives from the battery percentage, not in the frame.
            oracle.pop("voltage", None)
            if product in REMOTES:
                # Inferred from which button was pressed, not a state the frame carries.
                oracle.pop("binary:power", None)
        yield {"family": "mibeacon", "case": case, "hex": frame.hex(), "address": address,
               "key": give_key.hex() if encrypted else None, "product_id": product, "oracle": oracle}


# --- BTHome v2 ----------------------------------------------------------------------------------

# Fixed-size numeric objects: id -> (data bytes, signed).
BTHOME_NUMBERS = {
    0x00: (1, False), 0x01: (1, False), 0x02: (2, True), 0x03: (2, False), 0x04: (3, False), 0x05: (3, False),
    0x06: (2, False), 0x07: (2, False), 0x08: (2, True), 0x09: (1, False), 0x0A: (3, False), 0x0B: (3, False),
    0x0C: (2, False), 0x0D: (2, False), 0x0E: (2, False), 0x12: (2, False), 0x13: (2, False), 0x14: (2, False),
    0x2E: (1, False), 0x2F: (1, False), 0x3D: (2, False), 0x3E: (4, False), 0x3F: (2, True), 0x40: (2, False),
    0x41: (2, False), 0x42: (3, False), 0x43: (2, False), 0x44: (2, False), 0x45: (2, True), 0x46: (1, False),
    0x47: (2, False), 0x48: (2, False), 0x49: (2, False), 0x4A: (2, False), 0x4B: (3, False), 0x4C: (4, False),
    0x4D: (4, False), 0x4E: (4, False), 0x4F: (4, False), 0x51: (2, False), 0x52: (2, False), 0x55: (4, False),
    0x56: (2, False), 0x57: (1, True), 0x58: (1, True), 0x59: (1, True), 0x5A: (2, True), 0x5B: (4, True),
    0x5C: (4, True), 0x5D: (2, True), 0x5E: (2, False), 0x5F: (2, False), 0x60: (1, False), 0x61: (2, False),
    0x62: (4, True), 0x63: (4, True), 0x64: (1, False),
}
BTHOME_BINARIES = list(range(0x0F, 0x12)) + list(range(0x15, 0x2E))


def bthome_probe():
    """The reference's key for each object id, from a frame holding only that object."""
    from bthome_ble import BTHomeBluetoothDeviceData

    keys = {}
    for object_id in list(BTHOME_NUMBERS) + BTHOME_BINARIES:
        width = BTHOME_NUMBERS.get(object_id, (1, False))[0]
        frame = bytes([0x40, object_id]) + bytes([1] + [0] * (width - 1))
        found = oracle_values(BTHomeBluetoothDeviceData().update(
            service_info("A4:C1:38:00:00:01", BTHOME_UUID, frame))) or {}
        found = [k for k in found if k != "packet_id" or object_id == 0x00]
        if len(found) == 1:
            keys[object_id] = found[0]
    return keys


def bthome_corpus(rng, count):
    from bthome_ble import BTHomeBluetoothDeviceData

    keys = bthome_probe()
    ids = sorted(keys)
    for index in range(count):
        address = random_address(rng)
        key = bytes(rng.randrange(256) for _ in range(16))
        encrypted = rng.random() < 0.3
        # Distinct reference keys, so each value is found by its object; ascending ids (the spec).
        chosen, taken = [], set()
        for object_id in rng.sample(ids, rng.randrange(1, 7)):
            if keys[object_id] not in taken:
                taken.add(keys[object_id])
                chosen.append(object_id)
        chosen.sort()
        body = b""
        for object_id in chosen:
            if object_id in BTHOME_NUMBERS:
                width, signed = BTHOME_NUMBERS[object_id]
                raw = rng.randrange(-(1 << (8 * width - 1)), 1 << (8 * width - 1)) if signed \
                    else rng.randrange(1 << (8 * width))
                body += bytes([object_id]) + raw.to_bytes(width, "little", signed=signed)
            else:
                body += bytes([object_id, rng.randrange(2)])
        info = 0x40 | (0x01 if encrypted else 0) | (0x04 if rng.random() < 0.2 else 0)
        case = "encrypted" if encrypted else "plain"
        if 0x58 in chosen:
            case += "_temperature_0x58"
        give_key = key
        if encrypted:
            counter = rng.randrange(1 << 32).to_bytes(4, "little")
            mac = bytes.fromhex(address.replace(":", ""))
            nonce = mac + b"\xd2\xfc" + bytes([info]) + counter
            sealed = AESCCM(key, tag_length=4).encrypt(nonce, body, None)
            frame = bytes([info]) + sealed[:-4] + counter + sealed[-4:]
            if rng.random() < 0.03:
                give_key = bytes(rng.randrange(256) for _ in range(16))
                case = case.replace("encrypted", "wrong_key")
        else:
            frame = bytes([info]) + body
        parser = BTHomeBluetoothDeviceData(bindkey=give_key if encrypted else None)
        oracle = oracle_values(parser.update(service_info(address, BTHOME_UUID, frame)))
        by_object = None
        if oracle is not None:
            by_object = [[object_id, oracle.get(keys[object_id])] for object_id in chosen]
        yield {"family": "bthome", "case": case, "hex": frame.hex(), "address": address,
               "key": give_key.hex() if encrypted else None, "oracle": oracle, "objects": by_object}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=10000, help="payloads per family")
    parser.add_argument("--seed", type=int, default=17)
    corpora = {"mibeacon": mibeacon_corpus, "bthome": bthome_corpus}
    # Manufacturer-data families (scripts/differential/manufacturer.py).
    corpora.update({family: functools.partial(make, random_address=random_address, oracle_values=oracle_values)
                    for family, make in manufacturer.CORPORA.items()})
    # Families whose corpus lives in its own module, corpus_<family>.py: corpus(rng, count, random_address).
    for family in ADVERTISEMENT_FAMILIES:
        module = importlib.import_module(f"corpus_{family}")
        corpora[family] = functools.partial(module.corpus, random_address=random_address)
    parser.add_argument("--family", action="append", choices=list(corpora))
    options = parser.parse_args()
    out = sys.stdout
    for family in options.family or list(corpora):
        rng = random.Random(f"{options.seed}-{family}")
        for entry in corpora[family](rng, options.count):
            out.write(json.dumps(entry, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
