# Sourced by the lifecycle scenarios (after bluez-up.sh): the gateway side of a scenario and the
# helpers that time recoveries. Needs GW (the gateway's adapter, hciN) and PERIPHERAL_NAME (the
# advertised name the gateway's "strap" matches by prefix). Starts mosquitto on the guest's loopback
# (everything under blebridge/ recorded in /tmp/out/mqtt.log) and a systemd notification socket
# (/tmp/notify.sock, every STATUS=/READY=/WATCHDOG= datagram in /tmp/out/notify.log), and writes
# the configuration; start_gateway [USER] starts `blebridge run`.
# Helpers: now, elapsed, readings, wait_for_reading_after COUNT SINCE LABEL [LIMIT],
# power_on ADAPTER LABEL (sets BACK, and ASKED: when it was asked), start_gateway [USER], stop_gateway,
# start_peripheral,
# wait_for_problem PROBLEM SINCE LABEL [LIMIT] (sets SEEN), wait_for_status TEXT, bluez_owner, expect_log PATTERN WHAT.
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin="${BLEBRIDGE_BIN_DIR:-$repo/.build/debug}"
O=/tmp/out

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
readings() { grep -c '^blebridge/strap .*heart_rate' $O/mqtt.log; }
# The unique name owning org.bluez (bluetoothd), empty when none.
bluez_owner() {
    dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetNameOwner \
        string:org.bluez 2>/dev/null | awk -F'"' '/string/ {print $2}'
}

# arrived_after SINCE FILE [PATTERN]: the arrival time (first field) of the first line of FILE
# after SINCE (matching PATTERN, an awk regular expression), empty when none. The recorders stamp
# each message as it arrives, so a recovery time does not include how long the scenario's polling
# loop took to notice it (several seconds on the loaded emulated guest: each poll starts processes).
arrived_after() {
    awk -v s="$1" -v p="${3:-.}" '$1 > s && $0 ~ p { print $1; exit }' "$2"
}

# wait_for_reading_after COUNT SINCE LABEL [LIMIT]: waits (up to 60 s) for more than COUNT
# readings; prints and records the time from SINCE to the first one's arrival; fails the scenario
# when that time, less bluetoothd's Connect call when the gateway connected meanwhile, is beyond
# LIMIT seconds (10).
wait_for_reading_after() {
    local count=$1 since=$2 label=$3 limit=${4:-10} took arrived deadline connect own
    # Bounded by the clock, not by a count of polls: each poll starts processes, and on the loaded
    # guest 600 of them took longer than the guest's whole time limit (so its logs were lost).
    deadline=$(($(date +%s) + 60))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        [ "$(readings)" -gt "$count" ] && break
        sleep 0.1
    done
    if [ "$(readings)" -le "$count" ]; then
        echo "guest: FAIL $label: no reading within 60 s"; tail -40 $O/gateway.log; exit 1
    fi
    arrived=$(arrived_after "$since" $O/readings.log)
    took=$(elapsed "$since" "${arrived:-$(now)}")
    # bluetoothd's Connect call is the controller's time, not the gateway's: in this emulated guest
    # on a loaded host one connect took 2.2-12.0 s (2026-12-04, the VM tier beside `make stress`;
    # bluez-late failed at 11.9 s with 8.2 s of it in Connect), on a Pi about 0.1-1 s. When the
    # gateway connected after SINCE (its `connect timeline` line, before the reading), LIMIT applies
    # to the rest: noticing, discovery, GATT, subscribing and the first value. Both are printed.
    connect=$(awk -v s="$since" -v a="${arrived:-9e99}" '$1 > s && $1 <= a && /connect timeline/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^connect=/) { v = substr($i, 9); sub(/s$/, "", v); print v; exit }
    }' $O/gateway.log)
    own=$(awk -v t="$took" -v c="${connect:-0}" 'BEGIN { printf "%.1f", t - c }')
    echo "guest: $label: reading after ${took}s${connect:+ (${connect}s of it in the Connect call)}"
    echo "$label $took${connect:+ connect $connect} (BlueZ back at $since)" >> $O/recovery.txt
    awk -v t="$own" -v l="$limit" 'BEGIN { exit !(t <= l) }' || { echo "guest: FAIL $label took ${took}s, ${own}s of it outside bluetoothd's Connect (> $limit s)"; tail -40 $O/gateway.log; exit 1; }
}

# The `bluetooth.problem` of the newest bridge/health message ("null" when Bluetooth is usable,
# empty before the first message).
health_problem() {
    grep '^blebridge/bridge/health ' $O/mqtt.log | tail -1 | cut -d' ' -f2- | jq -r '.bluetooth.problem' 2>/dev/null
}

# wait_for_problem PROBLEM SINCE LABEL [LIMIT]: waits (up to 60 s) until bridge/health says
# `bluetooth.problem` PROBLEM ("null": available); records the time from SINCE to that message's
# arrival (SEEN) and fails beyond LIMIT seconds (10).
wait_for_problem() {
    local problem=$1 since=$2 label=$3 limit=${4:-10} took pattern deadline
    deadline=$(($(date +%s) + 60))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        [ "$(health_problem)" = "$problem" ] && break
        sleep 0.1
    done
    [ "$(health_problem)" = "$problem" ] || { echo "guest: FAIL $label: bridge/health never said problem=$problem (last: $(health_problem))"; tail -40 $O/gateway.log; exit 1; }
    if [ "$problem" = null ]; then pattern='"problem":null'; else pattern="\"problem\":\"$problem\""; fi
    SEEN=$(arrived_after "$since" $O/health.log "$pattern")
    SEEN=${SEEN:-$(now)}
    took=$(elapsed "$since" "$SEEN")
    echo "guest: $label: bridge/health says problem=$problem after ${took}s"
    echo "$label $took (since $since)" >> $O/recovery.txt
    awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t <= l) }' || { echo "guest: FAIL $label took ${took}s (> $limit s)"; exit 1; }
}

# expect_log PATTERN WHAT: prints the gateway log's first line with PATTERN (a fixed string), or
# fails the scenario naming WHAT.
expect_log() {
    grep -m1 -F "$1" $O/gateway.log | sed 's/^/guest: log: /' | grep . \
        || { echo "guest: FAIL: no $2 in the log"; tail -20 $O/gateway.log; exit 1; }
}

# owner_appeared_after SINCE: when org.bluez last got an owner after SINCE, as dbus-monitor saw the
# bus's NameOwnerChanged (empty: not yet).
owner_appeared_after() {
    awk -v s="$1" '$1 == "sig" && $2 > s { print $2; exit }' $O/bluez-owner.log
}

# wait_for_status TEXT: waits (up to 30 s) for a STATUS= notification containing TEXT.
wait_for_status() {
    for _ in $(seq 1 300); do
        grep -F "STATUS=" $O/notify.log | grep -qF "$1" && { echo "guest: STATUS: $(grep -F "STATUS=" $O/notify.log | grep -F "$1" | tail -1 | cut -d' ' -f2-)"; return 0; }
        sleep 0.1
    done
    echo "guest: FAIL: no STATUS= with '$1'"; tail -5 $O/notify.log; exit 1
}

# power_on ADAPTER LABEL: powers ADAPTER (hciN) on. BACK is when bluetoothd first answered that it
# is powered: the moment "the adapter is back" for the 10 s bar, since nothing reaches a peripheral
# before. Read by polling the property while the write is pending: bluetoothd's reply to the write
# came up to 1.3 s after the change the gateway already acted on (measured), so the reply would
# flatter the gateway. How long powering took (bluetoothd and the kernel, not the gateway) is
# printed and kept in recovery.txt beside the recovery times.
power_on() {
    local asked setter
    asked=$(now)
    busctl --system set-property org.bluez /org/bluez/$1 org.bluez.Adapter1 Powered b true &
    setter=$!
    for _ in $(seq 1 300); do
        [ "$(busctl --system get-property org.bluez /org/bluez/$1 org.bluez.Adapter1 Powered)" = "b true" ] && break
        sleep 0.05
    done
    BACK=$(now)
    ASKED=$asked
    wait "$setter"
    echo "guest: $2: $1 powered $(elapsed "$asked" "$BACK")s after the request"
    echo "$2-power-on $(elapsed "$asked" "$BACK") (requested at $asked)" >> $O/recovery.txt
}

. "$(dirname "$0")/mosquitto-up.sh"
# Stamped at arrival (mosquitto_sub's %U: seconds since the epoch), for the recovery times.
stdbuf -oL mosquitto_sub -h 127.0.0.1 -t 'blebridge/strap' -F '%U %t %p' > $O/readings.log 2>&1 &
stdbuf -oL mosquitto_sub -h 127.0.0.1 -t 'blebridge/bridge/health' -F '%U %p' > $O/health.log 2>&1 &
# org.bluez getting or losing an owner, one line per NameOwnerChanged with dbus-monitor's time (field 2).
stdbuf -oL dbus-monitor --system --profile "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'" \
    > $O/bluez-owner.log 2>&1 &
python3 -u "$(dirname "$0")/notify_recorder.py" /tmp/notify.sock >$O/notify.log 2>&1 &
for _ in $(seq 1 50); do [ -S /tmp/notify.sock ] && break; sleep 0.1; done
# The outbox and the gateway's state live in a directory its user can write.
mkdir -p /tmp/blebridge
cat > /tmp/config.json <<CONF
{
  "gateway_id": "vm",
  "bluetooth": {"adapter": "$GW", "bus": "system"},
  "mqtt": {"url": "mqtt://127.0.0.1:1883", "client_id": "blebridge-vm", "base_topic": "blebridge"},
  "outbox": {"path": "/tmp/blebridge/outbox.sqlite"},
  "homeassistant": {"enabled": false},
  "devices": [
    {"id": "strap", "name": "Strap", "match": {"name_prefix": "$PERIPHERAL_NAME"}, "connection": "keep_connected",
     "subscribe": [{"characteristic": "heart_rate_measurement", "mode": "notify"}]}
  ]
}
CONF
chmod 644 /tmp/config.json
# Each log line stamped with the wall time it arrived (seconds since the epoch): what the
# recovery times are read against.
stamp() { python3 -u -c 'import sys, time
for line in sys.stdin: sys.stdout.write("%.3f %s" % (time.time(), line))'; }

GATEWAY_RUNS=0
# start_gateway [USER]: `blebridge run` (as USER, with its groups, when given), its log appended
# to gateway.log, its notifications to notify.log.
start_gateway() {
    local user=${1:-} fifo
    GATEWAY_RUNS=$((GATEWAY_RUNS + 1))
    fifo=/tmp/gateway.$GATEWAY_RUNS.fifo
    mkfifo "$fifo"
    echo "$(now) guest: gateway run $GATEWAY_RUNS${user:+ as $user}" >> $O/gateway.log
    stamp <"$fifo" >>$O/gateway.log &
    if [ -n "$user" ]; then
        chown -R "$user" /tmp/blebridge
        NOTIFY_SOCKET=/tmp/notify.sock BLEBRIDGE_LOG=debug setpriv --reuid="$user" --regid="$user" --init-groups \
            "$bin/blebridge" run --config /tmp/config.json --health-interval 5s >"$fifo" 2>&1 &
    else
        NOTIFY_SOCKET=/tmp/notify.sock BLEBRIDGE_LOG=debug \
            "$bin/blebridge" run --config /tmp/config.json --health-interval 5s >"$fifo" 2>&1 &
    fi
    GATEWAY_PID=$!
}

# start_peripheral: BLEBridge's own peripheral (`ble-conformance peripheral`: heart rate among its
# services) on PERIPHERAL named PERIPHERAL_NAME, for scenarios where BlueZ's examples cannot serve (they
# take the first adapter bluetoothd lists); waits until it serves (PERIPHERAL_PID).
PERIPHERAL_RUNS=0
start_peripheral() {
    PERIPHERAL_RUNS=$((PERIPHERAL_RUNS + 1))
    "$bin/ble-conformance" peripheral --adapter $PERIPHERAL --name "$PERIPHERAL_NAME" --refresh-advertising-ms 1000 \
        >$O/peripheral.$PERIPHERAL_RUNS.log 2>&1 &
    PERIPHERAL_PID=$!
    for _ in $(seq 1 300); do grep -q 'peripheral: serving' $O/peripheral.$PERIPHERAL_RUNS.log && return 0; sleep 0.1; done
    echo "guest: the peripheral did not start"; cat $O/peripheral.$PERIPHERAL_RUNS.log; exit 1
}

stop_gateway() {
    kill "$GATEWAY_PID" 2>/dev/null
    wait "$GATEWAY_PID" 2>/dev/null
}
