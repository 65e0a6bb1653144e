#!/usr/bin/env bash
# SD-card wear (issue 18, item 5): bytes the gateway writes to disk per reading, in each outbox
# mode, with the demo's five simulated devices and its broker up. Called by `make bench`
# (bench/run.sh) and runnable on its own:
#
#   bench/sdcard.sh BLEBRIDGE     e.g. bench/sdcard.sh .build/release/blebridge
#
# For each mode it runs `blebridge demo` (simulator, mosquitto and gateway; the gateway and the
# simulator share that one process, which is the one measured) with the sample config.json and
# `outbox.mode` set, waits BENCH_SD_WARMUP seconds (default 15: connections, discovery, the first
# reads), then measures for BENCH_SD_SECONDS (default 60): write_bytes of /proc/<pid>/io (bytes
# this process caused to be written to storage: the outbox, its WAL, anything else) and the
# device messages a subscriber received on blebridge/<device> (each one an outbox entry). The
# outbox lives under BENCH_SD_DIR (default <checkout>/.build/bench-sdcard, a real disk: tmpfs
# writes are not counted). Prints one table row per mode and "MB/day" extrapolated from the window.
# BENCH_SD_MODES (default "durable memory_first") picks the modes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
blebridge=${1:?usage: bench/sdcard.sh BLEBRIDGE}
warmup=${BENCH_SD_WARMUP:-15}
seconds=${BENCH_SD_SECONDS:-60}
modes=${BENCH_SD_MODES:-"durable memory_first"}
base=${BENCH_SD_DIR:-"$root/.build/bench-sdcard"}
mkdir -p "$base"
work=$(mktemp -d "$base/run.XXXXXX")
demo_pid=""
sub_pid=""
cleanup() {
    [ -n "$sub_pid" ] && kill "$sub_pid" 2>/dev/null
    [ -n "$demo_pid" ] && kill -INT "$demo_pid" 2>/dev/null && wait "$demo_pid" 2>/dev/null
    [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

write_bytes() { awk '$1 == "write_bytes:" { print $2 }' "/proc/$1/io"; }

printf '%-13s | %8s | %12s | %14s | %10s | %s\n' "outbox mode" readings "written (B)" "bytes/reading" "MB/day" "spilled"
printf '%s\n' "---|---|---|---|---|---"
for mode in $modes; do
    dir="$work/$mode"
    mkdir -p "$dir/tmp"
    jq --arg mode "$mode" '.outbox.mode = $mode' "$root/config.json" >"$dir/config.json"
    # The demo keeps its outbox and broker files in $TMPDIR; its output goes to a pipe-backed
    # file in /dev/shm (writes to tmpfs are not counted as storage writes, and this is another process).
    out=$(mktemp /dev/shm/blebridge-sd.XXXXXX)
    TMPDIR="$dir/tmp" "$blebridge" demo -c "$dir/config.json" --quiet >"$out" 2>&1 &
    demo_pid=$!
    port=""
    for _ in $(seq 1 200); do
        port=$(sed -n 's/.*broker mqtt:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out" | head -1)
        [ -n "$port" ] && break
        kill -0 "$demo_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        echo "bench/sdcard.sh: the demo did not start ($mode): $(tail -5 "$out")" >&2
        exit 1
    fi
    sleep "$warmup"
    messages=$(mktemp /dev/shm/blebridge-sd-sub.XXXXXX)
    mosquitto_sub -h 127.0.0.1 -p "$port" -q 1 -t 'blebridge/+' -v >"$messages" 2>/dev/null &
    sub_pid=$!
    sleep 0.5
    before=$(write_bytes "$demo_pid")
    sleep "$seconds"
    after=$(write_bytes "$demo_pid")
    kill "$sub_pid" 2>/dev/null || true
    wait "$sub_pid" 2>/dev/null || true
    sub_pid=""
    readings=$(grep -cv '^blebridge/bridge ' "$messages" || true)
    spilled=$(grep -c 'readings held in memory written to the outbox' "$out" || true)
    kill -INT "$demo_pid"
    wait "$demo_pid" 2>/dev/null || true
    demo_pid=""
    rm -f "$messages" "$out"
    written=$((after - before))
    awk -v m="$mode" -v r="$readings" -v w="$written" -v s="$seconds" -v sp="$spilled" 'BEGIN {
        printf "%-13s | %8d | %12d | %14s | %10.1f | %s\n", m, r, w,
            (r > 0 ? sprintf("%.0f", w / r) : "n/a"), w / s * 86400 / 1e6, sp " spill(s)"
    }'
done
