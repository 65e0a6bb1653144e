#!/usr/bin/env bash
# `make bench-adverts` (issue 20): CPU per advertisement, BLEBridge against Theengs Gateway, side by
# side on the same input.
#
# Both read the same simulated BlueZ (`blebridge simulate` on a private dbus-daemon): ADV_DEVICES
# passive BTHome v2 sensors (service data fcd2: packet id, battery, temperature, humidity), each
# advertising new data every ADV_INTERVAL while discovery runs, i.e. one `PropertiesChanged`
# (ServiceData) per sensor per interval, through dbus-daemon, to every scanning client. Each side
# decodes them and publishes to its own mosquitto on a free loopback port; a `mosquitto_sub` counts
# what arrives. Nothing else is configured: BLEBridge with `auto_devices` (every decoder), Home
# Assistant off, defaults otherwise (outbox `memory_first`, QoS 1); Theengs Gateway (PyPI, in
# .build/venv-theengs) scanning actively without pause (`-sd 100000 -tb 0`), discovery and presence
# off, defaults otherwise.
#
# Each run: a warm-up until messages for every sensor arrived (at most 60 s), then ADV_SECONDS (20)
# of measurement. CPU = Δ(utime + stime) of the process under test (/proc/<pid>/stat, all threads)
# over the phase, divided by the advertisements sent in it (sensors × phase ÷ interval, from the
# simulator's clock: both sides get the same signals) and by the messages it published. ADV_REPEAT
# (3) runs of each side, the first of the pair swapped each repetition; the report gives medians with
# [min–max] and the ratio of the medians. Nice 0, no priority boost.
#
# Environment: ADV_DEVICES (100), ADV_INTERVAL (100, ms), ADV_SECONDS (20), ADV_REPEAT (3),
# ADV_SIDES ("gateway theengs"; one of them to run one side),
# BENCH_SKIP_BUILD=1 (use the existing release binary), BENCH_BINARY (a blebridge to measure),
# BENCH_KEEP=1 (keep the run's directory), BENCH_PROFILE=DIR (`perf record -e cpu-clock -g` of the
# process under test during each measured phase, to DIR/<side>-<n>.perf.data; perf's sampling adds
# to the CPU measured).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/bench/lib.sh"

devices=${ADV_DEVICES:-100}
interval_ms=${ADV_INTERVAL:-100}
seconds=${ADV_SECONDS:-20}
repeat=${ADV_REPEAT:-3}

log() { echo "$(date -u +%H:%M:%S) $*" >&2; }

blebridge=${BENCH_BINARY:-$root/.build/release/blebridge}
if [ -z "${BENCH_BINARY:-}" ] && [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
    log "building the release binary"
    swift build -c release --product blebridge >&2
fi
if [ -n "${BENCH_PROFILE:-}" ] && ! command -v perf >/dev/null; then
    echo "bench/adverts.sh: BENCH_PROFILE needs perf: apt-get install linux-perf" >&2
    exit 1
fi
[ -x "$blebridge" ] || { echo "no blebridge binary at $blebridge (build it, or set BENCH_BINARY)" >&2; exit 1; }
command -v mosquitto >/dev/null && command -v mosquitto_sub >/dev/null && command -v dbus-daemon >/dev/null || {
    echo "needs mosquitto, mosquitto-clients and dbus-daemon (./scripts/setup.sh test installs them)" >&2
    exit 1
}

venv=$root/.build/venv-theengs
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import TheengsGateway' 2>/dev/null; then
    log "installing Theengs Gateway into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'TheengsGateway==1.8.0' >&2
fi
theengs_version=$("$venv/bin/pip" show TheengsGateway 2>/dev/null | sed -n 's/^Version: //p')

work=$(mktemp -d "${TMPDIR:-/tmp}/blebridge-adverts.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "${BENCH_KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The scenario: ADV_DEVICES BTHome sensors, new data at every advertisement, no RSSI jitter (so each
# advertisement is one ServiceData change, nothing else).
python3 - "$work/scenario.json" "$devices" "$interval_ms" <<'PY'
import json, sys
path, count, interval = sys.argv[1], int(sys.argv[2]), sys.argv[3] + "ms"
devices = [{
    "id": "adv_%d" % i,
    "address": "C0:FF:EE:20:%02X:%02X" % (i >> 8, i & 0xFF),
    # "ATC_…": Theengs Gateway's decoder takes this BTHome layout from pvvx firmware, by that name.
    "name": "ATC_20%02X%02X" % (i >> 8, i & 0xFF),
    "connectable": False,
    "rssi": -60,
    "rssi_jitter": 0,
    "advertisement": {
        "service_data": [{"uuid": "fcd2", "generator": {
            "kind": "bthome", "base": 15 + i % 10, "drift": 2.0, "humidity": 40 + i % 20, "start": 100 - i % 50}}],
        "update_interval": interval,
    },
} for i in range(count)]
json.dump({"name": "adverts-bench", "timing": {"advertising_interval": interval}, "devices": devices},
          open(path, "w"), indent=1)
PY

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
clock_ticks=$(getconf CLK_TCK)

stop_pid() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# run SIDE N: one measured run; appends "side cpu_us_per_adv cpu_us_per_msg msgs adverts" to results.
run() {
    local side=$1 n=$2 dir=$work/$1-$2
    mkdir -p "$dir"
    start_dbus "$dir" || return 1
    local dbus=$bus_pid
    pids+=("$dbus")
    start_mosquitto "$dir" || return 1
    local broker=$mosquitto_pid
    pids+=("$broker")
    "$blebridge" simulate --scenario "$work/scenario.json" --bus "$bus_address" >"$dir/simulator.log" 2>&1 &
    local simulator=$!
    pids+=("$simulator")
    mosquitto_sub -h 127.0.0.1 -p "$mqtt_port" -t '#' -v >"$dir/received" 2>"$dir/sub.log" &
    local sub=$!
    pids+=("$sub")
    local deadline=$((SECONDS + 10))
    until grep -q "org.bluez" "$dir/simulator.log" 2>/dev/null || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
    sleep 0.5
    local pid topic_pattern
    if [ "$side" = gateway ]; then
        cat >"$dir/gateway.json" <<JSON
{
 "gateway_id": "bench",
 "bluetooth": {"adapter": "hci0", "bus": "$bus_address"},
 "mqtt": {"url": "mqtt://127.0.0.1:$mqtt_port", "client_id": "blebridge-adverts"},
 "outbox": {"path": "$dir/outbox.sqlite"},
 "homeassistant": {"enabled": false},
 "auto_devices": {"enabled": true, "max_devices": $((devices + 50))}
}
JSON
        "$blebridge" run --config "$dir/gateway.json" >"$dir/process.log" 2>&1 &
        pid=$!
        topic_pattern='^blebridge/[a-z0-9_]*_20[0-9a-f]{4} '
    else
        DBUS_SYSTEM_BUS_ADDRESS=$bus_address "$venv/bin/python" -m TheengsGateway -H 127.0.0.1 -P "$mqtt_port" \
            -D 0 -pr 0 -sd 100000 -tb 0 -ll WARNING >"$dir/process.log" 2>&1 &
        pid=$!
        topic_pattern='^home/TheengsGateway/BTtoMQTT/C0FFEE20'
    fi
    pids+=("$pid")
    # Warm-up: until every sensor's messages arrive.
    deadline=$((SECONDS + 60))
    local seen=0
    while [ $SECONDS -lt $deadline ]; do
        seen=$(grep -a -E "$topic_pattern" "$dir/received" | awk '{print $1}' | sort -u | wc -l)
        [ "$seen" -ge "$devices" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    if [ "$seen" -lt "$devices" ]; then
        log "[$side-$n] warm-up: messages for only $seen of $devices sensors; $(tail -2 "$dir/process.log" | tr '\n' ' ')"
        stop_pid "$pid"; stop_pid "$sub"; stop_pid "$simulator"; stop_pid "$broker"; stop_pid "$dbus"
        return 1
    fi
    sleep 2
    local before_lines before_cpu start end after_lines after_cpu
    before_lines=$(grep -a -c -E "$topic_pattern" "$dir/received" || true)
    before_cpu=$(cpu_ticks "$pid")
    start=$(date +%s.%N)
    if [ -n "${BENCH_PROFILE:-}" ]; then
        mkdir -p "$BENCH_PROFILE"
        perf record -q -e cpu-clock -g -p "$pid" -o "$BENCH_PROFILE/$side-$n.perf.data" -- sleep "$seconds" \
            >"$BENCH_PROFILE/$side-$n.record.log" 2>&1 || log "[$side-$n] perf record failed"
    else
        sleep "$seconds"
    fi
    after_cpu=$(cpu_ticks "$pid")
    end=$(date +%s.%N)
    after_lines=$(grep -a -c -E "$topic_pattern" "$dir/received" || true)
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    stop_pid "$pid"; stop_pid "$sub"; stop_pid "$simulator"; stop_pid "$broker"; stop_pid "$dbus"
    python3 - "$side" "$before_cpu" "$after_cpu" "$clock_ticks" "$start" "$end" "$before_lines" "$after_lines" \
        "$devices" "$interval_ms" "$load" <<'PY' | tee -a "$work/results" >&2
import sys
side, c0, c1, hz, t0, t1, m0, m1, devices, interval, load = sys.argv[1:]
cpu_us = (int(c1) - int(c0)) / int(hz) * 1e6
elapsed = float(t1) - float(t0)
adverts = int(devices) * elapsed / (int(interval) / 1000)
msgs = int(m1) - int(m0)
print("%s %.1f %.1f %d %.0f %.2f %s" % (side, cpu_us / adverts, cpu_us / msgs if msgs else float("nan"),
                                       msgs, adverts, elapsed, load))
PY
}

log "adverts bench: $devices BTHome sensors every ${interval_ms} ms ($((devices * 1000 / interval_ms))/s), ${seconds} s a run, $repeat runs a side; nice $(nice); Theengs Gateway $theengs_version"
for n in $(seq 1 "$repeat"); do
    if [ $((n % 2)) = 1 ]; then order="gateway theengs"; else order="theengs gateway"; fi
    for side in $order; do
        [[ " ${ADV_SIDES:-gateway theengs} " == *" $side "* ]] || continue
        run "$side" "$n" || log "[$side-$n] failed"
    done
done

python3 - "$work/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
def column(side, i):
    return [float(r[i]) for r in rows if r[0] == side]
def cell(values):
    if not values:
        return "–"
    return "%.1f [%.1f–%.1f]" % (statistics.median(values), min(values), max(values))
print("| | BLEBridge | Theengs Gateway | ratio |")
print("|---|---|---|---|")
for title, i in (("CPU µs per advertisement sent", 1), ("CPU µs per message published", 2),
                 ("messages published per run", 3)):
    g, t = column("gateway", i), column("theengs", i)
    ratio = "%.2f×" % (statistics.median(g) / statistics.median(t)) if g and t else "–"
    print("| %s | %s | %s | %s |" % (title, cell(g), cell(t), ratio))
print("| advertisements sent per run | %s | %s | |" % (cell(column("gateway", 4)), cell(column("theengs", 4))))
print("| 1-minute load at the end | %s | %s | |" % (cell(column("gateway", 6)), cell(column("theengs", 6))))
PY
