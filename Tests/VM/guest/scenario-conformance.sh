# Scenario: the central library's conformance run on hci0 against BLEBridge's own
# PeripheralManager on hci1, both through the real bluetoothd. The transcript goes to the
# output directory, where run-tier.sh compares it with the same run against the simulator.
. "$(dirname "$0")/bluez-up.sh"
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin="${BLEBRIDGE_BIN_DIR:-$repo/.build/debug}"
name="BLEBridge Conformance"
# btvirt reports an advertisement only when advertising is switched on: refresh every second.
"$bin/ble-conformance" peripheral --adapter hci1 --name "$name" --refresh-advertising-ms 1000 >/tmp/out/peripheral.log 2>&1 &
peripheral=$!
sleep 2
kill -0 $peripheral 2>/dev/null || { echo "guest: peripheral failed"; cat /tmp/out/peripheral.log; exit 1; }
# BLEBRIDGE_LOG=debug: central.log holds every connection lifecycle step, for reading failures.
BLEBRIDGE_LOG=debug timeout 150 "$bin/ble-conformance" central --adapter hci0 --strap "$name" --lamp "$name" --thermometer "$name" \
    > /tmp/out/transcript.jsonl 2>/tmp/out/central.log
status=$?
cat /tmp/out/transcript.jsonl
[ $status = 0 ] || { echo "guest: central failed ($status)"; tail -30 /tmp/out/central.log; tail -20 /tmp/out/peripheral.log; tail -60 /tmp/bluetoothd.log; }
kill $peripheral 2>/dev/null
exit $status
