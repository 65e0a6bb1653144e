#!/usr/bin/env bash
# Installs what BLEBridge needs on Debian 12/13 (Raspberry Pi OS), for one of three jobs:
#
#   scripts/setup.sh build   build the gateway and its .deb (deploy/package): the C libraries'
#                            -dev packages, pkg-config, dpkg-dev. Nothing is started.
#   scripts/setup.sh demo    build, plus what `blebridge demo` runs: dbus-daemon and mosquitto.
#   scripts/setup.sh [test]  demo, plus the test tools: busctl, openssl, Python with dbus/gi/jsonschema,
#                            and bleak and Jinja2 in .build/venv (skipped with BLEBRIDGE_SKIP_PYTHON=1).
#
# Run as root (it uses apt-get), or install the listed packages yourself: as a normal user it
# prints the missing ones and exits 1. Files it makes inside the checkout (.build/venv) belong to
# the checkout's owner even under sudo, so a later build as that user is not refused.
set -euo pipefail

job=${1:-test}
build_packages=(
    pkg-config
    libdbus-1-dev libmosquitto-dev libsqlite3-dev libssl-dev   # C libraries the Swift modules link
    dpkg-dev                                                   # deploy/package: dpkg-shlibdeps, dpkg-architecture
)
demo_packages=(
    dbus-daemon                                                # the demo's private bus
    mosquitto                                                  # the demo's local broker (Debian also starts its own service)
)
test_packages=(
    dbus-bin                                                   # dbus-send
    systemd                                                    # busctl (independent D-Bus client), systemd-analyze
    mosquitto-clients                                          # mosquitto_sub/pub in tests
    openssl                                                    # test certificates
    python3 python3-dbus python3-gi python3-venv python3-pip   # independent D-Bus client in tests, bleak
    python3-jsonschema                                         # docs/config.schema.json test
    bluez                                                      # bluetoothctl (BluetoothctlTranscriptTests)
)
case "$job" in
    build) packages=("${build_packages[@]}") ;;
    demo) packages=("${build_packages[@]}" "${demo_packages[@]}") ;;
    test) packages=("${build_packages[@]}" "${demo_packages[@]}" "${test_packages[@]}") ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64 ;;
esac

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "BLEBridge ($job) needs these Debian packages: ${missing[*]}" >&2
        echo "Install them with: sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "BLEBridge needs a Swift 6 toolchain on PATH: on Debian 13 / Raspberry Pi OS trixie" >&2
    echo "\`sudo apt install swiftlang\`, otherwise swift.org/install/linux." >&2
    exit 1
fi

[[ "$job" == test && "${BLEBRIDGE_SKIP_PYTHON:-0}" != "1" ]] || exit 0

# bleak (Python BLE library) for the simulator's fidelity test, in a venv beside the build.
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.build/venv"
# Run as the checkout's owner: a root-owned .build (or .build/venv) makes a later `swift build`
# by that user fail with "invalid access to .build/repositories".
owner=$(stat -c %u "$root")
as_owner=()
if [[ $(id -u) -eq 0 && "$owner" != 0 ]]; then
    as_owner=(setpriv --reuid="$owner" --regid="$(stat -c %g "$root")" --clear-groups
        env HOME="$(getent passwd "$owner" | cut -d: -f6)" PIP_NO_CACHE_DIR=1)
fi
# Pinned: bleak 0.22.3 (with dbus-fast) supports Python 3.11 and BlueZ 5.66; the test uses it unchanged.
bleak_version=0.22.3
"${as_owner[@]}" mkdir -p "$root/.build"
# A second venv holds bleak's newest release (pinned when it was added; raise it with each new
# release): the fidelity suite runs both, so the simulator keeps working with old and new clients.
bleak_newest_version=3.1.0
bleak_venv() { # DIR VERSION
    [[ -x "$1/bin/python" ]] || "${as_owner[@]}" /usr/bin/python3 -m venv --system-site-packages "$1"
    if ! "$1/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('bleak') != '$2')" 2>/dev/null; then
        "${as_owner[@]}" "$1/bin/pip" install -q "bleak==$2" >/dev/null
    fi
}
bleak_venv "$venv" "$bleak_version"
bleak_venv "$root/.build/venv-bleak-newest" "$bleak_newest_version"
# Jinja2, Home Assistant's template engine: the end-to-end tests render the discovery payloads'
# value templates with it (HomeAssistantControlTests). Pinned like bleak.
jinja2_version=3.1.6
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('jinja2') != '$jinja2_version')" 2>/dev/null; then
    "${as_owner[@]}" "$venv/bin/pip" install -q "jinja2==$jinja2_version" >/dev/null
fi
# The reference parsers of Home Assistant's Bluetooth integrations, the oracles of the differential
# decoder suite (Tests/DifferentialTests, scripts/differential/oracle.py). A venv of their own:
# they need bleak >= 1, which would replace the pinned bleak 0.22.3 above. Pinned like bleak.
oracle_venv="$root/.build/venv-oracles"
oracle_packages=("xiaomi-ble==1.21.2" "bthome-ble==3.25.0" "govee-ble==1.5.2" "thermopro-ble==1.1.4" "inkbird-ble==1.7.1")
# Issue 17 consumer sensor families (each installs cleanly next to the ones above).
oracle_packages+=("PySwitchbot==3.1.0" "qingping-ble==1.3.0" "sensorpush-ble==1.9.0" "oralb-ble==1.1.3" "mopeka-iot-ble==1.0.0")
# Victron Instant Readout (AES-CTR with the device's advertisement key).
oracle_packages+=("victron-ble==0.9.3")
[[ -x "$oracle_venv/bin/python" ]] || "${as_owner[@]}" /usr/bin/python3 -m venv "$oracle_venv"
if ! "$oracle_venv/bin/python" -c "
import importlib.metadata as m, sys
sys.exit(any(m.version(n) != v for n, v in (p.split('==') for p in sys.argv[1:])))" "${oracle_packages[@]}" 2>/dev/null; then
    "${as_owner[@]}" "$oracle_venv/bin/pip" install -q "${oracle_packages[@]}" >/dev/null
fi
