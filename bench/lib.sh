# Shared by the benchmark scripts (bench/run.sh, bench/dbus/run.sh, bench/mqtt/run.sh,
# scripts/bench-outbox.sh); source it: `. "$root/bench/lib.sh"`. Each start_* function runs a
# daemon in the background for load tests, waits (10 s at most) until it answers, and sets
# variables; the caller keeps the pid and stops the daemon. On failure it kills what it started,
# prints why on stderr and returns 1.

# free_port: prints a free TCP port on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for FILE PATTERN SECONDS: waits until FILE contains PATTERN; returns 1 after SECONDS.
wait_for() {
    local deadline=$((SECONDS + $3))
    while ! grep -q "$2" "$1" 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.05
    done
}

# start_dbus DIR: a private dbus-daemon listening in DIR, limits raised for load (bytes queued per
# connection, message size, pending replies, match rules); its log is DIR/dbus.log.
# Sets bus_address and bus_pid.
start_dbus() {
    local dir=$1
    mkdir -p "$dir"
    cat >"$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">134217728</limit>
  <limit name="max_replies_per_connection">50000</limit>
  <limit name="max_match_rules_per_connection">50000</limit>
</busconfig>
CONF
    dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile --print-address=1 >"$dir/address" 2>"$dir/dbus.log" &
    bus_pid=$!
    if ! wait_for "$dir/address" unix 10; then
        kill "$bus_pid" 2>/dev/null || true
        echo "dbus-daemon did not start: $(cat "$dir/dbus.log")" >&2
        return 1
    fi
    bus_address=$(head -n1 "$dir/address")
}

# start_mosquitto DIR: mosquitto on a free loopback port, anonymous, no persistence, and
# max_queued_messages 0 (otherwise it drops QoS 1 messages for a slow subscriber and the loss looks
# like the publisher's); errors and warnings go to DIR/mosquitto.log. Sets mqtt_port and mosquitto_pid.
start_mosquitto() {
    local dir=$1
    mkdir -p "$dir"
    mqtt_port=$(free_port)
    cat >"$dir/mosquitto.conf" <<CONF
listener $mqtt_port 127.0.0.1
allow_anonymous true
max_queued_messages 0
max_inflight_messages 0
persistence false
log_dest stderr
log_type error
log_type warning
CONF
    mosquitto -c "$dir/mosquitto.conf" 2>"$dir/mosquitto.log" &
    mosquitto_pid=$!
    local deadline=$((SECONDS + 10))
    until (exec 3<>"/dev/tcp/127.0.0.1/$mqtt_port") 2>/dev/null; do
        if [ $SECONDS -ge $deadline ] || ! kill -0 "$mosquitto_pid" 2>/dev/null; then
            kill "$mosquitto_pid" 2>/dev/null || true
            echo "mosquitto did not start on port $mqtt_port: $(cat "$dir/mosquitto.log")" >&2
            return 1
        fi
        sleep 0.05
    done
}
