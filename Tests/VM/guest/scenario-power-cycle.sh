# Scenario: the gateway's adapter powered off for 3 s and on again, first with the example
# peripheral unbonded, then bonded. bluetoothd keeps the device and its GATT objects across the
# power cycle ("DB Hash match: skipping discovery": no InterfacesAdded on reconnect); readings
# must resume within 10 s of the adapter reporting Powered again, both times (issue 16).
. "$(dirname "$0")/bluez-up.sh"
. "$(dirname "$0")/example-peripheral.sh"

# Real bluetoothd in this guest sometimes stalls the first bonded reconnect: its security raise
# fails (`device_attach_att() bt_io_set: setsockopt(BT_SECURITY): Invalid argument`) and its own MTU
# request then goes unanswered for ATT's whole 30 s, so ServicesResolved never comes on that link
# (3 of 7 runs on 2026-12-03; in none of the passing ones did that setsockopt fail). The gateway's
# part there is to notice within `cached_resolve_timeout` (5 s) and connect again: that path is
# bounded at 20 s (10 s + the 5 s limit + 5 s for the extra disconnect and link-up under emulation),
# where it used to wait out the 30 s connect timeout (34-38 s). Any other recovery is bounded at 10 s.
power_cycle() {
    local label=$1 count lines took
    busctl --system set-property org.bluez /org/bluez/$GW org.bluez.Adapter1 Powered b false
    sleep 3
    count=$(readings)
    lines=$(wc -l < $O/gateway.log)
    power_on "$GW" "$label"
    wait_for_reading_after "$count" "$BACK" "$label" 20
    took=$(tail -1 $O/recovery.txt | cut -d' ' -f2)
    if tail -n +"$((lines + 1))" $O/gateway.log | grep -q 'did not resolve the cached services; reconnecting'; then
        echo "guest: $label: bluetoothd stalled the cached resolve; the gateway reconnected (bound 20 s)"
        grep -c 'setsockopt(BT_SECURITY): Invalid argument' /tmp/bluetoothd.log \
            | sed 's/^/guest: bluetoothd security raises refused with EINVAL so far: /'
    else
        awk -v t="$took" 'BEGIN { exit !(t <= 10) }' || { echo "guest: FAIL $label took ${took}s (> 10 s)"; tail -40 $O/gateway.log; exit 1; }
    fi
    # The gateway kept the GATT tree bluetoothd kept: the connect after power-on started from that
    # cache, which arms the 5 s stalled-resolve limit. (Forgotten at power-off, a stalled MTU
    # exchange on the bonded link cost the whole 30 s connect timeout: CI at e6b7f19.)
    grep 'event="connectSucceeded' $O/gateway.log | tail -1 | grep -q 'servicesCached: true' || {
        echo "guest: FAIL $label: the connect after power-on did not start from the GATT cache"
        grep 'event="connectSucceeded' $O/gateway.log | tail -3; exit 1; }
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
