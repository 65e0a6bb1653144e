#!/usr/bin/env bash
# Installs what BLEBridge needs to build, run its demo and run its tests on Debian 12.
# Run as root (it uses apt-get and pip), or install the listed packages yourself.
set -euo pipefail

packages=(
    pkg-config
    libdbus-1-dev libmosquitto-dev libsqlite3-dev libssl-dev   # C libraries the Swift modules link
    dbus-daemon dbus-bin                                       # private test buses, dbus-send
    systemd                                                    # busctl (independent D-Bus client in tests)
    mosquitto mosquitto-clients                                # local broker for the demo and tests
    openssl                                                    # test certificates
    python3 python3-dbus python3-gi python3-venv python3-pip   # independent D-Bus client in tests, bleak
    python3-jsonschema                                         # docs/config.schema.json test
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "BLEBridge needs these Debian packages: ${missing[*]}" >&2
        echo "Install them with: sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "BLEBridge needs a Swift 6 toolchain on PATH (swift.org/install/linux)." >&2
    exit 1
fi

# bleak (Python BLE library) for the simulator's fidelity test, in a venv beside the build.
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.build/venv"
# Pinned: bleak 0.22.3 (with dbus-fast) supports Python 3.11 and BlueZ 5.66; the test uses it unchanged.
bleak_version=0.22.3
# A second venv holds bleak's newest release (pinned when it was added; raise it with each new
# release): the fidelity suite runs both, so the simulator keeps working with old and new clients.
bleak_newest_version=3.1.0
bleak_venv() { # DIR VERSION
    [[ -x "$1/bin/python" ]] || /usr/bin/python3 -m venv --system-site-packages "$1"
    if ! "$1/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('bleak') != '$2')" 2>/dev/null; then
        "$1/bin/pip" install -q "bleak==$2" >/dev/null
    fi
}
if [[ "${BLEBRIDGE_SKIP_PYTHON:-0}" != "1" ]]; then
    bleak_venv "$venv" "$bleak_version"
    bleak_venv "$root/.build/venv-bleak-newest" "$bleak_newest_version"
fi
