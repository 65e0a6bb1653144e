#!/usr/bin/env bash
# The test command: installs what is missing, checks formatting, builds and runs every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh"
swift format lint --strict --recursive Package.swift Sources Tests
swift build --build-tests
# The real-BlueZ tier (a VM with bluetoothd and virtual controllers; needs root for its packages).
if [[ "${BLEBRIDGE_SKIP_VM:-0}" == "1" ]]; then
    echo "test: BLEBRIDGE_SKIP_VM=1, skipping the real-BlueZ VM tier" >&2
elif [[ $(id -u) -ne 0 ]] && ! dpkg-query -W qemu-system-x86 bluez-test-tools >/dev/null 2>&1; then
    echo "test: skipping the real-BlueZ VM tier: run as root once so Tests/VM/prepare.sh can install its packages" >&2
else
    Tests/VM/run-tier.sh
fi
swift test --skip-build "$@"
