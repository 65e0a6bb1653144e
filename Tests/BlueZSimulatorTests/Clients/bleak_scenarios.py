"""Fidelity check over the built-in scenarios: bleak (any release from 0.22 on), unchanged, drives
the simulator through one scenario and checks what a bleak user sees.
Usage: bleak_scenarios.py SCENARIO   (heart-rate, lamp, pairing, faults; the demo is bleak_client.py)."""
import asyncio
import sys

from bleak import BleakClient, BleakScanner
from bleak.exc import BleakDBusError

from bleak_client import check, wait_for  # this directory is on sys.path (the script's own)

SUFFIX = "-0000-1000-8000-00805f9b34fb"
LAMP_SUFFIX = "-3c4d-4e5f-8a9b-0c1d2e3f4a5b"


def uuid16(short):
    return "0000" + short + SUFFIX


async def find(address):
    device = await BleakScanner.find_device_by_address(address, timeout=20)
    check(device is not None, "%s not found by scanning" % address)
    return device


async def heart_rate():
    strap = await find("C0:FF:EE:00:00:01")
    async with BleakClient(strap) as client:
        check(await client.read_gatt_char(uuid16("2a38")) == bytearray([1]), "body sensor location: chest")
        values = []
        await client.start_notify(uuid16("2a37"), lambda _, data: values.append(bytes(data)))
        await wait_for(lambda: len(values) >= 3, 10, "heart rate notifications")
        check(all(40 <= value[1] <= 200 for value in values), "heart rates %r" % values)
        await client.write_gatt_char(uuid16("2a39"), b"\x01", response=True)  # reset energy expended
        await client.stop_notify(uuid16("2a37"))
        check(len(await client.read_gatt_char(uuid16("2a19"))) == 1, "battery level")
    check(not client.is_connected, "disconnected")


async def lamp():
    device = await find("C0:FF:EE:00:00:05")
    async with BleakClient(device) as client:
        power, brightness = "6b1e0002" + LAMP_SUFFIX, "6b1e0003" + LAMP_SUFFIX
        await client.write_gatt_char(power, b"\x01", response=True)
        check(await client.read_gatt_char(power) == bytearray([1]), "power on")
        received = []
        await client.start_notify(brightness, lambda _, data: received.append(bytes(data)))
        await client.write_gatt_char(brightness, bytes([17]), response=True)
        await wait_for(lambda: bytes([17]) in received, 5, "brightness notified on write")
        try:
            await client.write_gatt_char(brightness, bytes([101]), response=True)
            raise AssertionError("brightness 101 was accepted")
        except AssertionError:
            raise
        except Exception as error:  # BleakDBusError (0.22) or BleakGATTProtocolError (newer releases)
            check("0x13" in str(error) or "Value Not Allowed" in str(error), "value not allowed: %r" % error)
        await client.write_gatt_char(uuid16("2a06"), b"\x02", response=False)
        await client.stop_notify(brightness)


async def pairing():
    lock = await find("C0:FF:EE:00:00:06")
    async with BleakClient(lock) as client:
        try:
            await client.read_gatt_char("6b1e1002" + LAMP_SUFFIX)
            raise AssertionError("the lock was readable unpaired")
        except BleakDBusError as error:
            check(error.dbus_error in ("org.bluez.Error.NotPermitted", "org.bluez.Error.AuthenticationFailed"),
                  "unpaired read: %s" % error)
    secure = await find("C0:FF:EE:00:00:07")
    async with BleakClient(secure) as client:
        await client.pair()
        check(len(await client.read_gatt_char(uuid16("2a6e"))) == 2, "temperature readable once paired")


async def faults():
    strap = await find("C0:FF:EE:00:00:01")
    dropped = asyncio.Event()
    # The first two connects fail with le-connection-abort-by-local; bleak retries them itself
    # (bleak >= 1.0 only after Connected went true and false again, as bluetoothd reports it).
    client = BleakClient(strap, disconnected_callback=lambda _: dropped.set(), timeout=20)
    await client.connect()
    check(client.is_connected, "connected after bleak's own retries")
    dropped.clear()  # the aborted attempts' Connected true→false may have called the callback already
    check(await client.read_gatt_char(uuid16("2a38")) == bytearray([1]), "body sensor location")
    await asyncio.wait_for(dropped.wait(), 20)  # the strap drops every connection after disconnect_after
    check(not client.is_connected, "dropped")


asyncio.run({"heart-rate": heart_rate, "lamp": lamp, "pairing": pairing, "faults": faults}[sys.argv[1]]())
print("bleak %s ok" % sys.argv[1])
