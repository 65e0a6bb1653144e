# vm-opt-in: a capture, not a check; run it by name: Tests/VM/run-tier.sh Tests/VM/guest/scenario-sigterm-capture.sh
# Capture: what a client of the system bus sees when bluetoothd 5.66 gets SIGTERM and is started
# again (as `systemctl restart bluetooth` does), with the gateway connected to BlueZ's example
# peripheral, first unbonded, then bonded. dbus-monitor records every signal bluetoothd sends and
# org.bluez's NameOwnerChanged, from before the signal until the restarted bluetoothd has powered
# its controllers again (AutoEnable, Debian's default): sigterm-unbonded.monitor.txt and
# sigterm-bonded.monitor.txt in the output directory. Tests/VM/sigterm-order.py reduces them to
# the order the simulator's `restartBluez(stop: .terminate)` is compared with
# (Tests/BlueZSimulatorTests/Reference/bluez-5.66/sigterm-*.txt, BluezStopTests).
# vm-timeout: 600
. "$(dirname "$0")/bluez-up.sh"
. "$(dirname "$0")/example-peripheral.sh"

# capture LABEL: SIGTERM to bluetoothd under dbus-monitor, bluetoothd started again, both
# controllers back and powered, then 3 s more for the devices it loads.
capture() {
    local label=$1 monitor
    stdbuf -oL dbus-monitor --system "type='signal',sender='org.bluez'" \
        "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'" \
        >$O/$label.monitor.txt 2>&1 &
    monitor=$!
    sleep 1
    stop_keep_advertising
    echo "$(now) SIGTERM" >$O/$label.times.txt
    kill -TERM "$BLUETOOTHD_PID"
    wait "$BLUETOOTHD_PID" 2>/dev/null
    echo "$(now) bluetoothd exited" >>$O/$label.times.txt
    stop_examples
    sleep 1
    /usr/libexec/bluetooth/bluetoothd -n -d >>/tmp/bluetoothd.log 2>&1 &
    BLUETOOTHD_PID=$!
    bluez_has_both
    # With AutoEnable off (the bonded capture), the controllers are powered as a client would.
    grep -q '^AutoEnable=false' /etc/bluetooth/main.conf \
        && for index in 0 1; do busctl --system set-property org.bluez /org/bluez/hci$index org.bluez.Adapter1 Powered b true; done
    for _ in $(seq 1 100); do
        [ "$(busctl --system get-property org.bluez /org/bluez/$GW org.bluez.Adapter1 Powered)" = "b true" ] && break
        sleep 0.1
    done
    echo "$(now) $GW powered" >>$O/$label.times.txt
    sleep 3
    kill "$monitor"
    ls -R /var/lib/bluetooth >$O/$label.storage.txt 2>&1
    echo "guest: $label: $(grep -c '^signal' $O/$label.monitor.txt) signals captured"
}

capture sigterm-unbonded
# The gateway's reconnect to the examples after that restart timed out (30 s, twice: the gateway's
# controller was powered by AutoEnable before the examples were back, 2026-12-02), so the gateway
# is brought back as scenario-bluetoothd-restart.sh does: bluetoothd restarted once more with the
# gateway's controller held off until the examples serve again.
sed -i 's/^#\?AutoEnable=true/AutoEnable=false/' /etc/bluetooth/main.conf  # bluez 5.82's file has it commented out
kill -TERM "$BLUETOOTHD_PID"
wait "$BLUETOOTHD_PID" 2>/dev/null
stop_examples
btmgmt --index "$GW_INDEX" power off >/dev/null 2>&1
count=$(readings)
/usr/libexec/bluetooth/bluetoothd -n -d >>/tmp/bluetoothd.log 2>&1 &
BLUETOOTHD_PID=$!
examples_back reconnect
power_on "$GW" reconnect
wait_for_reading_after "$count" "$BACK" reconnect 60

python3 -u "$(dirname "$0")/accept_agent.py" >$O/agent.log 2>&1 &
for _ in $(seq 1 100); do grep -q 'agent registered' $O/agent.log && break; sleep 0.1; done
busctl --system call org.bluez "$DEVICE" org.bluez.Device1 Pair || { echo "guest: Pair failed"; cat $O/agent.log; exit 1; }
[ "$(busctl --system get-property org.bluez "$DEVICE" org.bluez.Device1 Bonded)" = "b true" ] || { echo "guest: not bonded"; exit 1; }
echo "guest: bonded with $PERIPHERAL_ADDRESS"
capture sigterm-bonded
echo "$GW $PERIPHERAL $DEVICE" >$O/roles.txt
kill $GATEWAY_PID 2>/dev/null
exit 0
