# Scenario: BlueZ absent when the gateway starts (bluetooth.service stopped: no org.bluez on the
# system bus), then bluetoothd started (issue 16). The gateway must say so first (bridge/health
# `bluetooth.problem` "bluez_not_running", systemd STATUS=, the log's advice), notice bluetoothd
# within 10 s of it owning org.bluez, and publish readings within 10 s of Bluetooth being back.
# As in scenario-bluetoothd-restart.sh, the example peripheral lives in the same bluetoothd and
# registers only after it (its python start took 5-20 s on the loaded emulated guest), so the
# gateway's controller stays off (AutoEnable=false) until the example serves, and "back" is the
# gateway's adapter powered (power_on) after that.
. "$(dirname "$0")/bluez-up.sh"
GATEWAY_AT_START=0
. "$(dirname "$0")/example-peripheral.sh"
sed -i 's/^#\?AutoEnable=true/AutoEnable=false/' /etc/bluetooth/main.conf  # bluez 5.82's file has it commented out

# bluetooth.service stopped before the gateway starts.
stop_keep_advertising
kill -TERM "$BLUETOOTHD_PID"
wait "$BLUETOOTHD_PID" 2>/dev/null
stop_examples
btmgmt --index "$GW_INDEX" power off >/dev/null 2>&1
[ -z "$(bluez_owner)" ] || { echo "guest: org.bluez still owned"; exit 1; }
start_gateway
started=$(now)
wait_for_problem bluez_not_running "$started" bluez-absent-reported 30
wait_for_status "Bluetooth unavailable (bluez_not_running)"
expect_log 'Bluetooth unavailable: bluetoothd is not running' advice
# Unavailable and staying so: still nothing after a while (the gateway does not claim health).
sleep 5
[ "$(health_problem)" = bluez_not_running ] || { echo "guest: FAIL: problem changed to $(health_problem) without bluetoothd"; exit 1; }

asked=$(now)
/usr/libexec/bluetooth/bluetoothd -n -d >>/tmp/bluetoothd.log 2>&1 &
BLUETOOTHD_PID=$!
for _ in $(seq 1 300); do [ -n "$(owner_appeared_after "$asked")" ] && break; sleep 0.05; done
appeared=$(owner_appeared_after "$asked")
[ -n "$appeared" ] || { echo "guest: bluetoothd never took org.bluez"; exit 1; }
echo "guest: bluetoothd owns org.bluez as $(bluez_owner), $(elapsed "$asked" "$appeared")s after it was started"
# The controller is there but held off: the gateway notices bluetoothd and says what is left.
wait_for_problem adapter_powered_off "$appeared" bluez-appeared-noticed
examples_back_then_gateway 0 bluez-late
wait_for_problem null "$ASKED" bluez-late-available
wait_for_status "Bluetooth ready ($GW)"
stop_gateway
exit 0
