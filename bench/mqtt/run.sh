#!/usr/bin/env bash
# MQTT publish throughput: Swift MQTTClient vs a plain C libmosquitto publisher, same run, same broker.
# Starts its own mosquitto on a free loopback port (max_queued_messages 0), builds in release.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product mqtt-bench
work=$(mktemp -d)
broker_pid=""
cleanup() { if [ -n "$broker_pid" ]; then kill "$broker_pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT
cc -O2 -Wall -o "$work/baseline_publisher" bench/mqtt/baseline_publisher.c -lmosquitto -lpthread
. bench/lib.sh
start_mosquitto "$work/mosquitto"
broker_pid=$mosquitto_pid
port=$mqtt_port
BLEBRIDGE_LOG=warning "$(swift build -c release --show-bin-path)/mqtt-bench" --port "$port" --baseline "$work/baseline_publisher" "$@"
