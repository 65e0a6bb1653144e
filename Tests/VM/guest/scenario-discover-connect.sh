# Scenario: real bluetoothd with two virtual controllers; hci1 advertises, hci0 scans.
. "$(dirname "$0")/bluez-up.sh"
btmgmt --index 1 connectable on >/dev/null
btmgmt --index 1 discov on >/dev/null
# A discovery session lives as long as its D-Bus client: keep bluetoothctl running.
bluetoothctl --timeout 12 scan on >/tmp/scan.log 2>&1 &
sleep 1
for i in 1 2 3 4 5 6 7 8; do
    # btvirt 5.66 reports an advertisement once per advertising enable: toggle it.
    btmgmt --index 1 advertising on >/dev/null 2>&1
    sleep 1
    busctl --system tree org.bluez | grep -q dev_ && break
    btmgmt --index 1 advertising off >/dev/null 2>&1
done
busctl --system tree org.bluez | grep -q dev_ || { echo "guest: nothing discovered"; cat /tmp/scan.log; exit 1; }
dev=$(busctl --system tree org.bluez | grep -o '/org/bluez/hci0/dev_[0-9A-F_]*' | head -1)
echo "guest: discovered $dev after $i advertising toggles"
busctl --system call org.bluez "$dev" org.bluez.Device1 Connect || { echo "guest: Connect failed"; exit 1; }
for _ in $(seq 1 50); do
    [ "$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 ServicesResolved)" = "b true" ] && break
    sleep 0.2
done
[ "$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 ServicesResolved)" = "b true" ] || { echo "guest: services never resolved"; exit 1; }
echo "guest: connected, services resolved:"
busctl --system tree org.bluez --list | grep "^$dev/"
