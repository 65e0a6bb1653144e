# Scenario: bluetoothd owns org.bluez but does not answer when the gateway starts (SIGSTOP: its
# main loop held, as when it waits on a stuck controller or a hung kernel task; a VM tier run of
# 2026-12-05 had bluetoothd waiting on a blocked kworker). The gateway's GetManagedObjects times
# out after 25 s: bridge/health must say `bluez_not_responding` (with systemd's STATUS= and the
# log's advice) instead of `starting` for good, and once bluetoothd runs again (SIGCONT) the
# gateway's next try must load its objects by itself: available within 20 s (its retries are at
# most 15 s apart), and readings within 30 s.
. "$(dirname "$0")/bluez-up.sh"
GATEWAY_AT_START=0
. "$(dirname "$0")/example-peripheral.sh"

stop_keep_advertising
kill -STOP "$BLUETOOTHD_PID"
[ -n "$(bluez_owner)" ] || { echo "guest: org.bluez has no owner"; exit 1; }
start_gateway
started=$(now)
# The first GetManagedObjects times out after the central's callTimeout (25 s).
wait_for_problem bluez_not_responding "$started" bluez-stuck-reported 40
wait_for_status "Bluetooth unavailable (bluez_not_responding)"
expect_log 'did not answer GetManagedObjects' warning
expect_log 'Bluetooth unavailable: bluetoothd runs but does not answer' advice

count=$(readings)
resumed=$(now)
kill -CONT "$BLUETOOTHD_PID"
start_keep_advertising
echo "guest: bluetoothd resumed"
wait_for_problem null "$resumed" bluez-stuck-available 20
wait_for_status "Bluetooth ready ($GW)"
wait_for_reading_after "$count" "$resumed" bluez-stuck-reading 30
stop_gateway
exit 0
