#!/usr/bin/env bash
# End-to-end benchmark (make bench): the simulator in load mode on a private bus, a local
# mosquitto, and, in turn, the C relay (the ceiling) and the gateway (release build), each
# measured by the same subscriber. Prints throughput, latency, CPU per message and memory.
#
# Environment: BENCH_SECONDS (measurement window, default 20), BENCH_DEVICES (default 20),
# BENCH_RATE (notifications/s per device for the latency run, default 50 = 1,000/s total),
# BENCH_HIGH_RATE (per device for the throughput run, default 1000).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${BENCH_SECONDS:-20}
devices=${BENCH_DEVICES:-20}
rate=${BENCH_RATE:-50}
high_rate=${BENCH_HIGH_RATE:-1000}
work=$(mktemp -d /tmp/blebridge-bench.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

swift build -c release --product blebridge >/dev/null
blebridge="$root/.build/release/blebridge"
flags=$(pkg-config --cflags --libs dbus-1 sqlite3 libmosquitto)
cc -O2 -o "$work/relay" bench/relay.c $flags -lpthread
cc -O2 -o "$work/sink" bench/sink.c $(pkg-config --cflags --libs libmosquitto) -lpthread
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_bus() {
    cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path=$work/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
<limit name="max_replies_per_connection">50000</limit><limit name="max_incoming_bytes">1000000000</limit>
<limit name="max_outgoing_bytes">1000000000</limit><limit name="max_match_rules_per_connection">50000</limit>
</busconfig>
CONF
    dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile --print-address=1 >"$work/bus.address" &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$work/bus.address" ] && break; sleep 0.05; done
    bus=$(head -1 "$work/bus.address")
}

start_broker() {
    port=$(free_port)
    printf 'listener %s 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\nmax_inflight_messages 0\npersistence false\n' "$port" >"$work/mosquitto.conf"
    "$mosquitto" -c "$work/mosquitto.conf" >/dev/null 2>&1 &
    pids+=($!)
    sleep 0.3
}

# The simulator with load-mode devices notifying $2 times a second each ($1 devices).
start_simulator() {
    "$blebridge" simulate --bus "$bus" --scenario load >"$work/simulator.log" 2>&1 &
    simulator=$!
    pids+=($simulator)
    for _ in $(seq 100); do
        dbus-send --bus="$bus" --print-reply --dest=io.blebridge.Simulator /io/blebridge/Simulator \
            io.blebridge.Simulator1.SetLoad uint32:"$1" double:"$2" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "simulator did not start: $(cat "$work/simulator.log")" >&2
    exit 1
}

set_rate() {
    dbus-send --bus="$bus" --print-reply --dest=io.blebridge.Simulator /io/blebridge/Simulator \
        io.blebridge.Simulator1.SetLoad uint32:"$1" double:"$2" >/dev/null
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

# measure NAME PID FILTER: runs the sink for $seconds; prints a JSON line with CPU and RSS added.
measure() {
    local name=$1 pid=$2 filter=$3
    "$work/sink" "$port" "$filter" 3 "$seconds" >"$work/$name.sink" &
    local sink=$!
    sleep 3
    local before after
    before=$(cpu_ticks "$pid")
    wait "$sink"
    after=$(cpu_ticks "$pid")
    local result
    result=$(tail -1 "$work/$name.sink")
    local hz
    hz=$(getconf CLK_TCK)
    python3 - "$name" "$result" "$before" "$after" "$hz" "$(rss_kb "$pid")" <<'PY'
import json, sys
name, result, before, after, hz, rss = sys.argv[1:]
r = json.loads(result)
cpu = (int(after) - int(before)) / int(hz)
r["cpu_s"] = round(cpu, 3)
r["cpu_us_per_msg"] = round(cpu * 1e6 / r["received"], 2) if r["received"] else None
r["rss_mb"] = round(int(rss) / 1024, 1)
print(json.dumps({name: r}))
PY
}

gateway_config() { # $1 devices
    python3 - "$1" "$work/outbox-gateway.sqlite" <<'PY'
import json, sys
n, outbox = int(sys.argv[1]), sys.argv[2]
devices = [{"id": f"load{i:04d}", "match": {"address": f"C0:FF:EE:10:{i >> 8:02X}:{i & 0xFF:02X}"},
            "connection": "keep_connected",
            "subscribe": [{"characteristic": "6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "mode": "notify", "decoder": "raw"}]}
           for i in range(n)]
print(json.dumps({"gateway_id": "bench", "bluetooth": {"max_connections": max(5, n)},
                  "mqtt": {"raw_topics": True}, "homeassistant": {"enabled": False},
                  "outbox": {"path": outbox}, "devices": devices}))
PY
}

run_relay() {
    start_simulator "$devices" "$1"
    "$work/relay" "$bus" "$port" "$work/outbox-relay-$1.sqlite" "$devices" >"$work/relay.out" 2>"$work/relay.err" &
    local relay=$!
    pids+=($relay)
    for _ in $(seq 600); do grep -q ready "$work/relay.out" && break; sleep 0.1; done
    measure "relay_${2}" "$relay" 'relay/#'
    kill "$relay"; wait "$relay" 2>/dev/null || true
    kill "$simulator"; wait "$simulator" 2>/dev/null || true
}

run_gateway() { # $1 rate, $2 label, $3 devices
    local count=${3:-$devices}
    start_simulator "$count" "$1"
    gateway_config "$count" >"$work/gateway.json"
    rm -f "$work/outbox-gateway.sqlite"*
    "$blebridge" run --config "$work/gateway.json" --bus "$bus" --broker "mqtt://127.0.0.1:$port" \
        --log-level warning >"$work/gateway.log" 2>&1 &
    local gateway=$!
    pids+=($gateway)
    sleep $((5 + count / 5))
    measure "gateway_${2}" "$gateway" 'blebridge/+/raw/#'
    kill "$gateway"; wait "$gateway" 2>/dev/null || true
    kill "$simulator"; wait "$simulator" 2>/dev/null || true
}

start_bus
start_broker
echo "# $devices devices; latency/CPU at $((devices * rate))/s, throughput at $((devices * high_rate))/s offered; ${seconds}s windows"
run_relay "$rate" latency
run_gateway "$rate" latency
run_relay "$high_rate" throughput
run_gateway "$high_rate" throughput
run_gateway 1 memory50 50
