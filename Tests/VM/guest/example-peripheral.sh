# Sourced by the lifecycle scenarios (after bluez-up.sh): BlueZ's own, unmodified example
# peripheral (Debian's bluez-test-scripts: example-gatt-server, heart rate 0x180D with 0x2A37
# notify and battery; example-advertisement, "TestAdvertisement") on one controller, then the gateway
# side (gateway-side.sh: mosquitto, the notification socket, the configuration) for the other one,
# and `blebridge run` until the first heart-rate reading is published (unless GATEWAY_AT_START=0:
# the scenario starts it with start_gateway). The examples register on the first adapter bluetoothd
# lists; the gateway takes the other one (GW, PERIPHERAL: hciN; GW_INDEX, PERIPHERAL_INDEX: N).
# Helpers: those of gateway-side.sh, and start_examples, stop_examples, start_keep_advertising,
# stop_keep_advertising, examples_back LABEL, examples_back_then_gateway COUNT LABEL.
examples=/usr/share/doc/bluez-test-scripts/examples
[ -f "$examples/example-gatt-server" ] || { echo "guest: bluez-test-scripts missing (Tests/VM/prepare.sh installs it)"; exit 1; }
for index in 0 1; do busctl --system set-property org.bluez /org/bluez/hci$index org.bluez.Adapter1 Pairable b true; done

O=/tmp/out

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

# examples_back LABEL: after bluetoothd (re)started with the gateway's controller held off
# (AutoEnable=false): waits for both controllers, powers the peripheral's, registers the examples
# again and keeps them advertising.
examples_back() {
    bluez_has_both
    btmgmt --index "$PERIPHERAL_INDEX" power on >/dev/null 2>&1
    start_examples
    busctl --system get-property org.bluez /org/bluez/$PERIPHERAL org.bluez.LEAdvertisingManager1 ActiveInstances | grep -q 'y 1' \
        || { echo "guest: the example did not register on $PERIPHERAL ($1)"; exit 1; }
    start_keep_advertising
}

# examples_back_then_gateway COUNT LABEL: examples_back, then powers the gateway's controller (BACK)
# and waits for a reading beyond COUNT within 10 s.
examples_back_then_gateway() {
    examples_back "$2"
    power_on "$GW" "$2"
    wait_for_reading_after "$1" "$BACK" "$2"
}

PERIPHERAL_NAME=TestAdvertisement
. "$(dirname "$0")/gateway-side.sh"
if [ "${GATEWAY_AT_START:-1}" = 1 ]; then
    start_gateway
    wait_for_reading_after 0 "$(now)" first-reading-after-start 60
fi
