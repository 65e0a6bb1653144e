# Captures what real bluetoothd 5.66 exports and answers, as reference data for the simulator's
# fidelity: the managed-object tree, introspection of each interface, and the exact errors.
# Output: files in /tmp/out (the host's output directory).
. "$(dirname "$0")/bluez-up.sh"
O=/tmp/out
btmgmt --index 1 connectable on >/dev/null
btmgmt --index 1 discov on >/dev/null
bluetoothctl --timeout 40 scan on >/dev/null 2>&1 &
sleep 1
for i in 1 2 3 4 5 6 7 8; do
    btmgmt --index 1 advertising on >/dev/null 2>&1; sleep 1
    busctl --system tree org.bluez | grep -q dev_ && break
    btmgmt --index 1 advertising off >/dev/null 2>&1
done
dev=$(busctl --system tree org.bluez | grep -o '/org/bluez/hci0/dev_[0-9A-F_]*' | head -1)
[ -n "$dev" ] || { echo "guest: nothing discovered"; exit 1; }
call() { echo "\$ busctl call $*" >> $O/errors.txt; busctl --system call org.bluez "$@" >> $O/errors.txt 2>&1; echo "exit=$?" >> $O/errors.txt; }
busctl --system introspect --xml-interface org.bluez /org/bluez/hci0 > $O/introspect-adapter.xml
busctl --system introspect --xml-interface org.bluez "$dev" > $O/introspect-device-disconnected.xml
busctl --system --json=pretty call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects > $O/managed-objects-discovered.json
P="/usr/bin/python3 $(dirname "$0")/probe_errors.py $O/errors.jsonl $dev"
: > $O/errors.jsonl
busctl --system call org.bluez "$dev" org.bluez.Device1 Connect
busctl --system --json=pretty call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects > $O/managed-objects-connected.json
for path in $(busctl --system tree org.bluez --list | grep "^$dev/"); do
    name=$(echo "$path" | sed "s|$dev/||; s|/|-|g")
    busctl --system introspect --xml-interface org.bluez "$path" > "$O/introspect-$name.xml"
done
busctl --system introspect --xml-interface org.bluez "$dev" > $O/introspect-device-connected.xml
$P connected
busctl --system call org.bluez "$dev" org.bluez.Device1 Disconnect
sleep 1
busctl --system --json=pretty call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects > $O/managed-objects-disconnected.json
$P disconnected
busctl --system set-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered b false
sleep 1
busctl --system --json=pretty call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects > $O/managed-objects-poweredoff.json
$P poweredoff
echo "guest: reference captured"
