#!/usr/bin/env bash
# End-to-end benchmark (`make bench`): the gateway against a C relay doing the same hot-path work
# (notification → SQLite WAL outbox → MQTT QoS 1 publish → delete on PUBACK), both fed by the same
# simulator through the same input path (one AcquireNotify socket per device), on a private
# dbus-daemon and a mosquitto on a free loopback port. Not part of the tests.
#
#   bench/run.sh            full run: relay, gateway and gateway_memory_first in turn, BENCH_REPEAT times; prints a table
#   bench/run.sh --smoke    builds the C programs and runs the relay on its C load for a few seconds (< 30 s)
#   bench/run.sh --relay-only | --gateway-only   (--gateway-only runs both gateway suites)
#   bench/run.sh --durable-only     without the gateway_memory_first suite (the gateway in its default
#                                   outbox mode, memory_first, which commits a reading only when its
#                                   PUBACK is late; the relay and the gateway suite commit every one)
#   bench/run.sh --with-c-load      also the relay on the C emitter's PropertiesChanged signals (a reference)
#   bench/run.sh --with-relay-memory  also the relay without its outbox (`relay --memory`: no SQLite, PUBACKs
#                                   only counted), in turn with the others: what reading each notification,
#                                   publishing it and reading its PUBACK cost a C program doing nothing else
#   bench/run.sh --with-relay-floor also the same on one thread (`relay --memory --one-thread`: the MQTT
#                                   socket in the relay's epoll, no libmosquitto thread, no hand-over)
#   bench/run.sh --memory-first-only  without the gateway suite (`durable`); gateway_memory_first stays
#   bench/run.sh --with-signals     also the relay on the simulator's PropertiesChanged signals (StartNotify,
#                                   through dbus-daemon: the path a client without AcquireNotify takes)
#   bench/run.sh --no-sdcard        without the SD-card step
#   bench/run.sh --sdcard-only      only the SD-card step: bytes written per reading in each outbox
#                                   mode, the demo's five devices (bench/sdcard.sh; BENCH_SD_SECONDS)
#
# Tunables (environment): BENCH_REPEAT (repetitions of each suite, the suites in turn, default 3),
# BENCH_SECONDS (length of each ramp step, default 5), BENCH_LATENCY_SECONDS (length of the
# latency/CPU/memory phase, 10), BENCH_DEVICES (configured in the gateway, 50), BENCH_LATENCY_RATE
# (total notifications/s of the latency/CPU/memory phase, 1000), BENCH_RAMP (total rates of the coarse
# throughput ramp, ascending), BENCH_REFINE (bisection steps between the last sustained and the first
# failing coarse step, 3).
# BENCH_SKIP_BUILD=1 uses the existing .build/static/release/blebridge; BENCH_BLEBRIDGE=PATH measures
# another binary (e.g. .build/release/blebridge, dynamically linked). BENCH_KEEP=1 keeps the working
# directory (logs, configuration, databases). BENCH_PROFILE=DIR samples the process under test with
# `perf record -e cpu-clock -g` (Debian's linux-perf) during each latency phase and writes
# DIR/<phase>.perf.data and DIR/<phase>.txt (the functions by self time, then by children).
# BENCH_PROFILE_CALLGRAPH replaces perf's `-g` (frame pointers), e.g. `--call-graph dwarf,16384` to see
# callers inside libsqlite3 and libc, which Debian builds without frame pointers. BENCH_PROFILE_EVENT
# replaces the sampled event (`cpu-clock`), e.g. `probe_libc:malloc` after `perf probe -x
# /lib/x86_64-linux-gnu/libc.so.6 malloc` records every allocation with its caller (the sample count
# divided by the messages received is the allocations per message).
# Everything runs at the caller's priority (no boost: `BENCH_NICE` was removed, issue 20), on
# loopback; every phase has a fixed duration.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=full
run_relay=1
run_relay_c_load=0
run_relay_signals=0
run_relay_memory=0
run_relay_floor=0
run_gateway=1
run_gateway_memory_first=1
run_sdcard=1
for argument in "$@"; do
    case "$argument" in
        --smoke) mode=smoke; run_relay=0; run_relay_c_load=1; run_gateway=0; run_gateway_memory_first=0; run_sdcard=0 ;;
        --relay-only) run_gateway=0; run_gateway_memory_first=0; run_sdcard=0 ;;
        --gateway-only) run_relay=0; run_sdcard=0 ;;
        --sdcard-only) run_relay=0; run_gateway=0; run_gateway_memory_first=0 ;;
        --durable-only) run_gateway_memory_first=0 ;;
        --with-c-load) run_relay_c_load=1 ;;
        --with-signals) run_relay_signals=1 ;;
        --with-relay-memory) run_relay_memory=1 ;;
        --with-relay-floor) run_relay_floor=1 ;;
        --memory-first-only) run_gateway=0 ;;
        --no-sdcard) run_sdcard=0 ;;
        -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "bench/run.sh: unknown argument $argument (see --help)" >&2; exit 64 ;;
    esac
done
if [ -n "${BENCH_PROFILE:-}" ] && ! command -v perf >/dev/null; then
    echo "bench/run.sh: BENCH_PROFILE needs perf: apt-get install linux-perf" >&2
    exit 69
fi
if [ -n "${BENCH_NICE:-}" ]; then
    echo "bench/run.sh: BENCH_NICE was removed: the figures are measured at the caller's priority (issue 20)" >&2
    exit 64
fi

seconds=${BENCH_SECONDS:-5}
latency_seconds=${BENCH_LATENCY_SECONDS:-10}
devices=${BENCH_DEVICES:-50}
latency_rate=${BENCH_LATENCY_RATE:-1000}
ramp=${BENCH_RAMP:-"2000 2500 3200 4000 5000 6400 8000 10000 12800 16000 20000 25000 32000 40000 50000 64000 80000 100000"}
refine=${BENCH_REFINE:-3}
repeat=${BENCH_REPEAT:-3}
if [ "$mode" = smoke ]; then
    seconds=2
    latency_seconds=2
    ramp="4000"
    refine=0
    repeat=1
fi
clock_ticks=$(getconf CLK_TCK)
# bluetooth.max_connections accepts at most 64 (real controllers stall beyond ~7; the gateway warns),
# so every configured device (50 by default) is connected and notifying; both loads use that many streams.
gateway_connections=$((devices < 64 ? devices : 64))
active=${BENCH_ACTIVE:-$gateway_connections}

work=$(mktemp -d /tmp/blebridge-bench.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "${BENCH_KEEP:-}" ]; then log "logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
log() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------- build
bin="$root/.build/bench"
mkdir -p "$bin"
cflags="-O2 -Wall -Wextra -Werror -std=gnu11"
src="$root/bench/c-relay"
# shellcheck disable=SC2046
cc $cflags -o "$bin/relay" "$src/relay.c" $(pkg-config --cflags --libs dbus-1 libmosquitto sqlite3) -lpthread
# shellcheck disable=SC2046
cc $cflags -o "$bin/emitter" "$src/emitter.c" $(pkg-config --cflags --libs dbus-1)
# shellcheck disable=SC2046
cc $cflags -o "$bin/subscriber" "$src/subscriber.c" $(pkg-config --cflags --libs libmosquitto) -lpthread
# shellcheck disable=SC2046
cc $cflags -o "$bin/bluez_client" "$src/bluez_client.c" $(pkg-config --cflags --libs dbus-1)
log "built relay, emitter, subscriber, bluez_client in $bin"

# The gateway is measured as it ships: deploy/package builds it with --static-swift-stdlib (one
# binary, the Swift runtime and Foundation linked in), in its own scratch directory here so it
# does not invalidate the usual .build.
blebridge=${BENCH_BLEBRIDGE:-"$root/.build/static/release/blebridge"}
if { [ "$run_gateway" = 1 ] || [ "$run_gateway_memory_first" = 1 ] || [ "$run_relay" = 1 ] || [ "$run_relay_memory" = 1 ] || [ "$run_relay_floor" = 1 ] || [ "$run_relay_signals" = 1 ] || [ "$run_sdcard" = 1 ]; } &&
    [ -z "${BENCH_SKIP_BUILD:-}" ] && [ -z "${BENCH_BLEBRIDGE:-}" ]; then
    log "building blebridge (release, --static-swift-stdlib as deploy/package does)…"
    (cd "$root" && swift build -c release --static-swift-stdlib --product blebridge \
        --scratch-path "$root/.build/static" >"$work/swift-build.log" 2>&1) || {
        tail -20 "$work/swift-build.log" >&2
        echo "bench/run.sh: release build failed" >&2
        exit 1
    }
fi

# ---------------------------------------------------------------- helpers
# free_port, wait_for, start_dbus, start_mosquitto
. "$root/bench/lib.sh"

# CPU time of a process (all threads) in clock ticks: utime + stime from /proc/<pid>/stat.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# The same summed over processes: every process on the path of a suite (path_pids: its
# dbus-daemon, broker, simulator and the process under test), so no one's work goes uncharged.
path_ticks() {
    local pid total=0
    for pid in "$@"; do total=$((total + $(cpu_ticks "$pid"))); done
    echo "$total"
}
# Per thread: "<tid> <ticks> <name> <voluntary context switches>" (names may repeat). A voluntary
# switch is the thread going to sleep (epoll_wait, a condition variable): one per wake-up.
thread_ticks() {
    local task line tid comm fields switches
    for task in /proc/"$1"/task/*; do
        line=$(cat "$task/stat" 2>/dev/null) || continue
        tid=${line%% *}
        comm=${line#*(}
        comm=${comm%)*}
        read -ra fields <<<"${line##*) }"
        switches=$(awk '$1 == "voluntary_ctxt_switches:" {print $2}' "$task/status" 2>/dev/null)
        echo "$tid $((fields[11] + fields[12])) ${comm// /_} ${switches:-0}"
    done
}
memory_kb() { awk -v key="$2:" '$1 == key {print $2}' "/proc/$1/status"; }
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

# subscriber_start NAME SINCE [extra args…]: starts the measuring subscriber, waits for SUBACK.
subscriber_start() {
    local name=$1 since=$2
    shift 2
    "$bin/subscriber" --port "$mqtt_port" --topic 'blebridge/+' --since "$since" "$@" >"$work/$name.sub" 2>&1 &
    subscriber_pid=$!
    pids+=("$subscriber_pid")
    wait_for "$work/$name.sub" ready 10 || { echo "subscriber did not subscribe: $(cat "$work/$name.sub")" >&2; exit 1; }
}

subscriber_finish() {
    kill -USR1 "$subscriber_pid"
    wait "$subscriber_pid" || true
}

# Load sources. load_run TOTAL_RATE SECONDS: runs the load for SECONDS, prints "sent=<n> achieved=<n/s>".
relay_load() {
    local total=$1 duration=$2
    "$bin/emitter" --address "$bus_address" --devices "$active" \
        --rate "$(awk -v t="$total" -v d="$active" 'BEGIN{printf "%.6f", t/d}')" --duration "$duration"
}

simulator_call() {
    dbus-send --bus="$bus_address" --print-reply --type=method_call --dest=io.blebridge.Simulator \
        /io/blebridge/Simulator "io.blebridge.Simulator1.$1" "${@:2}"
}

simulator_load() {
    local total=$1 duration=$2 per_device statistics sent achieved dropped
    per_device=$(awk -v t="$total" -v d="$active" 'BEGIN{printf "%.6f", t/d}')
    if ! simulator_call SetLoad "uint32:$devices" "double:$per_device" >/dev/null; then
        log "  the simulator is gone: $(tail -5 "$work"/*-simulator.log 2>/dev/null | tr '\n' ' ')"
        echo "sent=0 achieved=0"
        return
    fi
    sleep "$duration"
    statistics=$(simulator_call GetLoadStatistics)
    simulator_call SetLoad uint32:0 double:0 >/dev/null
    sent=$(grep -A1 '"sent"' <<<"$statistics" | sed -n 's/.*uint64 \([0-9]*\).*/\1/p' | head -1)
    achieved=$(grep -A1 '"achieved_rate"' <<<"$statistics" | sed -n 's/.*double \([0-9.e+]*\).*/\1/p' | head -1)
    # Values the simulator dropped because a client's notify socket was full (as bluetoothd does),
    # summed over the devices: a phase's own, since each phase starts the load anew.
    dropped=$(awk '/"dropped"/ { inside = 1; next } inside && /\]/ { inside = 0 }
        inside && $1 == "uint64" { total += $2 } END { printf "%d", total }' <<<"$statistics")
    echo "sent=${sent:-0} achieved=$(awk -v a="${achieved:-0}" 'BEGIN{printf "%.0f", a}') dropped=${dropped:-0}"
}

# phase NAME LOADFN TARGETPID TOTAL_RATE SECONDS: one fixed-length phase; sets phase_* results.
phase() {
    local name=$1 load=$2 target=$3 total=$4 duration=$5 since cpu_before cpu_after path_before path_after load_result result
    since=$(date +%s%N)
    subscriber_start "$name" "$since"
    cpu_before=$(cpu_ticks "$target")
    path_before=$(path_ticks "${path_pids[@]}")
    thread_ticks "$target" >"$work/$name.threads-before"
    local profiler=""
    if [ -n "${BENCH_PROFILE:-}" ] && [[ "$name" == *-latency ]]; then
        mkdir -p "$BENCH_PROFILE"
        perf record -q -e "${BENCH_PROFILE_EVENT:-cpu-clock}" ${BENCH_PROFILE_CALLGRAPH:--g} -p "$target" -o "$BENCH_PROFILE/$name.perf.data" -- sleep "$duration" \
            >"$BENCH_PROFILE/$name.record.log" 2>&1 &
        profiler=$!
    fi
    load_result=$("$load" "$total" "$duration")
    if [ -n "$profiler" ]; then
        wait "$profiler" || log "  perf record failed: $(tail -2 "$BENCH_PROFILE/$name.record.log")"
        {
            perf report -i "$BENCH_PROFILE/$name.perf.data" --stdio --no-children --sort symbol -g none 2>/dev/null | head -80
            perf report -i "$BENCH_PROFILE/$name.perf.data" --stdio --children --sort symbol -g none 2>/dev/null | head -120
        } >"$BENCH_PROFILE/$name.txt"
    fi
    subscriber_finish
    result=$(tail -1 "$work/$name.sub")
    cpu_after=$(cpu_ticks "$target")
    path_after=$(path_ticks "${path_pids[@]}")
    thread_ticks "$target" >"$work/$name.threads-after"
    # The busiest threads over the phase, for the log: "name ms; wake-ups per message".
    phase_threads=$(awk -v hz="$clock_ticks" -v messages="$(field "$result" unique)" \
        'NR == FNR { before[$1] = $2; woken[$1] = $4; next }
        { all++; d = $2 - before[$1]; w = $4 - woken[$1]; if (d > 0) { busy++; t[$3] += d; n[$3]++; s[$3] += w } }
        END {
            printf "%d threads, %d used CPU:", all, busy
            for (k in t) {
                printf " %s×%d %.0f ms", k, n[k], t[k] * 1000 / hz
                if (messages > 0) printf " (%.2f wake-ups/msg)", s[k] / messages
                printf ";"
            }
            print ""
        }' "$work/$name.threads-before" "$work/$name.threads-after")
    phase_sent=$(field "$load_result" sent)
    phase_achieved=$(field "$load_result" achieved)
    # Of the values lost, those that never reached the process under test: dropped at a full socket.
    phase_dropped=$(field "$load_result" dropped)
    phase_unique=$(field "$result" unique)
    local expected
    expected=$(field "$result" expected)
    [ "${expected:-0}" -gt "${phase_sent:-0}" ] && phase_sent=$expected
    phase_lost=$((phase_sent - phase_unique))
    phase_p50=$(field "$result" p50_ms)
    phase_p99=$(field "$result" p99_ms)
    phase_drain=$(field "$result" drain_ms)
    phase_rate=$(awk -v u="$phase_unique" -v s="$duration" 'BEGIN{printf "%.0f", u/s}')
    phase_cpu_us=$(awk -v c=$((cpu_after - cpu_before)) -v hz="$clock_ticks" -v u="$phase_unique" \
        'BEGIN{ if (u > 0) printf "%.1f", c * 1e6 / hz / u; else print "n/a" }')
    phase_path_us=$(awk -v c=$((path_after - path_before)) -v hz="$clock_ticks" -v u="$phase_unique" \
        'BEGIN{ if (u > 0) printf "%.1f", c * 1e6 / hz / u; else print "n/a" }')
    phase_rss=$(memory_kb "$target" VmRSS)
    phase_hwm=$(memory_kb "$target" VmHWM)
    log "  $name: target $total/s sent $phase_sent (achieved ${phase_achieved}/s) received $phase_unique lost $phase_lost${phase_dropped:+ (at full sockets $phase_dropped)}" \
        "duplicates $(field "$result" duplicates) reordered $(field "$result" reordered)" \
        "p50 ${phase_p50} ms p99 ${phase_p99} ms drain ${phase_drain} ms cpu/msg ${phase_cpu_us} µs (path ${phase_path_us})" \
        "rss $((phase_rss / 1024)) MB hwm $((phase_hwm / 1024)) MB  [$(cut -d' ' -f1-3 /proc/loadavg)]"
    log "    $phase_threads"
}

# A phase is sustained when nothing was lost, the source kept >= 95 % of the asked rate, and the
# backlog drained within 500 ms after the load stopped with p99 <= 250 ms. Sets phase_reason.
phase_sustained() {
    phase_reason=$(awk -v lost="$phase_lost" -v achieved="$phase_achieved" -v total="$1" -v drain="$phase_drain" \
        -v p99="$phase_p99" 'BEGIN{
            if (lost > 0) print "lost " lost;
            else if (achieved < 0.95 * total) print "source reached only " achieved "/s";
            else if (drain > 500 || p99 > 250) print "backlog (p99 " p99 " ms, drain " drain " ms)";
        }')
    [ -z "$phase_reason" ]
}

# suite NAME LOADFN TARGETPID: warm-up, latency/CPU/memory phase, then the throughput ramp.
suite() {
    local name=$1 load=$2 target=$3 total since
    log "[$name] warm-up: waiting for values from $active devices"
    since=$(date +%s%N)
    subscriber_start "$name-warmup" "$since" --wait-devices "$active" --timeout-ms 120000
    local warm_load="" warmed=1
    if [ "$load" = relay_load ]; then
        "$bin/emitter" --address "$bus_address" --devices "$active" --rate 1 --duration 60 >/dev/null &
        warm_load=$!
    else
        simulator_call SetLoad "uint32:$devices" double:1 >/dev/null
    fi
    wait "$subscriber_pid" || warmed=0
    if [ -n "$warm_load" ]; then
        kill "$warm_load" 2>/dev/null || true
        wait "$warm_load" 2>/dev/null || true
    else
        simulator_call SetLoad uint32:0 double:0 >/dev/null
    fi
    if [ "$warmed" = 0 ]; then
        echo "[$name] not every device delivered within 120 s: $(tail -1 "$work/$name-warmup.sub")" >&2
        return 1
    fi
    sleep 1

    log "[$name] latency, CPU and memory at $latency_rate/s ($active devices notifying, ${latency_seconds} s)"
    phase "$name-latency" "$load" "$target" "$latency_rate" "$latency_seconds"
    local latency_p50=$phase_p50 latency_p99=$phase_p99 latency_cpu=$phase_cpu_us latency_path=$phase_path_us
    local latency_rss latency_hwm latency_lost=$phase_lost
    latency_rss=$(awk -v k="$phase_rss" 'BEGIN{printf "%.1f", k/1024}')
    latency_hwm=$(awk -v k="$phase_hwm" 'BEGIN{printf "%.1f", k/1024}')

    # The coarse ramp finds the last sustained step and the first failing one; BENCH_REFINE
    # bisections (geometric) between them narrow it (3 of them: within ~3 % on the default ramp).
    log "[$name] throughput ramp (${seconds} s per step, then $refine refining steps)"
    local best=0 best_total=0 failed_total="" failed_reason=""
    for total in $ramp; do
        if ramp_step "$name" "$load" "$target" "$total"; then
            best=$step_rate
            best_total=$total
            sleep 0.5
        else
            failed_total=$total
            failed_reason=$phase_reason
            break
        fi
    done
    local middle index
    if [ "$best_total" -gt 0 ] && [ -n "$failed_total" ]; then
        for ((index = 0; index < refine; index++)); do
            middle=$(awk -v a="$best_total" -v b="$failed_total" 'BEGIN{printf "%.0f", sqrt(a * b) / 100 * 100}')
            [ "$middle" -gt "$best_total" ] && [ "$middle" -lt "$failed_total" ] || break
            if ramp_step "$name" "$load" "$target" "$middle"; then
                best=$step_rate
                best_total=$middle
                sleep 0.5
            else
                failed_total=$middle
                failed_reason=$phase_reason
            fi
        done
    fi
    # One line per suite run: the report's medians and spreads are taken over these.
    printf '%s %s %s %s %s %s %s %s %s %s %s %s\n' "${name%%-*}" "${name##*-}" "$best" "$best_total" \
        "$latency_p50" "$latency_p99" "$latency_cpu" "$latency_path" "$latency_rss" "$latency_hwm" "$latency_lost" \
        "${failed_total:-none}${failed_reason:+:${failed_reason// /_}}" >>"$work/results"
    return 0
}

# ramp_step NAME LOADFN TARGETPID TOTAL: one ramp step, retried once when not sustained; sets
# step_rate (the received rate) when sustained, and leaves phase_reason when not.
ramp_step() {
    local name=$1 load=$2 target=$3 total=$4
    phase "$name-ramp-$total" "$load" "$target" "$total" "$seconds"
    if ! phase_sustained "$total"; then
        log "  $phase_reason; retrying $total/s once"
        sleep 1
        phase "$name-ramp-$total-retry" "$load" "$target" "$total" "$seconds"
        phase_sustained "$total" || return 1
    fi
    step_rate=$phase_rate
}

# ---------------------------------------------------------------- processes
# Every suite gets a fresh dbus-daemon, mosquitto and (for the simulator's load) simulator.
stop_pid() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

environment_start() {
    start_dbus "$work/$1-bus" || exit 1
    pids+=("$bus_pid")
    suite_pids=("$bus_pid")
    start_mosquitto "$work/$1-mqtt" || exit 1
    pids+=("$mosquitto_pid")
    suite_pids+=("$mosquitto_pid")
    # Charged to every message of the suite, with the simulator and the process under test.
    path_pids=("$bus_pid" "$mosquitto_pid")
}

environment_stop() {
    local index
    for ((index = ${#suite_pids[@]} - 1; index >= 0; index--)); do stop_pid "${suite_pids[index]}"; done
}

# start_relay NAME [relay arguments…]: with --acquire-notify the relay connects the simulator's
# load devices itself first, so it may take up to 90 s to say ready. (`--memory` leaves the --db
# file unopened.)
start_relay() {
    local name=$1
    shift
    "$bin/relay" --address "$bus_address" --db "$work/$name.sqlite" --port "$mqtt_port" "$@" >"$work/$name.out" 2>&1 &
    relay_pid=$!
    pids+=("$relay_pid")
    suite_pids+=("$relay_pid")
    path_pids+=("$relay_pid")
    wait_for "$work/$name.out" ready 100 || { echo "relay did not start: $(cat "$work/$name.out")" >&2; exit 1; }
}

# The simulator (its own process, `blebridge simulate`) owns org.bluez on the private bus; load
# mode adds LOAD-0000… (C0:FF:EE:10:hh:ll, characteristic 6b1e2002-…), each notifying while
# connected and subscribed. Sets missing= when it cannot start.
load_characteristic=6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b
start_simulator() {
    "$blebridge" simulate --bus "$bus_address" --scenario load >"$work/$1-simulator.log" 2>&1 &
    simulator_pid=$!
    pids+=("$simulator_pid")
    suite_pids+=("$simulator_pid")
    path_pids+=("$simulator_pid")
    local deadline=$((SECONDS + 20))
    until simulator_call SetLoad "uint32:$devices" double:1 >/dev/null 2>&1 && simulator_call SetLoad uint32:0 double:0 >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ] || ! kill -0 "$simulator_pid" 2>/dev/null; then
            missing="the simulator did not start: $(tail -3 "$work/$1-simulator.log" | tr '\n' ' ')"
            return 1
        fi
        sleep 0.1
    done
}

# write_gateway_config PATH NAME OUTBOX_MODE: the run NAME's configuration, with an outbox file of its own.
write_gateway_config() {
    python3 - "$1" "$bus_address" "$mqtt_port" "$work/$2.sqlite" "$devices" "$gateway_connections" \
        "$load_characteristic" "$3" <<'PY'
import json, sys
path, bus, port, outbox, count, connections, characteristic, outbox_mode = sys.argv[1:]
devices = [{
    "id": "load-%04d" % i,
    "match": {"address": "C0:FF:EE:10:%02X:%02X" % (i >> 8, i & 0xFF)},
    "connection": "keep_connected",
    "subscribe": [{"characteristic": characteristic, "mode": "notify"}],
} for i in range(int(count))]
config = {
    "gateway_id": "bench",
    "bluetooth": {"adapter": "hci0", "bus": bus, "max_connections": int(connections)},
    # One publish per reading, like the C relay it is compared with (no burst merging).
    "mqtt": {"url": "mqtt://127.0.0.1:%s" % port, "client_id": "blebridge-bench", "qos": 1, "state_window": "0ms"},
    # `durable` in the gateway suite, like the C relay (commit, publish, delete on PUBACK);
    # `memory_first` (the default) in gateway_memory_first: publish from memory, commit only what
    # is not acknowledged within spill_after (2 s).
    "outbox": {"path": outbox, "synchronous": "normal", "mode": outbox_mode},
    "homeassistant": {"enabled": False},
    "devices": devices,
}
with open(path, "w") as f:
    json.dump(config, f, indent=1)
PY
}

# start_gateway NAME OUTBOX_MODE: like the relay's, each run's outbox starts empty in a file of its own. One file
# for every run left the next run a backlog to replay: an overloaded ramp step's readings, still in
# the outbox when the gateway was stopped (61,370 rows at one start, in a 24 MB file).
start_gateway() {
    write_gateway_config "$work/gateway.json" "$1" "$2"
    "$blebridge" check-config --config "$work/gateway.json" >"$work/check-config.log" 2>&1 || {
        missing="the generated configuration is refused: $(tail -3 "$work/check-config.log" | tr '\n' ' ')"
        return 1
    }
    "$blebridge" run --config "$work/gateway.json" >"$work/gateway.log" 2>&1 &
    gateway_pid=$!
    pids+=("$gateway_pid")
    suite_pids+=("$gateway_pid")
    path_pids+=("$gateway_pid")
    sleep 1
    kill -0 "$gateway_pid" 2>/dev/null || {
        missing="blebridge run exited: $(tail -3 "$work/gateway.log" | tr '\n' ' ')"
        return 1
    }
}

simulator_missing=""
if [ "$run_gateway" = 1 ] || [ "$run_gateway_memory_first" = 1 ] || [ "$run_relay" = 1 ] || [ "$run_relay_memory" = 1 ] || [ "$run_relay_floor" = 1 ] || [ "$run_relay_signals" = 1 ]; then
    "$blebridge" simulate --help >/dev/null 2>&1 ||
        simulator_missing="blebridge has no 'simulate' command (the simulator as a process, with load mode)"
fi
: >"$work/results"

# One run of each suite; NAME-REP names its phases, logs and result line. A suite that cannot
# start writes why to $work/<kind>.missing.
measure_relay_c_load() {
    environment_start "relay_cload-$1"
    start_relay "relay_cload-$1"
    suite "relay_cload-$1" relay_load "$relay_pid" || echo "warm-up failed (run $1)" >"$work/relay_cload.missing"
    stop_pid "$relay_pid"
    log "[relay_cload-$1] $(tail -1 "$work/relay_cload-$1.out")"
    environment_stop
}

# measure_relay KIND REP: the relay on the simulator's load through AcquireNotify sockets, as the
# gateway reads them. KIND relay; relay_memory: without its outbox (--memory); relay_floor: that
# on one thread too (--memory --one-thread).
measure_relay() {
    local kind=$1 name="$1-$2" extra=()
    [ "$kind" = relay_memory ] && extra=(--memory)
    [ "$kind" = relay_floor ] && extra=(--memory --one-thread)
    environment_start "$name"
    missing=""
    if start_simulator "$name"; then
        start_relay "$name" --acquire-notify "$active" "${extra[@]}"
        suite "$name" simulator_load "$relay_pid" || missing="warm-up failed (run $2)"
        stop_pid "$relay_pid"
        log "[$name] $(tail -1 "$work/$name.out")"
    fi
    [ -z "$missing" ] || echo "$missing" >"$work/$kind.missing"
    environment_stop
}

# The relay on the simulator's PropertiesChanged signals: bluez_client StartNotifies the load
# devices, and every value crosses dbus-daemon (charged to the path).
measure_relay_signals() {
    environment_start "relay_signals-$1"
    missing=""
    if start_simulator "relay_signals-$1"; then
        start_relay "relay_signals-$1"
        "$bin/bluez_client" --address "$bus_address" --count "$active" >"$work/bluez_client-$1.out" 2>&1 &
        client_pid=$!
        pids+=("$client_pid")
        suite_pids+=("$client_pid")
        path_pids+=("$client_pid")
        if wait_for "$work/bluez_client-$1.out" ready 90; then
            suite "relay_signals-$1" simulator_load "$relay_pid" || missing="warm-up failed (run $1)"
        else
            missing="could not subscribe to the simulator's load devices: $(tail -2 "$work/bluez_client-$1.out" | tr '\n' ' ')"
        fi
        stop_pid "$relay_pid"
        log "[relay_signals-$1] $(tail -1 "$work/relay_signals-$1.out")"
    fi
    [ -z "$missing" ] || echo "$missing" >"$work/relay_signals.missing"
    environment_stop
}

# measure_gateway KIND REP: KIND is gateway (outbox.mode durable) or gateway_memory_first (memory_first).
measure_gateway() {
    local kind=$1 outbox_mode=durable name="$1-$2"
    [ "$kind" = gateway_memory_first ] && outbox_mode=memory_first
    environment_start "$name"
    missing=""
    if start_simulator "$name" && start_gateway "$name" "$outbox_mode"; then
        suite "$name" simulator_load "$gateway_pid" || missing="warm-up failed (run $2)"
    fi
    [ -z "$missing" ] || echo "$missing" >"$work/$kind.missing"
    environment_stop
}

# The suites in turn (the order reverses each repetition), so a drift of the
# machine's load over the run weighs on every suite alike.
for ((rep = 1; rep <= repeat; rep++)); do
    order="relay relay_memory relay_floor gateway gateway_memory_first"
    ((rep % 2 == 0)) && order="gateway_memory_first gateway relay_floor relay_memory relay"
    for kind in $order; do
        [ -z "$simulator_missing" ] || continue
        if [ "$kind" = relay ] && [ "$run_relay" = 1 ]; then measure_relay "$kind" "$rep"; fi
        if [ "$kind" = relay_memory ] && [ "$run_relay_memory" = 1 ]; then measure_relay "$kind" "$rep"; fi
        if [ "$kind" = relay_floor ] && [ "$run_relay_floor" = 1 ]; then measure_relay "$kind" "$rep"; fi
        if [ "$kind" = gateway ] && [ "$run_gateway" = 1 ]; then measure_gateway gateway "$rep"; fi
        if [ "$kind" = gateway_memory_first ] && [ "$run_gateway_memory_first" = 1 ]; then measure_gateway "$kind" "$rep"; fi
    done
    if [ "$run_relay_signals" = 1 ] && [ -z "$simulator_missing" ]; then measure_relay_signals "$rep"; fi
    if [ "$run_relay_c_load" = 1 ]; then measure_relay_c_load "$rep"; fi
done

# ---------------------------------------------------------------- (d) SD-card wear per outbox mode
sdcard_table=""
if [ "$run_sdcard" = 1 ]; then
    log "[sdcard] bytes written per reading, demo's five devices, ${BENCH_SD_SECONDS:-60} s per outbox mode"
    sdcard_table=$("$root/bench/sdcard.sh" "$blebridge") || sdcard_table="NOT MEASURED — bench/sdcard.sh failed (see above)"
fi

# ---------------------------------------------------------------- report
if [ ! -s "$work/results" ] && [ "$run_relay" = 0 ] && [ "$run_gateway" = 0 ] && [ "$run_gateway_memory_first" = 0 ]; then
    echo
    echo "SD-card wear — $(date -u +%Y-%m-%dT%H:%MZ): the demo's five devices, broker up, /proc/<pid>/io write_bytes"
    echo "$sdcard_table"
    exit 0
fi
echo
echo "BLEBridge end-to-end benchmark — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), nice $(nice)"
echo "each suite ${repeat}× (the suites in turn); median [min–max] over the runs; ramp steps of ${seconds} s, ${refine} refining"
echo "steps; latency/CPU/memory over ${latency_seconds} s at ${latency_rate} notifications/s from ${active} notifying devices"
echo "(gateway: ${devices} devices configured, at most ${gateway_connections} connected). CPU 'path' charges every process on the"
echo "path: dbus-daemon, broker, simulator and the process under test (bluez_client too for relay_signals)."
echo
# results: kind rep throughput step p50 p99 cpu path rss hwm lost failed
awk -v rate="$latency_rate" '
function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
function median(a, n) { sortn(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function cell(kind, column, digits,   n, i, a, m, fmt) {
    n = 0
    for (i = 1; i <= runs[kind]; i++) if (value[kind, i, column] != "n/a") a[++n] = value[kind, i, column] + 0
    if (n == 0) return "n/a"
    m = median(a, n); med[kind, column] = m
    fmt = "%." digits "f"
    if (n == 1) return sprintf(fmt, m)
    return sprintf(fmt " [" fmt "–" fmt "]", m, a[1], a[n])
}
function ratio(kind, column,   n, i, r, a) {
    if (!((kind, column) in med) || !(("relay", column) in med) || med["relay", column] <= 0) return "n/a"
    n = 0
    for (i = 1; i <= runs[kind] && i <= runs["relay"]; i++)
        if (value["relay", i, column] != "n/a" && value[kind, i, column] != "n/a" && value["relay", i, column] > 0)
            a[++n] = value[kind, i, column] / value["relay", i, column]
    r = sprintf("%.2f×", med[kind, column] / med["relay", column])
    if (n > 1) { sortn(a, n); r = r sprintf(" (runs %.2f–%.2f)", a[1], a[n]) }
    return r
}
{ kind = $1; i = ++runs[kind]; value[kind, i, "throughput"] = $3; value[kind, i, "p50"] = $5; value[kind, i, "p99"] = $6
  value[kind, i, "cpu"] = $7; value[kind, i, "path"] = $8; value[kind, i, "rss"] = $9; value[kind, i, "hwm"] = $10
  lost[kind] += $11; failed[kind] = failed[kind] " " $12 }
END {
    extra = ""
    if ("relay_signals" in runs) extra = extra " relay_signals"
    if ("relay_cload" in runs) extra = extra " relay_cload"
    if ("relay_memory" in runs) extra = extra " relay_memory"
    if ("relay_floor" in runs) extra = extra " relay_floor"
    nextra = split(extra, extras, " ")
    header = "| | relay (AcquireNotify) | gateway | gateway / relay | goal (issue 20) |"
    rule = "|---|---|---|---|---|"
    # The gateway in its default outbox mode: its own figures, and each divided by the relay figure.
    memory = "gateway_memory_first" in runs
    if (memory) { header = header " gateway_memory_first | gateway_memory_first / relay |"; rule = rule "---|---|" }
    for (e = 1; e <= nextra; e++) { header = header " " extras[e] " | " extras[e] " / relay |"; rule = rule "---|---|" }
    print header; print rule
    split("throughput p50 p99 cpu path rss hwm", columns, " ")
    split("sustained throughput (msg/s)|p50 latency at " rate "/s (ms)|p99 latency at " rate "/s (ms)|CPU per message, process under test (µs)|CPU per message, whole path (µs)|VmRSS at " rate "/s (MB)|VmHWM at " rate "/s (MB)", labels, "|")
    split("0 2 2 1 1 1 1", digits, " ")
    split("≥ 1.0× relay|||≤ 0.5× relay||≤ 30 MB|", goals, "|")
    goals[3] = "≤ 2 ms"
    for (c = 1; c <= 7; c++) {
        line = "| " labels[c] " | " cell("relay", columns[c], digits[c]) " | " cell("gateway", columns[c], digits[c]) " | "
        line = line (c <= 5 ? ratio("gateway", columns[c]) : "") " | " goals[c] " |"
        if (memory) line = line " " cell("gateway_memory_first", columns[c], digits[c]) " | " (c <= 5 ? ratio("gateway_memory_first", columns[c]) : "") " |"
        for (e = 1; e <= nextra; e++) line = line " " cell(extras[e], columns[c], digits[c]) " | " (c <= 5 ? ratio(extras[e], columns[c]) : "") " |"
        print line
    }
    print ""
    for (k in runs) if (runs[k] > 0) printf "%s: %d runs; values lost at %d/s in all: %d; first failing steps:%s\n", k, runs[k], rate, lost[k], failed[k]
}' "$work/results"
for kind in relay gateway gateway_memory_first relay_signals relay_cload relay_memory relay_floor; do
    [ -f "$work/$kind.missing" ] && echo "$kind: NOT MEASURED in at least one run — $(cat "$work/$kind.missing")"
done
if [ -n "$sdcard_table" ]; then
    echo
    echo "SD-card wear: the demo's five devices, broker up, /proc/<pid>/io write_bytes of the gateway process"
    echo "$sdcard_table"
fi
if [ "$mode" = smoke ]; then
    awk '$1 == "relay_cload" && $3 > 0 && $11 == 0 { ok = 1 } END { exit !ok }' "$work/results" ||
        { echo "smoke: relay did not deliver" >&2; exit 1; }
fi
