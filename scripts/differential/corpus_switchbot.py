"""SwitchBot corpus for the differential suite (see oracle.py): Meter, Meter Plus, Outdoor Meter,
Meter Pro (CO2), Contact Sensor, Motion Sensor and Bot advertisements built from SwitchBot's
published BLE advertisement layout, decoded by pyswitchbot (pinned in scripts/setup.sh).

Each payload is service data 0xFD3D (sometimes 0x0D00) and, for about two thirds, manufacturer
data of company 0x0969 (address, sequence, state byte, the meters' reading, CO2), with reserved
bits set at random. Edge cases: a meter that has not measured yet (all zero), payloads cut short.
"""

import random

from bleak.backends.device import BLEDevice
from bleak.backends.scanner import AdvertisementData
from switchbot.adv_parser import parse_advertisement_data

COMPANY = 0x0969
UUIDS = {"fd3d": "0000fd3d-0000-1000-8000-00805f9b34fb", "0d00": "00000d00-0000-1000-8000-00805f9b34fb"}

# Type code -> kind. Both letter cases are the same device.
METERS = [ord(c) for c in "TtiIwW5"] + [0x14, 0x15]
CO2_METERS = {ord("5"), 0x15}
CONTACT = [ord("d"), ord("D")]
MOTION = [ord("s"), ord("S")]
BOT = [ord("H")]

# The reference's keys kept for comparison (its extras: the raw bytes, °F, model names).
KEYS = ["temperature", "humidity", "battery", "fahrenheit", "co2", "tested", "motion_detected", "contact_open",
        "contact_timeout", "is_light", "button_count", "switchMode", "isOn", "led", "iot", "sense_distance",
        "light_intensity"]


def climate(rng, zero):
    if zero:
        return bytes([rng.randrange(16) & 0xF0, rng.choice([0x00, 0x80]), rng.randrange(2) << 7])
    return bytes([(rng.randrange(16) << 4 if rng.random() < 0.2 else 0) | rng.randrange(10),
                  (rng.randrange(2) << 7) | rng.randrange(0, 80), (rng.randrange(2) << 7) | rng.randrange(0, 101)])


def reference(address, service_uuid, service, manufacturer):
    device = BLEDevice(address, None, None)
    advertisement = AdvertisementData(
        local_name=None, manufacturer_data={COMPANY: manufacturer} if manufacturer is not None else {},
        service_data={UUIDS[service_uuid]: service} if service is not None else {}, service_uuids=[],
        tx_power=None, rssi=-60, platform_data=())
    parsed = parse_advertisement_data(device, advertisement)
    if parsed is None or not parsed.data.get("data"):
        return None
    values = {}
    for key in KEYS:
        value = parsed.data["data"].get(key)
        if value is None:
            continue
        values[key] = bool(value) if key in ("led", "iot") else value
    return values or None


def corpus(rng: random.Random, count, random_address):
    for _ in range(count):
        address = random_address(rng)
        code = rng.choice(rng.choice([METERS, METERS, CONTACT, MOTION, BOT]))
        case = {True: "meter"}.get(code in METERS) or {True: "contact"}.get(code in CONTACT) or \
            {True: "motion"}.get(code in MOTION) or "bot"
        status = rng.randrange(256)
        service = bytes([code | (rng.randrange(2) << 7 if code not in (0x14, 0x15) else 0), status,
                         (rng.randrange(2) << 7) | rng.randrange(0, 101)])
        zero = rng.random() < 0.03
        mfr = None
        with_mfr = rng.random() < 0.65
        head = bytes.fromhex(address.replace(":", "")) + bytes([rng.randrange(256), rng.randrange(256)])
        if case == "meter":
            if code in (ord("w"), ord("W")) or rng.random() < 0.5:
                with_mfr = True if code in (ord("w"), ord("W")) else with_mfr
            else:
                service += climate(rng, zero)
            if with_mfr:
                mfr = head + climate(rng, zero) + bytes([rng.randrange(256)])
                if code in CO2_METERS:
                    mfr += bytes([rng.randrange(256)]) + rng.choice(
                        [rng.randrange(400, 10000), rng.randrange(400, 65536)]).to_bytes(2, "big")
            elif len(service) == 3 and not zero:
                service += climate(rng, zero)
            if zero:
                case += "_zero"
        elif case == "contact":
            service += bytes(rng.randrange(256) for _ in range(6))
            if with_mfr:
                mfr = head + bytes(rng.randrange(256) for _ in range(5))
        elif case == "motion":
            service += bytes(rng.randrange(256) for _ in range(3))
            if with_mfr:
                mfr = head
        else:
            if status & 0x80 == 0:
                case += "_press_mode"
        uuid = "fd3d" if rng.random() < 0.9 else "0d00"
        if rng.random() < 0.03 and mfr is None:
            service = service[:rng.randrange(1, len(service))]
            case += "_truncated"
        if case.startswith("meter") and (zero or (len(service) == 3 and mfr is None)):
            case += "_no_reading"
        oracle = reference(address, uuid, service, mfr)
        entry = {"family": "switchbot", "case": case, "hex": service.hex(), "address": address, "key": None,
                 "service_data": {uuid: service.hex()}, "oracle": oracle}
        if mfr is not None:
            entry["manufacturer_data"] = {str(COMPANY): mfr.hex()}
        yield entry
