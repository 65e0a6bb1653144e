# Sourced by guest scripts: mosquitto on the guest's loopback (127.0.0.1:1883; `max_queued_messages
# 0`, so the broker never drops a slow subscriber's QoS 1 messages), waits until it answers, and
# records everything under blebridge/ in /tmp/out/mqtt.log.
ip link set lo up 2>/dev/null
cat > /tmp/mosquitto.conf <<CONF
listener 1883 127.0.0.1
allow_anonymous true
max_queued_messages 0
CONF
mosquitto -c /tmp/mosquitto.conf >/tmp/out/mosquitto.log 2>&1 &
# mosquitto_sub exits 27 on its -W time-out: connected, nothing received, so the broker is up.
for _ in $(seq 1 50); do mosquitto_sub -h 127.0.0.1 -t probe -W 1 -C 1 >/dev/null 2>&1; [ $? -eq 27 ] && break; sleep 0.2; done
mosquitto_sub -h 127.0.0.1 -t 'blebridge/#' -v > /tmp/out/mqtt.log 2>&1 &
