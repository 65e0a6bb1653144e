#!/usr/bin/env bash
# Re-captures the simulator's reference data from a stock bluetoothd 5.66 (no -E) in the VM tier,
# against BlueZ's own example GATT server and advertisement (bluez-test-scripts, unmodified), and
# rewrites Tests/BlueZSimulatorTests/Reference/bluez-5.66 with the fresh files (README.md and the
# SIGTERM captures, sigterm-*.txt from scenario-sigterm-capture.sh, stay).
# RealBlueZFidelityTests and sim_client's reference check then compare the simulator with them.
# Usage: Tests/VM/capture-reference.sh [OUTDIR]   (prepares the VM tier first when needed)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
reference="$root/Tests/BlueZSimulatorTests/Reference/bluez-5.66"
out=${1:-"$root/.build/vm/out/capture-reference"}
rm -rf "$out"
mkdir -p "$out"
[[ -f "$root/.build/vm/initramfs.gz" ]] || "$root/Tests/VM/prepare.sh"
dpkg-query -W -f='${Status}' bluez-test-scripts 2>/dev/null | grep -q "install ok installed" || "$root/Tests/VM/prepare.sh"
BLEBRIDGE_VM_TIMEOUT=${BLEBRIDGE_VM_TIMEOUT:-900} "$root/Tests/VM/run-guest.sh" "$root/Tests/VM/guest/capture-reference.sh" "$out"
for file in errors.jsonl bluetoothctl.txt managed-objects-connected.json managed-objects-disconnected.json; do
    [[ -s "$out/$file" ]] || { echo "capture-reference: $file missing or empty in $out" >&2; exit 1; }
done
find "$reference" -maxdepth 1 -type f ! -name README.md ! -name 'sigterm-*.txt' -delete
cp "$out"/errors.jsonl "$out"/roles.txt "$out"/bluetoothctl.txt "$out"/managed-objects-*.json "$out"/introspect-*.xml "$reference/"
echo "capture-reference: $(wc -l < "$reference/errors.jsonl") probe answers and $(ls "$reference" | wc -l) files in $reference"
