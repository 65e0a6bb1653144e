#!/usr/bin/env bash
# The test command: installs what is missing, checks formatting, builds and runs every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh" test
swift format lint --strict --recursive Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources
swift build --build-tests
# The real-BlueZ tier (a VM with bluetoothd and virtual controllers; needs root for its packages).
if [[ "${BLEBRIDGE_SKIP_VM:-0}" == "1" ]]; then
    echo "test: BLEBRIDGE_SKIP_VM=1, skipping the real-BlueZ VM tier" >&2
elif [[ $(id -u) -ne 0 ]] && ! dpkg-query -W qemu-system-x86 bluez-test-tools >/dev/null 2>&1; then
    echo "test: skipping the real-BlueZ VM tier: run as root once so Tests/VM/prepare.sh can install its packages" >&2
else
    Tests/VM/run-tier.sh
fi
# Every test runs once. A run with at most 3 failed tests reruns those once on their own and says
# so loudly (`test: FAILED once, retrying`); a test that fails twice fails the run. The retry is
# kept until `make stress` shows 20 clean full runs (issue 20): a failure it hides is still a race
# to find, and the log names it.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# At most 4 tests at a time. Unlimited, Swift Testing starts all ~500 at once: hundreds of
# daemons, brokers and simulators share two cores and two cooperative threads, and a simulator's
# reply waited over 25 s behind everyone else's work (D-Bus NoReply; 1-9 failures a run). With 4
# the run was as fast (about 2 min on the loaded machine) and passed. Override by exporting it.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-4}"
if swift test --skip-build "$@" 2>&1 | tee "$log"; then
    exit 0
fi
failed=$(grep -v '✘ Test run with' "$log" | sed -n 's/^.*✘ Test \(.*\) failed after .*/\1/p' | sort -u || true)
if [[ -z "$failed" ]]; then
    echo "test: FAILED without a failing test (a crash of the test process?): see the output above" >&2
else
    echo "test: FAILED ($(echo "$failed" | wc -l) tests):" >&2
    echo "$failed" | sed 's/^/  /' >&2
fi
if [[ -z "$failed" ]] || (($(echo "$failed" | wc -l) > 3)); then
    exit 1
fi
echo "test: FAILED once, retrying on their own: $(echo "$failed" | tr '\n' ' ')" >&2
swift test --skip-build --filter "$(echo "$failed" | sed 's/[^A-Za-z0-9_].*//' | grep . | paste -sd'|')"
