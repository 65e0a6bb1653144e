#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (Fuzz/Seeds/<target>/) from the tests' vectors and the
repository's sample files: decoder vectors of Tests/DecodersTests, command topics and payloads of
Tests/GatewayTests/CommandGateTests.swift and docs/mqtt.md, JSON texts of Tests/JSONTests,
config.json, layouts found in the docs and config.json, docs/scenarios/*.json, and D-Bus bodies
packed here by hand (the shapes BlueZ sends). Rerun after changing those; scripts/fuzz.sh copies
the seeds into the working corpus before each run."""
import hashlib
import json
import pathlib
import re
import shutil
import struct
import warnings

warnings.simplefilter("ignore", DeprecationWarning)  # "\(" of Swift interpolations in unicode_escape

root = pathlib.Path(__file__).resolve().parent.parent
seeds = root / "Fuzz" / "Seeds"


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    directory = seeds / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def hexbytes(text):
    return bytes.fromhex(re.sub(r"[^0-9a-fA-F]", "", text))


def swift_sources(path):
    return [p.read_text() for p in sorted((root / path).glob("*.swift"))]


if seeds.exists():
    shutil.rmtree(seeds)

# Decoder vectors: Vector("decoder", "hex", ...) in the decoders' tests.
vector = re.compile(r'Vector\(\s*"([a-z0-9_]+)",\s*"([0-9A-Fa-f ]*)"')
for text in swift_sources("Tests/DecodersTests"):
    for name, hex_text in vector.findall(text):
        payload = hexbytes(hex_text)
        write("fuzz-characteristics", name.encode() + b"\0" + payload)
        write("fuzz-advertisements", name.encode() + b"\0" + payload)
        if name == "bthome" and payload and payload[0] & 0x01 == 0:
            write("fuzz-encrypted-advertisements", bytes([0]) + payload[1:])
        if name == "bthome_v1":
            write("fuzz-encrypted-advertisements", bytes([1]) + payload)
# Encrypted and beacon payloads given as bytes("...") in the BTHome and beacon tests.
for name, path in [("bthome", "Tests/DecodersTests/BTHomeTests.swift"), ("ibeacon", "Tests/DecodersTests/BeaconTests.swift")]:
    for hex_text in re.findall(r'bytes\("([0-9A-Fa-f ]{8,})"\)', (root / path).read_text()):
        write("fuzz-advertisements", name.encode() + b"\0" + hexbytes(hex_text))

# Commands: topic NUL payload.
commands = re.compile(r'admit\(&gate, "([^"]*)", (#?)"(.*?)"\2\)')
for topic, _, payload in commands.findall((root / "Tests/GatewayTests/CommandGateTests.swift").read_text()):
    write("fuzz-commands", topic + "\0" + payload.encode().decode("unicode_escape").encode("latin-1").decode("utf-8", "replace"))
for topic, payload in re.findall(r"mosquitto_pub -t (\S+) -m '?([^'\n]*)'?", (root / "docs/mqtt.md").read_text()):
    write("fuzz-commands", topic + "\0" + payload)
for request, payload in [
    ("scan", '{"duration":"5s","transaction":1}'),
    ("devices", ""),
    ("gatt/read", '{"device":"lamp","characteristic":"2a19","transaction":"r"}'),
    ("gatt/write", '{"device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b","value":"01"}'),
    ("gatt/notify", '{"device":"lamp","characteristic":"2a37","enable":true}'),
    ("connect", '{"device":"lamp"}'),
    ("config/reload", "{}"),
]:
    write("fuzz-commands", f"blebridge/bridge/request/{request}\0{payload}")

# JSON texts: the JSON tests' literals and the command payloads.
for text in swift_sources("Tests/JSONTests"):
    for literal in re.findall(r'#"(.*?)"#', text):
        write("fuzz-json", literal)
for path in (seeds / "fuzz-commands").iterdir():
    write("fuzz-json", path.read_bytes().split(b"\0", 1)[-1])

# Configuration and scenarios: the repository's files.
configuration = (root / "config.json").read_text()
write("fuzz-configuration", configuration)
for block in re.findall(r"```json\n(.*?)```", (root / "docs/configuration.md").read_text(), re.S):
    write("fuzz-configuration", block)
for path in sorted((root / "docs/scenarios").glob("*.json")):
    write("fuzz-scenario", path.read_bytes())


# Layouts: every object with "fields" in config.json and the docs' JSON blocks, NUL, a value.
def layouts(value):
    if isinstance(value, dict):
        if isinstance(value.get("fields"), list):
            yield value
        for member in value.values():
            yield from layouts(member)
    elif isinstance(value, list):
        for element in value:
            yield from layouts(element)


documents = [configuration]
for doc in ["configuration.md", "decoders.md", "mqtt.md"]:
    documents += re.findall(r"```json\n(.*?)```", (root / "docs" / doc).read_text(), re.S)
for document in documents:
    try:
        parsed = json.loads(document)
    except json.JSONDecodeError:
        continue
    for layout in layouts(parsed):
        for value in [b"", bytes(range(1, 9)), b"\xff" * 12]:
            write("fuzz-byte-layouts", json.dumps(layout).encode() + b"\0" + value)
write(
    "fuzz-byte-layouts",
    json.dumps(
        {
            "name": "sensor",
            "fields": [
                {"name": "flags", "type": "uint8", "bits": [{"name": "on", "shift": 0}, {"name": "mode", "shift": 1, "width": 3}]},
                {"name": "temperature", "type": "sint16", "scale": 0.01, "unit": "°C", "device_class": "temperature"},
                {"name": "pressure", "type": "uint24", "big_endian": True, "offset": -1000},
                {"type": "skip", "length": 1},
                {"name": "label", "type": "utf8"},
            ],
        }
    ).encode()
    + b"\0\x05\x34\x12\x00\x10\x00\x00ok",
)


# D-Bus: signature NUL body (little-endian bodies; the harness uses the input's length parity
# for the byte order, so some seeds are read big-endian).
def pad(data, n):
    return data + b"\0" * (-len(data) % n)


def string(data, text):
    data = pad(data, 4)
    raw = text.encode()
    return data + struct.pack("<I", len(raw)) + raw + b"\0"


def variant_string(data, text):
    return string(data + b"\x01s\0", text)


def dict_sv(data, members):
    """a{sv} with string keys and variants given as (signature, packed value, alignment)."""
    data = pad(data, 4)
    length_at = len(data)
    data += b"\0\0\0\0"
    data = pad(data, 8)
    start = len(data)
    for key, (signature, value, alignment) in members:
        data = string(pad(data, 8), key)
        data += bytes([len(signature)]) + signature.encode() + b"\0"
        data = pad(data, alignment) + value
    return data[:length_at] + struct.pack("<I", len(data) - start) + data[length_at + 4 :]


properties = dict_sv(
    string(b"", "org.bluez.Device1"),
    [("Connected", ("b", struct.pack("<I", 1), 4)), ("RSSI", ("n", struct.pack("<h", -60), 2)),
     ("Name", ("s", struct.pack("<I", 4) + b"Lamp\0", 4))],
)
properties = pad(properties, 4) + struct.pack("<I", 0)  # invalidated properties: an empty as
for signature, data in [
    ("s", string(b"", "hello")),
    ("o", string(b"", "/org/bluez/hci0/dev_C0_FF_EE_00_00_01")),
    ("ay", struct.pack("<I", 4) + b"\x10\x48\x2c\x03"),
    ("yb", b"\x07\0\0\0" + struct.pack("<I", 1)),
    ("nqiuxtd", struct.pack("<hHiIqQd", -2, 3, -4, 5, -6, 7, 2.5)),
    ("(ii)", struct.pack("<ii", 1, 2)),
    ("v", b"\x01u\0\0" + struct.pack("<I", 42)),
    ("sa{sv}as", properties),
    ("g", b"\x05a{sv}\0"),
    ("aay", struct.pack("<I", 12) + struct.pack("<I", 1) + b"\x01\0\0\0" + struct.pack("<I", 0)),
]:
    write("fuzz-dbus-message", signature.encode() + b"\0" + data)
    write("fuzz-dbus-message", signature.encode() + b"\0" + data + b"\0")

for directory in sorted(seeds.iterdir()):
    print(f"{directory.name}: {len(list(directory.iterdir()))} seeds")
