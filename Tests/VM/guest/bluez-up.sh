# Sourced by guest scripts: starts a system bus, two virtual LE controllers (btvirt) and
# bluetoothd 5.66, in that order, and waits until both controllers are powered on in BlueZ.
# Facts behind the order and the retry: Tests/VM/README (docs/testing.md).
set -u
export SYSTEMD_PAGER=cat PAGER=cat SYSTEMD_COLORS=0
mkdir -p /run/dbus /var/lib/bluetooth
# The logs live on the guest's tmpfs and are copied to the output directory when the script
# exits: a debug log written line by line over 9p slowed bluetoothd's start on a busy host.
trap 'cp /tmp/bluetoothd.log /tmp/btvirt.log /tmp/out/ 2>/dev/null' EXIT
dbus-daemon --system --fork --nopidfile || { echo "guest: dbus-daemon failed"; exit 20; }

controllers_ready() {
    # both controllers registered with a non-zero address
    local count=0 address
    for hci in /sys/class/bluetooth/hci0 /sys/class/bluetooth/hci1; do
        [ -e "$hci" ] || return 1
        address=$(btmgmt --index "${hci##*/hci}" info 2>/dev/null | awk '/addr / {print $2; exit}')
        [ -n "$address" ] && [ "$address" != "00:00:00:00:00:00" ] && count=$((count + 1))
    done
    [ "$count" = 2 ]
}

attempt=0
while :; do
    attempt=$((attempt + 1))
    btvirt -L -l2 >/tmp/btvirt.log 2>&1 &
    BTVIRT_PID=$!
    for _ in $(seq 1 50); do controllers_ready && break; sleep 0.2; done
    controllers_ready && break
    echo "guest: controllers not ready (attempt $attempt), restarting btvirt"
    kill "$BTVIRT_PID" 2>/dev/null; wait "$BTVIRT_PID" 2>/dev/null
    [ "$attempt" -ge 3 ] && { echo "guest: btvirt controllers never came up"; exit 21; }
    sleep 1
done

# Debug log, kept in the scenario's output directory (.build/vm/out/NAME/bluetoothd.log).
/usr/libexec/bluetooth/bluetoothd -n -d >/tmp/bluetoothd.log 2>&1 &
BLUETOOTHD_PID=$!
# Up to 30 s: on a busy host bluetoothd took over 10 s to register both controllers.
for _ in $(seq 1 150); do
    [ "$(bluetoothctl list 2>/dev/null | grep -c Controller)" = 2 ] && break
    sleep 0.2
done
[ "$(bluetoothctl list 2>/dev/null | grep -c Controller)" = 2 ] || { echo "guest: bluetoothd does not see 2 controllers"; tail -50 /tmp/bluetoothd.log; exit 22; }
for index in 0 1; do btmgmt --index $index power on >/dev/null 2>&1; done
echo "guest: bluez up: $(bluetoothctl list | tr '\n' ' ')"
