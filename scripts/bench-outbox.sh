#!/usr/bin/env bash
# Outbox rows/s (batched and unbatched, synchronous NORMAL and FULL) and the publisher's QoS 1
# end-to-end throughput (Outbox + Publisher + MQTTClient), compared in the same run with the
# plain C libmosquitto publisher in bench/mqtt/ when it is there. Release build; starts its own
# mosquitto on a free loopback port (max_queued_messages 0, no persistence).
# Sizes: OUTBOX_BENCH_ROWS (default 200000), OUTBOX_BENCH_COUNT (readings, default 50000),
# OUTBOX_BENCH_ROUNDS (default 3), OUTBOX_BENCH_WINDOW (default 64).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product outbox-bench
bin="$(swift build -c release --show-bin-path)/outbox-bench"
work=$(mktemp -d)
broker_pid=""
cleanup() { if [ -n "$broker_pid" ]; then kill "$broker_pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

"$bin" store --rows "${OUTBOX_BENCH_ROWS:-200000}"

baseline=()
if [ -f bench/mqtt/baseline_publisher.c ]; then
  cc -O2 -Wall -o "$work/baseline_publisher" bench/mqtt/baseline_publisher.c -lmosquitto -lpthread
  baseline=(--baseline "$work/baseline_publisher")
fi
. bench/lib.sh
start_mosquitto "$work/mosquitto"
broker_pid=$mosquitto_pid
port=$mqtt_port
"$bin" publisher --port "$port" --count "${OUTBOX_BENCH_COUNT:-50000}" --rounds "${OUTBOX_BENCH_ROUNDS:-3}" \
  --window "${OUTBOX_BENCH_WINDOW:-64}" "${baseline[@]}"
