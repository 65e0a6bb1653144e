# Scenario: the full gateway on real bluetoothd. BLEBridge's PeripheralManager on hci1 plays a
# heart-rate strap with a lamp; mosquitto runs on the guest's loopback; `blebridge run` on hci0
# must publish decoded heart-rate readings and carry out an MQTT write command to the lamp.
. "$(dirname "$0")/bluez-up.sh"
repo=$(cd "$(dirname "$0")/../../.." && pwd)
bin="${BLEBRIDGE_BIN_DIR:-$repo/.build/debug}"
name="BLEBridge Conformance"
O=/tmp/out
"$bin/ble-conformance" peripheral --adapter hci1 --name "$name" --refresh-advertising-ms 1000 >$O/peripheral.log 2>&1 &
. "$(dirname "$0")/mosquitto-up.sh"
cat > /tmp/config.json <<CONF
{
  "gateway_id": "vm",
  "bluetooth": {"adapter": "hci0", "bus": "system"},
  "mqtt": {"url": "mqtt://127.0.0.1:1883", "client_id": "blebridge-vm", "base_topic": "blebridge"},
  "outbox": {"path": "/tmp/blebridge.sqlite"},
  "homeassistant": {"enabled": false},
  "devices": [
    {"id": "strap", "name": "Strap", "match": {"name_prefix": "$name"}, "connection": "keep_connected",
     "subscribe": [{"characteristic": "heart_rate_measurement", "mode": "notify"},
                   {"characteristic": "battery_level", "mode": "read", "interval": "1m"}],
     "commands": [{"name": "power", "characteristic": "6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
                   "operations": ["read", "write"], "format": "bool", "write_type": "with_response"}]}
  ]
}
CONF
"$bin/blebridge" check-config /tmp/config.json > $O/check-config.log 2>&1 || { echo "guest: config rejected"; cat $O/check-config.log; exit 1; }
"$bin/blebridge" run --config /tmp/config.json > $O/gateway.log 2>&1 &
gateway=$!
ok=0
for _ in $(seq 1 120); do
    grep -q '^blebridge/strap .*heart_rate' $O/mqtt.log && { ok=1; break; }
    sleep 0.5
done
[ $ok = 1 ] || { echo "guest: no heart-rate reading on blebridge/strap"; tail -30 $O/gateway.log; tail $O/mqtt.log; exit 1; }
echo "guest: reading published: $(grep -m1 '^blebridge/strap ' $O/mqtt.log)"
mosquitto_pub -h 127.0.0.1 -t blebridge/strap/set -m '{"power": true, "transaction": "vm-1"}'
ok=0
for _ in $(seq 1 60); do
    grep -q 'peripheral: wrote 6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b 1 ' $O/peripheral.log && { ok=1; break; }
    sleep 0.5
done
[ $ok = 1 ] || { echo "guest: the power command never reached the lamp"; tail -30 $O/gateway.log; grep response $O/mqtt.log; exit 1; }
echo "guest: command reached the device: $(grep -m1 'wrote 6b1e0002' $O/peripheral.log)"
grep -m1 'response' $O/mqtt.log
kill $gateway 2>/dev/null
exit 0
