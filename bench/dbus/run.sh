#!/usr/bin/env bash
# DBus receive micro-benchmark: BlueZ-shaped PropertiesChanged signals from a second process
# (bench/dbus/emitter.c), received and fully decoded by the Swift DBus module (dbus-bench) and
# by a plain C libdbus receiver (bench/dbus/receiver.c), alternating, on one private
# dbus-daemon. Prints each run and the medians. COUNT (signals per run, default 200000) and
# ROUNDS (default 5) tune it. Not a test: run it on an otherwise idle machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
count=${COUNT:-200000}
rounds=${ROUNDS:-5}
work=$(mktemp -d)
daemon=""
cleanup() {
    [[ -n "$daemon" ]] && kill "$daemon" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

flags=$(pkg-config --cflags --libs dbus-1)
# shellcheck disable=SC2086
cc -O2 -o "$work/receiver" "$root/bench/dbus/receiver.c" $flags
# shellcheck disable=SC2086
cc -O2 -o "$work/emitter" "$root/bench/dbus/emitter.c" $flags
(cd "$root" && swift build -c release --product dbus-bench >&2)
swift_receiver="$(cd "$root" && swift build -c release --show-bin-path)/dbus-bench"

. "$root/bench/lib.sh"
start_dbus "$work/bus"
daemon=$bus_pid
address=$bus_address

# run <receiver command…>: starts the receiver, waits for READY, emits, prints its result line.
run() {
    local program=$1
    shift
    "$program" "$address" "$count" "$@" >"$work/out" &
    local receiver=$!
    wait_for "$work/out" READY 10 || { echo "receiver $program did not start" >&2; exit 1; }
    "$work/emitter" "$address" "$count"
    wait "$receiver"
    grep -v READY "$work/out"
}

echo "# receiver count seconds signals/s cpu-seconds checksum   ($count signals per run)"
for _ in $(seq "$rounds"); do
    run "$work/receiver" | tee -a "$work/results"
    run "$swift_receiver" | tee -a "$work/results"
    run "$swift_receiver" batches | tee -a "$work/results"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
c_rate=$(awk '$1 == "c" { print $4 }' "$work/results" | median)
swift_rate=$(awk '$1 == "swift" { print $4 }' "$work/results" | median)
c_cpu=$(awk '$1 == "c" { print $5 * 1e6 / $2 }' "$work/results" | median)
swift_cpu=$(awk '$1 == "swift" { print $5 * 1e6 / $2 }' "$work/results" | median)
batch_rate=$(awk '$1 == "swift-batches" { print $4 }' "$work/results" | median)
batch_cpu=$(awk '$1 == "swift-batches" { print $5 * 1e6 / $2 }' "$work/results" | median)
echo "median C receiver:                               $c_rate signals/s, $(printf %.2f "$c_cpu") µs CPU per signal"
echo "median Swift receiver, signals(matching:):       $swift_rate signals/s, $(printf %.2f "$swift_cpu") µs CPU per signal"
echo "median Swift receiver, signalBatches(matching:): $batch_rate signals/s, $(printf %.2f "$batch_cpu") µs CPU per signal"
awk -v s="$swift_rate" -v b="$batch_rate" -v c="$c_rate" \
    'BEGIN { printf "Swift / C throughput: %.0f%% (signals), %.0f%% (signalBatches)\n", 100 * s / c, 100 * b / c }'
