"""Corpora of the manufacturer-data families (`CORPORA` at the end) for
scripts/differential/oracle.py, generated from the public descriptions of their formats
(docs/decoders.md) and decoded by their reference parsers (PyPI, pinned in scripts/setup.sh).

Each entry carries `company` (the manufacturer-data key BlueZ reports), `hex` (the entry without
the company-id bytes) and `name` (the advertised local name), besides the fields oracle.py
documents. Values the generator chose on purpose outside a format's range are named in `case`.
"""

import struct

from habluetooth.models import BluetoothServiceInfoBleak


def manufacturer_info(address, name, company, data):
    return BluetoothServiceInfoBleak(
        name=name, address=address, rssi=-60, manufacturer_data={company: data}, service_data={},
        service_uuids=[], source="local", device=None, advertisement=None, connectable=False, time=0.0,
        tx_power=None)


def split(frame):
    """A frame whose first two bytes are the company id: (company, the rest)."""
    return frame[0] | frame[1] << 8, frame[2:]


def random_bytes(rng, count):
    return bytes(rng.randrange(256) for _ in range(count))


# --- Govee ---------------------------------------------------------------------------------------

GOVEE_PACKED_0001 = ["H5100", "H5101", "H5102", "H5103", "H5104", "H5105", "H5174", "H5177", "H5110", "GV5179"]


def govee_packed(rng):
    """Three bytes: sign bit 23, then temperature × 10000 + humidity × 10 (both in tenths)."""
    edge = rng.random()
    if edge < 0.03:
        tenths, case = rng.choice([rng.randrange(1001, 8388), -rng.randrange(401, 8388)]), "_out_of_range"
    else:
        tenths, case = rng.randrange(-400, 1001), ""
    humidity = rng.randrange(0, 1000)
    value = abs(tenths) * 1000 + humidity
    if tenths < 0 or (tenths == 0 and rng.random() < 0.5):
        value |= 0x800000
    battery = rng.randrange(0, 101)
    if rng.random() < 0.05:
        battery |= 0x80
        case += "_error_bit"
    return value.to_bytes(3, "big") + bytes([battery]), case


def govee_pairs(rng):
    """int16 LE temperature (0.01 °C), uint16 LE humidity (0.01 %), battery %."""
    return struct.pack("<hHB", rng.randrange(-4000, 10001), rng.randrange(0, 10001), rng.randrange(0, 101))


# Meat thermometers: model -> (entry length, company ids it advertises under, values after the
# 8-byte header: "t" a big-endian int16 in 0.01 °C, "b"/"w" a separator byte/word).
GOVEE_MEAT = {
    "H5181": (14, [0xF861, 0x388A, 0xEA42, 0xAAA2, 0xD14B], "tt"), "H5183": (14, [0x67DD, 0xE02F, 0xF79F], "tt"),
    "H5182": (17, [0x2730], "ttbtt"), "H5184": (17, [0x1B36], "ttbtt"), "H5185": (20, [0x4A32, 0x0332, 0x4C32], "ttwtt"),
    "H5198": (20, [0x3022], "tttttt"),
}


def govee_meat(rng, suffix):
    """(company, data, name, case) of a meat thermometer: probes 0–300 °C, a few negative (no probe)."""
    model = rng.choice(sorted(GOVEE_MEAT))
    length, companies, values = GOVEE_MEAT[model]
    case = "meat_" + model
    header = bytearray(random_bytes(rng, 8))
    if model in ("H5184", "H5198"):
        header[6] = rng.choice([1, 65, 129, 193, 2, 66, 130, 194])
        if rng.random() < 0.03:
            header[6] = rng.choice([0, 3, 64, 255])
            case += "_unknown_pair"
    body = b""
    for kind in values:
        if kind == "t":
            value = rng.randrange(0, 30001)
            if rng.random() < 0.05:
                value = rng.choice([-1, rng.randrange(-32768, 0)])
                case += "_negative_probe" if "_negative_probe" not in case else ""
            body += struct.pack(">h", value)
        else:
            body += random_bytes(rng, 1 if kind == "b" else 2)
    data = bytes(header) + body
    data += random_bytes(rng, length - len(data))
    return rng.choice(companies), data, rng.choice([f"{model}_{suffix}", ""]), case


def govee_frame(rng, suffix):
    """(company, data, name, case) for one of Govee's frame kinds."""
    kind = rng.choice(["ec88_6", "ec88_7", "ec88_9", "0001_6", "0001_8", "0001_9", "8801_9", "meat", "meat"])
    if kind == "meat":
        return govee_meat(rng, suffix)
    if kind == "ec88_6":
        packed, case = govee_packed(rng)
        name = rng.choice([f"GVH5075_{suffix}", f"GVH5072_{suffix}", f"Govee_H5075_{suffix}", ""])
        return 0xEC88, b"\x00" + packed + random_bytes(rng, 1), name, kind + case
    if kind == "ec88_7":
        name = rng.choice([f"Govee_H5074_{suffix}", ""])
        return 0xEC88, b"\x00" + govee_pairs(rng) + random_bytes(rng, 1), name, kind
    if kind == "ec88_9":
        name = rng.choice([f"GVH5051_{suffix}", f"GVH5052_{suffix}", f"GVH5071_{suffix}", ""])
        return 0xEC88, b"\x00" + govee_pairs(rng) + random_bytes(rng, 3), name, kind
    if kind == "0001_6":
        packed, case = govee_packed(rng)
        model = rng.choice(GOVEE_PACKED_0001)
        name = f"{model}_{suffix}" if model.startswith("GV") else f"GV{model}_{suffix}"
        return 0x0001, b"\x01\x01" + packed, name, kind + case
    if kind == "0001_8":
        packed, case = govee_packed(rng)
        return 0x0001, b"\x01\x01" + packed + random_bytes(rng, 2), rng.choice([f"GVH5108_{suffix}", ""]), kind + case
    if kind == "0001_9":
        packed, case = govee_packed(rng)
        sensor = rng.choice([0, 1])
        name = rng.choice([f"H5178_{suffix}", f"B5178_{suffix}", ""])
        return 0x0001, b"\x01\x01" + bytes([sensor]) + packed + random_bytes(rng, 2), name, kind + case
    name = rng.choice([f"GVH5179_{suffix}", ""])
    return 0x8801, random_bytes(rng, 4) + govee_pairs(rng), name, kind


def govee_corpus(rng, count, random_address, oracle_values):
    from govee_ble import GoveeBluetoothDeviceData

    for _ in range(count):
        address = random_address(rng)
        company, data, name, case = govee_frame(rng, address.replace(":", "")[-4:])
        oracle = oracle_values(GoveeBluetoothDeviceData().update(manufacturer_info(address, name, company, data)))
        yield {"family": "govee", "case": case, "hex": data.hex(), "company": company, "name": name,
               "address": address, "key": None, "oracle": oracle}


# --- ThermoPro -----------------------------------------------------------------------------------

THERMOPRO_MODELS = ["TP357", "TP357S", "TP358", "TP359", "TP393", "TP397"]


def thermopro_corpus(rng, count, random_address, oracle_values):
    from thermopro_ble import ThermoProBluetoothDeviceData

    for _ in range(count):
        address = random_address(rng)
        model = rng.choice(THERMOPRO_MODELS)
        name = rng.choice([model, f"{model} ({address.replace(':', '')[-4:]})"])
        status = rng.randrange(256)
        case = f"battery_{status & 3}"
        if rng.random() < 0.03:
            reading = b"\xff\xff\xff"
            case += "_no_reading"
        else:
            reading = struct.pack("<hB", rng.randrange(-400, 701), rng.randrange(0, 101))
        frame = b"\xc2" + reading + bytes([status]) + random_bytes(rng, rng.choice([1, 2, 3]))
        company, data = split(frame)
        oracle = oracle_values(ThermoProBluetoothDeviceData().update(manufacturer_info(address, name, company, data)))
        yield {"family": "thermopro", "case": case, "hex": data.hex(), "company": company, "name": name,
               "address": address, "key": None, "oracle": oracle}


# --- INKBIRD -------------------------------------------------------------------------------------


def inkbird_frame(rng):
    """(frame with the company-id bytes first, name, case)."""
    kind = rng.choice(["sps", "tps", "ith", "bbq"])
    edge = rng.random()
    battery = rng.randrange(0, 101)
    case = kind
    if edge < 0.03:
        battery = rng.randrange(101, 256)
        case += "_corrupt_battery"
    if kind in ("sps", "tps"):
        humidity = rng.randrange(0, 10001)
        if 0.03 <= edge < 0.06:
            humidity = rng.randrange(10001, 65535)
            case += "_corrupt_humidity"
        elif kind == "tps" and edge > 0.9:
            humidity = rng.choice([0, 0xFFFF])
            case += "_no_humidity_sensor"
        frame = struct.pack("<hH", rng.randrange(-4000, 6001), humidity) + random_bytes(rng, 3) + bytes(
            [battery]) + random_bytes(rng, 1)
        return frame, kind, case
    if kind == "ith":
        humidity = 0 if edge > 0.9 else rng.randrange(0, 1001)
        if 0.03 <= edge < 0.06:
            humidity = rng.randrange(1001, 65536)
            case += "_corrupt_humidity"
        name = rng.choice(["ITH-11-B", "ITH-13-B", "ITH-21-B", "IBS-P02B", "ith-11-b"])
        frame = random_bytes(rng, 6) + struct.pack("<hHB", rng.randrange(-400, 601), humidity, battery) + \
            random_bytes(rng, 7)
        return frame, name, case
    probes = rng.choice([1, 2, 4, 6])
    temperatures = [-1 if rng.random() < 0.2 else rng.randrange(-400, 3001) for _ in range(probes)]
    name = rng.choice(["iBBQ", "xBBQ", "Ink@iBBQ"])
    return random_bytes(rng, 10) + struct.pack(f"<{probes}h", *temperatures), name, f"bbq_{probes}"


def inkbird_corpus(rng, count, random_address, oracle_values):
    from inkbird_ble import INKBIRDBluetoothDeviceData

    for _ in range(count):
        address = random_address(rng)
        frame, name, case = inkbird_frame(rng)
        company, data = split(frame)
        oracle = oracle_values(INKBIRDBluetoothDeviceData().update(manufacturer_info(address, name, company, data)))
        yield {"family": "inkbird", "case": case, "hex": data.hex(), "company": company, "name": name,
               "address": address, "key": None, "oracle": oracle}


CORPORA = {"govee": govee_corpus, "thermopro": thermopro_corpus, "inkbird": inkbird_corpus}
