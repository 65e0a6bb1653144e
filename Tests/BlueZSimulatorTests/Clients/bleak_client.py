"""Fidelity check: drives the simulator with bleak, the widely used Python BLE library, unchanged.
bleak talks to BlueZ on the system bus; DBUS_SYSTEM_BUS_ADDRESS points it at the private bus.
Scan, connect, read, write, notifications (StartNotify and AcquireNotify paths), disconnect."""
import asyncio
import sys

from bleak import BleakClient, BleakScanner

LAMP = "C0:FF:EE:00:00:05"
STRAP = "C0:FF:EE:00:00:01"
SUFFIX = "-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
POWER = "6b1e0002" + SUFFIX
BRIGHTNESS = "6b1e0003" + SUFFIX
ALERT = "00002a06-0000-1000-8000-00805f9b34fb"
HEART_RATE = "00002a37-0000-1000-8000-00805f9b34fb"
BATTERY = "00002a19-0000-1000-8000-00805f9b34fb"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


async def wait_for(predicate, timeout, what):
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


async def main():
    # Scan in rounds until every device the checks need was seen: the simulator advertises from
    # inside the Swift test process, which a full parallel run can starve for longer than a round
    # (one 1.5 s scan saw only two devices there).
    needed = {STRAP, LAMP, "C0:FF:EE:00:00:03", "C0:FF:EE:00:00:04"}
    by_address = {}
    for _ in range(20):
        found = await BleakScanner.discover(timeout=1.5, return_adv=True)
        by_address.update({device.address: (device, adv) for device, adv in found.values()})
        if needed <= set(by_address):
            break
    check(STRAP in by_address and LAMP in by_address, "scan found %r" % sorted(by_address))
    strap, strap_adv = by_address[STRAP]
    check(strap_adv.local_name == "Polar H10 SIM", "local name %r" % strap_adv.local_name)
    check("0000180d-0000-1000-8000-00805f9b34fb" in strap_adv.service_uuids, "advertised 180d")
    check(-80 <= strap_adv.rssi <= -30, "rssi %r" % strap_adv.rssi)
    beacon = by_address["C0:FF:EE:00:00:04"][1]
    check(list(beacon.manufacturer_data) == [0x004C] and beacon.manufacturer_data[0x004C][:2] == b"\x02\x15", "iBeacon data")
    bthome = by_address["C0:FF:EE:00:00:03"][1]
    check(bthome.service_data["0000fcd2-0000-1000-8000-00805f9b34fb"][0] == 0x40, "BTHome service data")

    async with BleakClient(by_address[LAMP][0]) as lamp:
        check(lamp.is_connected, "lamp connected")
        service = lamp.services.get_service("6b1e0001" + SUFFIX)
        check(service is not None, "lamp service")
        check(sorted(lamp.services.get_characteristic(POWER).properties) ==
              ["notify", "read", "write", "write-without-response"], "power properties")
        check(await lamp.read_gatt_char(BRIGHTNESS) == bytearray([100]), "brightness 100")
        await lamp.write_gatt_char(POWER, b"\x01", response=True)
        check(await lamp.read_gatt_char(POWER) == bytearray([1]), "power on after write")
        await lamp.write_gatt_char(ALERT, b"\x02", response=False)
        received = []
        await lamp.start_notify(BRIGHTNESS, lambda _, data: received.append(bytes(data)))
        await lamp.write_gatt_char(BRIGHTNESS, bytes([42]), response=True)
        await wait_for(lambda: bytes([42]) in received, 3, "brightness notification")
        await lamp.stop_notify(BRIGHTNESS)
        description = lamp.services.get_characteristic(POWER).descriptors
        user = [d for d in description if d.uuid.startswith("00002901")][0]
        check(await lamp.read_gatt_descriptor(user.handle) == bytearray(b"Power"), "descriptor read")
    check(not lamp.is_connected, "lamp disconnected")

    async with BleakClient(strap, bluez={"use_start_notify": True}) as client:
        await client._backend._acquire_mtu()  # AcquireNotify (the strap has no write-without-response)
        check(client.mtu_size == 247, "mtu %r" % client.mtu_size)
        check(len(await client.read_gatt_char(BATTERY)) == 1, "battery read")
        values = []
        await client.start_notify(HEART_RATE, lambda _, data: values.append(bytes(data)))
        await wait_for(lambda: len(values) >= 3, 5, "heart rate notifications (StartNotify)")
        check(all(value[0] & 0x06 == 0x06 and 40 <= value[1] <= 200 for value in values), "heart rate values %r" % values)
        await client.stop_notify(HEART_RATE)
    async with BleakClient(strap) as client:
        values = []
        await client.start_notify(HEART_RATE, lambda _, data: values.append(bytes(data)))
        await wait_for(lambda: len(values) >= 2, 5, "heart rate notifications (default path)")
        await client.disconnect()
        check(not client.is_connected, "strap disconnected")
    print("bleak ok")


if __name__ == "__main__":
    asyncio.run(main())
