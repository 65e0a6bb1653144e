# Sourced by the lifecycle scenarios (after bluez-up.sh): BlueZ's own, unmodified example
# peripheral (Debian's bluez-test-scripts: example-gatt-server, heart rate 0x180D with 0x2A37
# notify and battery; example-advertisement, "TestAdvertisement") on one controller, mosquitto on
# the guest's loopback and `blebridge run` on the other controller, until the first heart-rate
# reading is published. The examples register on the first adapter bluetoothd lists; the gateway
# takes the other one (GW, PERIPHERAL: hciN; GW_INDEX, PERIPHERAL_INDEX: N).
# Helpers: now, readings, wait_for_reading_after COUNT SINCE LABEL, power_on ADAPTER LABEL (sets
# BACK), start_examples, stop_examples, start_keep_advertising, stop_keep_advertising.
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin="${BLEBRIDGE_BIN_DIR:-$repo/.build/debug}"
examples=/usr/share/doc/bluez-test-scripts/examples
O=/tmp/out
[ -f "$examples/example-gatt-server" ] || { echo "guest: bluez-test-scripts missing (Tests/VM/prepare.sh installs it)"; exit 1; }
for index in 0 1; do busctl --system set-property org.bluez /org/bluez/hci$index org.bluez.Adapter1 Pairable b true; done

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
readings() { grep -c '^blebridge/strap .*heart_rate' $O/mqtt.log; }

EXAMPLE_RUNS=0
start_examples() {
    # Each run logs to its own files: the waits below look for this run's registration.
    EXAMPLE_RUNS=$((EXAMPLE_RUNS + 1))
    for log in gatt-server advertisement; do
        [ -f $O/$log.log ] && mv $O/$log.log $O/$log.$EXAMPLE_RUNS.log
    done
    python3 -u "$examples/example-gatt-server" >$O/gatt-server.log 2>&1 &
    GATT_PID=$!
    python3 -u "$examples/example-advertisement" >$O/advertisement.log 2>&1 &
    ADV_PID=$!
    for _ in $(seq 1 100); do
        grep -q 'GATT application registered' $O/gatt-server.log 2>/dev/null \
            && grep -q 'Advertisement registered' $O/advertisement.log 2>/dev/null && return 0
        sleep 0.1
    done
    echo "guest: the example peripheral did not register"; tail $O/gatt-server.log $O/advertisement.log; exit 1
}

stop_examples() {
    kill "$GATT_PID" "$ADV_PID" 2>/dev/null
    wait "$GATT_PID" "$ADV_PID" 2>/dev/null
}

# wait_for_reading_after COUNT SINCE LABEL [LIMIT]: waits (up to 60 s) for more than COUNT
# readings; prints and records the time from SINCE to it; fails the scenario beyond LIMIT
# seconds (10).
wait_for_reading_after() {
    local count=$1 since=$2 label=$3 limit=${4:-10} took
    for _ in $(seq 1 600); do
        [ "$(readings)" -gt "$count" ] && break
        sleep 0.1
    done
    took=$(elapsed "$since" "$(now)")
    if [ "$(readings)" -le "$count" ]; then
        echo "guest: FAIL $label: no reading within 60 s"; tail -40 $O/gateway.log; exit 1
    fi
    echo "guest: $label: reading after ${took}s"
    echo "$label $took (BlueZ back at $since)" >> $O/recovery.txt
    awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t <= l) }' || { echo "guest: FAIL $label took ${took}s (> $limit s)"; tail -40 $O/gateway.log; exit 1; }
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
    wait "$setter"
    echo "guest: $2: $1 powered $(elapsed "$asked" "$BACK")s after the request"
    echo "$2-power-on $(elapsed "$asked" "$BACK") (requested at $asked)" >> $O/recovery.txt
}

start_examples
if busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.LEAdvertisingManager1 ActiveInstances | grep -q 'y 1'; then
    PERIPHERAL_INDEX=0 GW_INDEX=1
else
    PERIPHERAL_INDEX=1 GW_INDEX=0
fi
PERIPHERAL=hci$PERIPHERAL_INDEX GW=hci$GW_INDEX
PERIPHERAL_ADDRESS=$(busctl --system get-property org.bluez /org/bluez/$PERIPHERAL org.bluez.Adapter1 Address | awk -F'"' '{print $2}')
DEVICE=/org/bluez/$GW/dev_$(echo "$PERIPHERAL_ADDRESS" | tr : _)
echo "guest: example peripheral on $PERIPHERAL ($PERIPHERAL_ADDRESS), gateway on $GW"

# btvirt 5.66 reports an advertisement to a scanner only when advertising is switched on, where a
# real peripheral repeats it every advertising interval; bluetoothd's LE Connect waits for one, so
# a reconnect to the known device waited up to 10.5 s for a report (measured) that a real sensor
# sends within its interval. Switching legacy advertising on and off every second makes the
# controller re-enable the example's advertisement each time, as a radio advertising at 1 s would.
keep_advertising() {
    while :; do
        btmgmt --index "$PERIPHERAL_INDEX" advertising on >/dev/null 2>&1
        sleep 0.3
        btmgmt --index "$PERIPHERAL_INDEX" advertising off >/dev/null 2>&1
        sleep 0.7
    done
}
start_keep_advertising() { keep_advertising & KEEP_ADVERTISING_PID=$!; }
stop_keep_advertising() { kill "$KEEP_ADVERTISING_PID" 2>/dev/null; wait "$KEEP_ADVERTISING_PID" 2>/dev/null; }
start_keep_advertising

. "$(dirname "$0")/mosquitto-up.sh"
cat > /tmp/config.json <<CONF
{
  "gateway_id": "vm",
  "bluetooth": {"adapter": "$GW", "bus": "system"},
  "mqtt": {"url": "mqtt://127.0.0.1:1883", "client_id": "blebridge-vm", "base_topic": "blebridge"},
  "outbox": {"path": "/tmp/blebridge.sqlite"},
  "homeassistant": {"enabled": false},
  "devices": [
    {"id": "strap", "name": "Strap", "match": {"name_prefix": "TestAdvertisement"}, "connection": "keep_connected",
     "subscribe": [{"characteristic": "heart_rate_measurement", "mode": "notify"}]}
  ]
}
CONF
# Each log line stamped with the wall time it arrived (seconds since the epoch): what the
# recovery times are read against.
stamp() { python3 -u -c 'import sys, time
for line in sys.stdin: sys.stdout.write("%.3f %s" % (time.time(), line))'; }
mkfifo /tmp/gateway.fifo
stamp </tmp/gateway.fifo >$O/gateway.log &
BLEBRIDGE_LOG=debug "$bin/blebridge" run --config /tmp/config.json --health-interval 5s >/tmp/gateway.fifo 2>&1 &
GATEWAY_PID=$!
mosquitto_sub -h 127.0.0.1 -t 'blebridge/strap' -F '%U %t %p' > $O/readings.log 2>&1 &
start=$(now)
wait_for_reading_after 0 "$start" first-reading-after-start 60
