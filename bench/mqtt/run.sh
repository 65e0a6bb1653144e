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
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
max_queued_messages 0
max_inflight_messages 0
persistence false
log_dest none
CONF
mosquitto -c "$work/mosquitto.conf" &
broker_pid=$!
for _ in $(seq 100); do
  if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null; then break; fi
  sleep 0.05
done
BLEBRIDGE_LOG=warning "$(swift build -c release --show-bin-path)/mqtt-bench" --port "$port" --baseline "$work/baseline_publisher" "$@"
