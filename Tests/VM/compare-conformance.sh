#!/usr/bin/env bash
# Runs the conformance central against the simulator (demo scenario, on the host) and compares
# its transcript with the one from real bluetoothd in the VM. Steps that only exist because the
# simulator's strap, lamp and thermometer are three devices (one in the VM) are left out; every
# other step must have the same outcome and error code. Usage: compare-conformance.sh VM_TRANSCRIPT
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="${BLEBRIDGE_BIN_DIR:-$root/.build/debug}"
vm_transcript=$1
out=$(dirname "$vm_transcript")
"$bin/blebridge" simulate --scenario demo > "$out/simulator.log" 2>&1 &
simulator=$!
trap 'kill $simulator 2>/dev/null; wait $simulator 2>/dev/null || true' EXIT
address=""
for _ in $(seq 1 100); do
    address=$(sed -n "s/^export DBUS_SYSTEM_BUS_ADDRESS='\(.*\)'$/\1/p" "$out/simulator.log")
    [[ -n "$address" ]] && break
    sleep 0.1
done
[[ -n "$address" ]] || { echo "compare: the simulator did not start:"; cat "$out/simulator.log"; exit 1; } >&2
status=0
DBUS_SYSTEM_BUS_ADDRESS="$address" timeout 120 "$bin/ble-conformance" central > "$out/simulator-transcript.jsonl" || status=$?
python3 - "$vm_transcript" "$out/simulator-transcript.jsonl" <<'PY'
import json, sys
def load(path):
    steps = []
    for line in open(path):
        entry = json.loads(line)
        if entry["step"].startswith(("scan finds ", "connect the ")):
            continue
        steps.append((entry["step"], entry["outcome"], entry.get("code", "")))
    return steps
real, simulated = load(sys.argv[1]), load(sys.argv[2])
if real != simulated:
    print("conformance: the simulator differs from real bluetoothd:")
    for a, b in zip(real + [None] * len(simulated), simulated + [None] * len(real)):
        if a != b and (a or b):
            print("  bluetoothd:", a, "\n  simulator: ", b)
    sys.exit(1)
print("conformance: simulator and real bluetoothd agree on %d steps" % len(real))
PY
exit "$status"
