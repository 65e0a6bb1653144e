#!/usr/bin/env bash
# `make faults` and `make soak` (issue 19): builds the gateway (debug, or FAULTS_BINARY=PATH to
# measure another build, e.g. .build/release/blebridge), a venv with paho-mqtt
# (.build/venv-faults) and clockshift.so, then runs the fault campaign or the soak.
#   Tests/Faults/run.sh faults [CASE …]   every case, or the ones named (see campaign.py)
#   Tests/Faults/run.sh soak              20 minutes; the plot is copied to docs/soak.png
#   Tests/Faults/run.sh eventmem [KIND …]   the gateway's memory per soak event, one kind at a time
#   Tests/Faults/run.sh brokerloss term|kill   mosquitto alone: acknowledged QoS 1 messages lost across restarts
# Needs root (a tmpfs is mounted for the full-disk case; setpriv runs the gateway as nobody for
# the read-only case), dbus-daemon, mosquitto, busctl, gnuplot (soak). Not part of scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
what=${1:?usage: Tests/Faults/run.sh faults|soak [CASE …]}
shift
for tool in dbus-daemon mosquitto busctl setpriv cc; do
    command -v "$tool" >/dev/null || { echo "faults: $tool is missing (./scripts/setup.sh)" >&2; exit 1; }
done
if [[ "$what" == soak ]] && ! command -v gnuplot >/dev/null; then
    echo "faults: gnuplot is missing (apt-get install gnuplot-nox)" >&2
    exit 1
fi
binary=${FAULTS_BINARY:-}
if [[ -z "$binary" ]]; then
    swift build --product blebridge
    binary=$root/.build/debug/blebridge
fi
venv=$root/.build/venv-faults
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import paho.mqtt' 2>/dev/null || "$venv/bin/pip" install -q "paho-mqtt==2.1.0"
mkdir -p .build/faults
cc -shared -fPIC -O2 -Wall -Wextra -Werror -o .build/faults/clockshift.so Tests/Faults/clockshift.c -ldl
cc -shared -fPIC -O2 -Wall -Wextra -Werror -o .build/faults/heapprobe.so Tests/Faults/heapprobe.c -lpthread
case "$what" in
    faults)
        # The SIGKILL judgement's own checks first (it must fail what it must fail).
        (cd Tests/Faults && "$venv/bin/python" -m unittest -q test_judge)
        FAULTS_RESULTS=${FAULTS_RESULTS:-$root/.build/faults/results.md} \
            exec "$venv/bin/python" Tests/Faults/campaign.py "$binary" "$@"
        ;;
    soak)
        export SOAK_OUTPUT=${SOAK_OUTPUT:-$root/.build/soak}
        # The depth and size judgement's own checks first (it must fail what it must fail).
        (cd Tests/Faults && "$venv/bin/python" -m unittest -q test_soak_judge)
        status=0
        "$venv/bin/python" Tests/Faults/soak.py "$binary" || status=$?
        [[ ! -f "$SOAK_OUTPUT/soak.png" ]] || cp "$SOAK_OUTPUT/soak.png" docs/soak.png
        exit "$status"
        ;;
    eventmem)
        exec "$venv/bin/python" Tests/Faults/eventmem.py "$binary" "$@"
        ;;
    brokerloss)
        exec "$venv/bin/python" Tests/Faults/brokerloss.py "$@"
        ;;
    *) echo "faults: unknown mode $what (faults, soak, eventmem or brokerloss)" >&2; exit 64 ;;
esac
