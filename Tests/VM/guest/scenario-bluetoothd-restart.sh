# Scenario: bluetoothd stopped with SIGTERM, then with SIGKILL, and started again each time; readings
# must resume within 10 s (issue 16). The example peripheral lives in the same bluetoothd and must
# register again after each restart (its python start takes 5-20 s on a loaded emulated guest),
# where a real peripheral keeps serving while the gateway's bluetoothd restarts. So the gateway's
# controller stays powered off (mgmt, with AutoEnable off in the guest's main.conf) until the
# example serves again, and the time counts from bluetoothd reporting it powered (power_on): the gateway still loses org.bluez,
# every object and its adapter. (Without this the gateway connected before the example was back,
# found no 0x2A37, and its pool's reconnect backoff added up to 8 s: 4.1 s after SIGTERM, 16.6 s
# after SIGKILL, measured from the example's return; the gateway now waits up to 15 s connected
# for such a characteristic instead, a path this scenario does not exercise. Holding the controller with an rfkill soft
# block instead crashed the guest kernel once: list corruption in bluetoothd's syscall path.)
. "$(dirname "$0")/bluez-up.sh"
. "$(dirname "$0")/example-peripheral.sh"
sed -i 's/^#\?AutoEnable=true/AutoEnable=false/' /etc/bluetooth/main.conf  # bluez 5.82's file has it commented out

restart_bluetoothd() {
    local signal=$1 count back
    # No advertising toggles while bluetoothd is away and the example registers again.
    stop_keep_advertising
    kill -"$signal" "$BLUETOOTHD_PID"
    wait "$BLUETOOTHD_PID" 2>/dev/null
    stop_examples
    btmgmt --index "$GW_INDEX" power off >/dev/null 2>&1
    sleep 2
    count=$(readings)
    /usr/libexec/bluetooth/bluetoothd -n -d >>/tmp/bluetoothd.log 2>&1 &
    BLUETOOTHD_PID=$!
    examples_back_then_gateway "$count" "bluetoothd-$signal"
}

restart_bluetoothd TERM
restart_bluetoothd KILL
kill $GATEWAY_PID 2>/dev/null
exit 0
