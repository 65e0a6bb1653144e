# Scenario: the gateway's adapter powered off for 3 s and on again, first with the example
# peripheral unbonded, then bonded. bluetoothd keeps the device and its GATT objects across the
# power cycle ("DB Hash match: skipping discovery": no InterfacesAdded on reconnect); readings
# must resume within 10 s of the adapter reporting Powered again, both times (issue 16).
. "$(dirname "$0")/bluez-up.sh"
. "$(dirname "$0")/example-peripheral.sh"

power_cycle() {
    local label=$1 count
    busctl --system set-property org.bluez /org/bluez/$GW org.bluez.Adapter1 Powered b false
    sleep 3
    count=$(readings)
    power_on "$GW" "$label"
    wait_for_reading_after "$count" "$BACK" "$label"
}

power_cycle power-cycle-unbonded
# Bond over the gateway's connection (LE Secure Connections, Just Works), both sides confirmed by
# one accepting default agent, then power-cycle again.
python3 -u "$(dirname "$0")/accept_agent.py" >$O/agent.log 2>&1 &
for _ in $(seq 1 100); do grep -q 'agent registered' $O/agent.log && break; sleep 0.1; done
busctl --system call org.bluez "$DEVICE" org.bluez.Device1 Pair || { echo "guest: Pair failed"; cat $O/agent.log; exit 1; }
[ "$(busctl --system get-property org.bluez "$DEVICE" org.bluez.Device1 Bonded)" = "b true" ] || { echo "guest: not bonded"; exit 1; }
echo "guest: bonded with $PERIPHERAL_ADDRESS"
power_cycle power-cycle-bonded
grep -c 'DB Hash match' /tmp/bluetoothd.log | sed 's/^/guest: bluetoothd skipped discovery (DB Hash match) times: /'
kill $GATEWAY_PID 2>/dev/null
exit 0
