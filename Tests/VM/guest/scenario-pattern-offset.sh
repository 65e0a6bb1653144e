# Scenario: how bluetoothd's software filter (no controller-patterns) compares patterns.
# bluetoothd -E, the other controller advertising BTHome service data (0xFCD2, packet id changed
# every tick, as scenario-passive-monitor.sh), the UUID list d2 fc and the name "bleb", and
# pattern_probe.py's monitors for 40 s: `uuid-first` (16, d2 fc at offset 0: the UUID) and
# `after-uuid` (16, 40 at offset 0: the byte after the UUID), `uuid-list` (03, d2 fc) and `name`
# (09, "bleb"), and `gateway` (the gateway's first BTHome monitor: 16 d2fc and 16 40…45).
# Records how many DeviceFound calls each got in /tmp/out/pattern-offset.txt; fails only when none
# got any (the rig did not work). Measured: docs/configuration.md, "What each version gives".
# vm-opt-in: a measurement of bluetoothd's behaviour, not of the gateway
. "$(dirname "$0")/bluez-up.sh"
guest=$(dirname "$0")
kill "$BLUETOOTHD_PID"; wait "$BLUETOOTHD_PID" 2>/dev/null
/usr/libexec/bluetooth/bluetoothd -n -d -E >>/tmp/bluetoothd.log 2>&1 &
BLUETOOTHD_PID=$!
bluez_has_both || { echo "guest: bluetoothd -E does not list both controllers"; exit 1; }
for index in 0 1; do btmgmt --index $index power on >/dev/null 2>&1; done
advertise() {
    local tick=0
    while :; do
        tick=$((tick + 1))
        btmgmt --index 1 rm-adv 1 >/dev/null 2>&1
        btmgmt --index 1 add-adv -c -d "$(printf '0916d2fc4000%02x02d0070303d2fc0509626c6562' $((tick % 256)))" 1 >/dev/null 2>&1 \
            && echo "$(date +%s.%N) $tick" >> /tmp/out/advertised.log
        sleep 1
    done
}
advertise &
ADVERTISER_PID=$!
python3 -u "$guest/pattern_probe.py" hci0 40 > /tmp/out/probe.log 2>&1
kill "$ADVERTISER_PID" 2>/dev/null
count() { grep -c "^$1 DeviceFound" /tmp/out/probe.log; }
uuid_first=$(count uuid-first) after_uuid=$(count after-uuid) uuid_list=$(count uuid-list) name=$(count name)
gateway=$(count gateway)
advertised=$(wc -l < /tmp/out/advertised.log)
line="kernel $(uname -r); bluetoothd $(/usr/libexec/bluetooth/bluetoothd -v); $advertised advertisements; DeviceFound: uuid-first $uuid_first, after-uuid $after_uuid, uuid-list $uuid_list, name $name, gateway $gateway"
echo "guest: $line"
echo "$line" > /tmp/out/pattern-offset.txt
[ $((uuid_first + after_uuid + uuid_list + name)) -gt 0 ] || { echo "guest: FAIL no monitor got DeviceFound"; cat /tmp/out/probe.log; exit 1; }
exit 0
