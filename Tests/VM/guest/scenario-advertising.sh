# Scenario: PeripheralManager's advertisement (local name, service UUID, manufacturer data,
# service data) as real bluetoothd on the other controller sees it.
. "$(dirname "$0")/bluez-up.sh"
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin="${BLEBRIDGE_BIN_DIR:-$repo/.build/debug}"
"$bin/ble-conformance" peripheral --adapter hci1 --name "BLEB Adv" --refresh-advertising-ms 1000 \
    --manufacturer-data ffff:c0ffee --service-data 180f:57 >/tmp/out/peripheral.log 2>&1 &
bluetoothctl --timeout 40 scan on >/tmp/scan.log 2>&1 &
dev=""
for _ in $(seq 1 60); do
    dev=$(busctl --system tree org.bluez --list 2>/dev/null | grep -E '^/org/bluez/hci0/dev_[0-9A-F_]+$' | head -1)
    if [ -n "$dev" ] && busctl --system get-property org.bluez "$dev" org.bluez.Device1 ManufacturerData >/dev/null 2>&1 \
        && busctl --system get-property org.bluez "$dev" org.bluez.Device1 ServiceData >/dev/null 2>&1; then
        break
    fi
    sleep 0.5
done
[ -n "$dev" ] || { echo "guest: nothing discovered"; cat /tmp/out/peripheral.log; exit 1; }
name=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 Name)
uuids=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 UUIDs)
manufacturer=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 ManufacturerData)
service=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 ServiceData)
echo "guest: Name $name; UUIDs $uuids; ManufacturerData $manufacturer; ServiceData $service"
fail=0
[ "$name" = 's "BLEB Adv"' ] || { echo "guest: wrong name"; fail=1; }
echo "$uuids" | grep -q '0000180d-0000-1000-8000-00805f9b34fb' || { echo "guest: 180d missing"; fail=1; }
[ "$manufacturer" = 'a{qv} 1 65535 ay 3 192 255 238' ] || { echo "guest: wrong manufacturer data"; fail=1; }
[ "$service" = 'a{sv} 1 "0000180f-0000-1000-8000-00805f9b34fb" ay 1 87' ] || { echo "guest: wrong service data"; fail=1; }
exit $fail
