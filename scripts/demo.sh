#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the gateway. Without Bluetooth
# hardware it runs against the BlueZ simulator and a local mosquitto (`blebridge demo`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh" demo
swift build -c release --product blebridge
exec "$root/.build/release/blebridge" demo "$@"
