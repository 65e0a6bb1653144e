# Scenario: an unpaired read of a characteristic that needs encryption (BlueZ's example server,
# 12345678-…-def3, encrypt-read), on real bluetoothd 5.66 (issue 16). bluetoothd answers the peer's
# Insufficient Encryption by raising the link's security, i.e. pairing.
# 1. The peripheral's end refuses the pairing: one bluetoothd serves both ends here and one default
#    agent answers both; as the LE initiator of a Just Works pairing, the central's end pairs without
#    asking it (bluetoothd's log: only the peripheral's RequestAuthorization reached the agent), so
#    `accept_agent.py --reject` refuses on the peripheral's side, as a sensor refusing pairing would.
#    Seen on 2026-12-02 (bluez 5.66) and asserted: `org.bluez.Error.Failed` "Operation failed with
#    ATT error: 0x0e" within about a second, the device neither paired nor connected afterwards.
#    bluez 5.82 (Debian 13, 2026-12-07) never answers the read: the link drops about a second after
#    it, and only the probe's own time-out (NoReply) ends it; asserted for bluetoothd 5.7x and
#    later. A client must fail such a read on the link's drop (the BlueZ library does). (The
#    simulator's `NotPermitted` "Not paired", SecurityRaiseSimulatorTests, is the central's own agent
#    failing a passkey pairing, a case this rig cannot make.)
# 2. The agent accepts: the same read pairs, bonds and returns the (empty) value.
# Each answer is kept in /tmp/out/security.jsonl.
GATEWAY_AT_START=0
. "$(dirname "$0")/bluez-up.sh"
. "$(dirname "$0")/example-peripheral.sh"
ENCRYPTED=12345678-1234-5678-1234-56789abcdef3

# agent [--reject]: (re)starts the guest's default agent.
agent() {
    [ -n "${AGENT_PID:-}" ] && { kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; }
    python3 -u "$(dirname "$0")/accept_agent.py" "$@" >>$O/agent.log 2>&1 &
    AGENT_PID=$!
    for _ in $(seq 1 100); do [ "$(grep -c 'agent registered' $O/agent.log)" -ge "${AGENTS:=1}" ] && break; sleep 0.1; done
    AGENTS=$((AGENTS + 1))
}

# probe LABEL: the read; prints and returns bluetoothd's answer as one JSON line.
probe() {
    python3 -u "$(dirname "$0")/security_probe.py" $O/security.jsonl /org/bluez/$GW "$DEVICE" "$ENCRYPTED" "$1" \
        >>$O/probe.log 2>&1 || { echo "guest: FAIL: probe $1"; cat $O/probe.log; exit 1; }
    tail -1 $O/security.jsonl
}

agent --reject
rejected=$(probe rejected)
echo "guest: rejected pairing: $rejected"
version=$(/usr/libexec/bluetooth/bluetoothd --version)
if [ "$version" = 5.66 ]; then
    expected='.error == "org.bluez.Error.Failed" and .message == "Operation failed with ATT error: 0x0e"'
else
    expected='.error == "org.freedesktop.DBus.Error.NoReply" and .disconnected_after < 5'
fi
echo "$rejected" | jq -e "$expected"' and (.paired | not) and (.connected | not)' >/dev/null \
    || { echo "guest: FAIL: bluetoothd $version answered otherwise than measured ($expected)"; exit 1; }
agent
accepted=$(probe accepted)
echo "guest: accepted pairing: $accepted"
# The example's encrypted characteristic starts empty: a reply at all is the success.
echo "$accepted" | jq -e '(.reply | type) == "array" and .paired and .bonded' >/dev/null \
    || { echo "guest: FAIL: the read did not pair and succeed"; exit 1; }
exit 0
