"""Victron Instant Readout corpus for the differential suite (see oracle.py): manufacturer data of
company 0x02E1 built from Victron's "extra manufacturer data" description (a product
advertisement header, then a record packed least-significant bit first and encrypted with
AES-128-CTR under a random per-device key), decoded by victron-ble (pinned in scripts/setup.sh).

Record types 0x01 solar charger, 0x02 battery monitor, 0x03 inverter, 0x04 DC-DC converter;
every field over its whole bit range, a tenth of them with their "not available" pattern; state,
error, alarm and off-reason codes from the reference's tables (which hold the codes Victron
documents). Edge cases named in `case`: a wrong key (`wrong_key`: the reference raises its key
mismatch, BLEBridge refuses the frame), a code outside the reference's tables (`_unlisted_code`:
the reference raises), the battery monitor's current "not available" pattern
(`_current_not_available`), the Lynx Smart BMS's state of charge "not available"
(`_soc_not_available`), a Smart Lithium cell voltage out of range (`_cell_out_of_range`: the
reference's -inf/+inf are reported as the strings "-inf"/"inf", JSON has no infinity) and a
record cut short (`_short_record`).

The reference's getters are reported under their names without `get_`; enumerations as their
numbers; the solar charger's, DC-DC converter's, AC charger's and Orion XS's `charge_state`
under `device_state` (it reads the description's "Device state", as the inverter's does); an
inverter's or DC energy meter's alarm of None as 0 (its getter turns "no alarm", 0, into None);
the Smart BatteryProtect's `alarm_reason` and `warning_reason` as `alarm` and `warning`; the
Smart Lithium's `cell_voltages` list as `cell_voltage_1` … `cell_voltage_8` (None left out).
"""

import random

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from victron_ble.devices import (AcCharger, BatteryMonitor, DcDcConverter, DcEnergyMeter, Inverter, LynxSmartBMS,
                                 OrionXS, SmartBatteryProtect, SmartLithium, SolarCharger)
from victron_ble.devices.dc_energy_meter import MeterType
from victron_ble.devices.smart_battery_protect import OutputState
from victron_ble.devices.base import MODEL_ID_MAPPING, AlarmReason, ChargerError, OffReason, OperationMode

COMPANY = 0x02E1


def products(*words):
    return sorted(pid for pid, name in MODEL_ID_MAPPING.items()
                  if any(word in name for word in words) and pid not in (0xA3A4, 0xA3A5))


# Record type -> (reference class, product ids, fields: (name, bits, kind, not-available bits)).
# kind: "u" unsigned, "s" signed, "state", "error", "alarm", "off", "aux".
RECORDS = {
    0x01: (SolarCharger, products("SmartSolar", "BlueSolar"), [
        ("device_state", 8, "state", 0xFF), ("charger_error", 8, "error", 0xFF), ("battery_voltage", 16, "s", 0x7FFF),
        ("battery_current", 16, "s", 0x7FFF), ("yield_today", 16, "u", 0xFFFF), ("solar_power", 16, "u", 0xFFFF),
        ("load_current", 9, "u", 0x1FF)]),
    0x02: (BatteryMonitor, products("SmartShunt", "BMV-7"), [
        ("remaining", 16, "u", 0xFFFF), ("voltage", 16, "s", 0x7FFF), ("alarm", 16, "alarm", None),
        ("aux", 16, "u", None), ("aux_mode", 2, "u", None), ("current", 22, "s", 0x3FFFFF),
        ("consumed", 20, "u", 0xFFFFF), ("soc", 10, "u", 0x3FF)]),
    0x03: (Inverter, products("Phoenix Inverter"), [
        ("device_state", 8, "state", 0xFF), ("alarm", 16, "alarm", None), ("battery_voltage", 16, "s", 0x7FFF),
        ("ac_apparent_power", 16, "u", 0xFFFF), ("ac_voltage", 15, "u", 0x7FFF), ("ac_current", 11, "u", 0x7FF)]),
    0x04: (DcDcConverter, products("Orion Smart"), [
        ("device_state", 8, "state", 0xFF), ("charger_error", 8, "error", 0xFF), ("input_voltage", 16, "u", 0xFFFF),
        ("output_voltage", 16, "s", 0x7FFF), ("off_reason", 32, "off", None)]),
    0x05: (SmartLithium, products("Smart Lithium"), [
        ("bms_flags", 32, "u", None), ("error_flags", 16, "u", None)]
        + [(f"cell_{n}", 7, "cell", 0x7F) for n in range(1, 9)]
        + [("battery_voltage", 12, "u", 0xFFF), ("balancer_status", 4, "balancer", 0xF),
           ("battery_temperature", 7, "u", 0x7F)]),
    0x08: (AcCharger, products("Blue Smart IP"), [
        ("device_state", 8, "state", 0xFF), ("charger_error", 8, "error", 0xFF)]
        + [(f"{name}{n}", bits, "u", (1 << bits) - 1) for n in (1, 2, 3)
           for name, bits in (("output_voltage", 13), ("output_current", 11))]
        + [("temperature", 7, "u", 0x7F), ("ac_current", 9, "u", 0x1FF)]),
    0x09: (SmartBatteryProtect, products("BatteryProtect"), [
        ("device_state", 8, "state", 0xFF), ("output_state", 8, "output", 0xFF), ("error_code", 8, "error", 0xFF),
        ("alarm_reason", 16, "alarm", None), ("warning_reason", 16, "alarm", None), ("input_voltage", 16, "s", 0x7FFF),
        ("output_voltage", 16, "u", 0xFFFF), ("off_reason", 32, "off", None)]),
    0x0A: (LynxSmartBMS, products("Lynx Smart BMS"), [
        ("error_flags", 8, "u", None), ("remaining_mins", 16, "u", 0xFFFF), ("voltage", 16, "s", 0x7FFF),
        ("current", 16, "s", 0x7FFF), ("io_status", 16, "u", None), ("alarm_flags", 18, "u", None),
        ("soc", 10, "u", 0x3FF), ("consumed_ah", 20, "u", 0xFFFFF), ("battery_temperature", 7, "u", 0x7F)]),
    0x0D: (DcEnergyMeter, products("Smart Energy Meter", "SmartShunt"), [
        ("meter_type", 16, "meter", None), ("voltage", 16, "s", 0x7FFF), ("alarm", 16, "alarm", None),
        ("aux", 16, "u", None), ("aux_mode", 2, "aux_mode", None), ("current", 22, "s", 0x3FFFFF)]),
    0x0F: (OrionXS, products("Orion XS") or products("Orion Smart"), [  # no Orion XS id in its table
        ("device_state", 8, "state", 0xFF), ("charger_error", 8, "error", 0xFF), ("output_voltage", 16, "u", 0xFFFF),
        ("output_current", 16, "u", 0xFFFF), ("input_voltage", 16, "u", 0xFFFF), ("input_current", 16, "u", 0xFFFF),
        ("off_reason", 32, "off", None)]),
}
NAMES = {1: "solar_charger", 2: "battery_monitor", 3: "inverter", 4: "dcdc_converter", 5: "smart_lithium",
         8: "ac_charger", 9: "smart_battery_protect", 0x0A: "lynx_smart_bms", 0x0D: "dc_energy_meter",
         0x0F: "orion_xs"}
TABLES = {"state": [m.value for m in OperationMode if m.value != 0xFF], "error": [m.value for m in ChargerError],
          "alarm": [m.value for m in AlarmReason], "off": [m.value for m in OffReason],
          "balancer": [0, 1, 2, 3], "output": [m.value for m in OutputState],
          "meter": [m.value & 0xFFFF for m in MeterType]}
UNLISTED = {"state": [8, 10, 12, 100, 250], "error": [9, 10, 99, 150], "alarm": [3, 5, 0x8001, 0xFFFF],
            "off": [3, 0x00000200, 0x80000000, 0xFFFFFFFF], "balancer": [4, 9, 14], "output": [2, 3, 100],
            "meter": [0, 9, 100, 0xFFF0]}


def field_value(rng, bits, kind, not_available):
    """(raw bits, case suffix)."""
    if kind in TABLES:
        if rng.random() < 0.01:
            return rng.choice(UNLISTED[kind]), "_unlisted_code"
        if not_available is not None and rng.random() < 0.1:
            return not_available, ""
        return rng.choice(TABLES[kind]), ""
    if not_available is not None and rng.random() < 0.1:
        return not_available, ""
    if kind == "aux_mode":
        return rng.randrange(4), ""
    if kind == "cell":
        raw = rng.choice([0x00, 0x7E]) if rng.random() < 0.05 else rng.randrange(1, 0x7E)
        return raw, "_cell_out_of_range" if raw in (0x00, 0x7E) else ""
    return rng.randrange(1 << bits), ""


def pack(values):
    """(raw, bits) pairs packed least-significant bit first."""
    number, shift = 0, 0
    for raw, bits in values:
        number |= (raw & ((1 << bits) - 1)) << shift
        shift += bits
    return number.to_bytes((shift + 7) // 8, "little")


def reference(record_type, key, data):
    device_class = RECORDS[record_type][0]
    try:
        parsed = device_class(key.hex()).parse(data)
        getters = {attribute[4:]: getattr(parsed, attribute)() for attribute in dir(parsed)
                   if attribute.startswith("get_") and attribute != "get_model_name"}
    except Exception:  # key mismatch, a code missing from an enumeration
        return None
    values = {}
    for name, value in getters.items():
        name = {"charge_state": "device_state", "alarm_reason": "alarm", "warning_reason": "warning"}.get(name, name)
        if name == "alarm" and value is None and record_type in (0x03, 0x0D):
            value = 0
        if name == "cell_voltages":
            for number, cell in enumerate(value, 1):
                if cell is not None:
                    values[f"cell_voltage_{number}"] = cell if abs(cell) != float("inf") else str(cell)
            continue
        if value is None:
            continue
        values[name] = value.value if hasattr(value, "value") else value
    return values or None


def corpus(rng: random.Random, count, random_address):
    for _ in range(count):
        address = random_address(rng)
        record_type = rng.choice(sorted(RECORDS))
        _, product_ids, layout = RECORDS[record_type]
        case = NAMES[record_type]
        values = []
        for name, bits, kind, not_available in layout:
            raw, suffix = field_value(rng, bits, kind, not_available)
            if name == "current" and raw == 0x3FFFFF:
                suffix = "_current_not_available"
            if name == "soc" and record_type == 0x0A and raw == 0x3FF:
                suffix = "_soc_not_available"
            case += suffix if suffix not in case else ""
            values.append((raw, bits))
        record = pack(values)
        # The description's records end with unused bits up to 16 bytes; devices send some of them.
        record += bytes(rng.randrange(256) for _ in range(rng.randrange(0, 17 - len(record))))
        if rng.random() < 0.02:
            record = record[:rng.randrange(0, len(record) - 1)]
            case += "_short_record"
        key = bytes(rng.randrange(256) for _ in range(16))
        counter = rng.randrange(1 << 16)
        block = counter.to_bytes(2, "little") + bytes(14)
        encryptor = Cipher(algorithms.AES(key), modes.CTR(block)).encryptor()
        encrypted = encryptor.update(record) + encryptor.finalize()
        data = bytes([0x10, rng.randrange(256)]) + rng.choice(product_ids).to_bytes(2, "little") \
            + bytes([record_type]) + counter.to_bytes(2, "little") + key[:1] + encrypted
        give_key = key
        if rng.random() < 0.03:
            give_key = bytes([(key[0] + rng.randrange(1, 256)) % 256]) + bytes(rng.randrange(256) for _ in range(15))
            case = "wrong_key"
        oracle = reference(record_type, give_key, data)
        yield {"family": "victron", "case": case, "hex": data.hex(), "address": address, "key": give_key.hex(),
               "manufacturer_data": {str(COMPANY): data.hex()}, "oracle": oracle}
