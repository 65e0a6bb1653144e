"""Drives bluetoothctl (BlueZ's own client, unchanged) through a pseudo-terminal over scan, info,
connect, list-attributes, read, notify, write, pair with its agent, and disconnect, and writes its
transcript: raw (OUT.raw) and normalised (OUT), one event per line in the order bluetoothctl
printed them. Runs against whatever owns org.bluez on the system bus: the simulator, or real
bluetoothd in the VM (Tests/VM/guest/capture-reference.sh), whose normalised transcript is kept as
Reference/bluez-5.66/bluetoothctl.txt. --compare checks one transcript against the other event by
event (see ALLOWED below for the differences allowed, and why).

Usage: bluetoothctl_session.py OUT ADDRESS READ_UUID NOTIFY_UUID WRITE_UUID WRITE_HEX
       bluetoothctl_session.py --compare REFERENCE OURS
"""
import os
import pty
import re
import select
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x01|\x02|\r")
PROMPT = re.compile(r"^\[[^\]]*\][#>] ?")
AGENT_PROMPT = re.compile(r"^(\[agent\] [^\n]*\((?:yes/no)\): ?)(.*)$")


class Session:
    def __init__(self):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvp("bluetoothctl", ["bluetoothctl"])
        self.raw = ""
        self.seen = 0

    def pump(self, seconds):
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536).decode("utf-8", "replace")
                except OSError:
                    return

    def expect(self, pattern, timeout=30.0):
        """Waits until `pattern` appears in output not yet matched; returns the match."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = regex.search(ANSI.sub("", self.raw), self.seen)
            if match:
                self.seen = match.end()
                return match
            self.pump(0.1)
        raise AssertionError("bluetoothctl: timed out waiting for %r; transcript:\n%s" % (pattern, ANSI.sub("", self.raw)))

    def expect_lines(self, pattern, count, timeout=30.0):
        """Waits until `count` lines matching `pattern` (a whole line, after any prompts) appeared in
        output not yet matched."""
        regex = re.compile(r"^(?:\[[^\]]*\][#>] ?)*\s*(?:%s)\s*$" % pattern, re.M)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            matches = list(regex.finditer(ANSI.sub("", self.raw), self.seen))
            if len(matches) >= count:
                self.seen = matches[count - 1].end()
                return
            self.pump(0.1)
        raise AssertionError("bluetoothctl: timed out waiting for %d lines %r; transcript:\n%s"
                             % (count, pattern, ANSI.sub("", self.raw)))

    def send(self, line, settle=0.3):
        os.write(self.fd, (line + "\n").encode())
        self.pump(settle)


def normalise(raw, address):
    """One line per printed event: ANSI codes, prompts and echoed commands out; addresses, object
    paths' adapter and numbers that vary between runs masked."""
    lines = []
    for line in ANSI.sub("", raw).split("\n"):
        line = PROMPT.sub("", line.strip()).strip()
        while PROMPT.match(line):
            line = PROMPT.sub("", line).strip()
        if not line:
            continue
        # An agent's question is a prompt too: what bluetoothd printed after it is an event of its own.
        question = AGENT_PROMPT.match(line)
        if question and question.group(2) not in ("", "yes", "no"):
            lines.extend(normalise(question.group(1), address))
            line = question.group(2)
        line = line.replace(address, "ADDRESS").replace(address.replace(":", "_"), "ADDRESS")
        line = re.sub(r"/org/bluez/hci\d", "/org/bluez/hciX", line)
        line = re.sub(r"Controller [0-9A-F:]{17}", "Controller CONTROLLER", line)
        line = re.sub(r"RSSI: .*", "RSSI: N", line)
        line = re.sub(r"TxPower: .*", "TxPower: N", line)
        line = re.sub(r"passkey \d+", "passkey NNNNNN", line)
        lines.append(line)
    return lines


def run(out, address, read_uuid, notify_uuid, write_uuid, write_hex):
    s = Session()
    s.expect(r"Agent registered", 30)  # bluetoothctl registers its agent at start; default-agent needs it
    if os.environ.get("BLUETOOTHCTL_CONTROLLER"):  # the VM has two controllers; the central is not the default
        s.send("select " + os.environ["BLUETOOTHCTL_CONTROLLER"])
    s.send("default-agent")
    s.expect(r"Default agent request successful")
    s.send("scan on")
    s.expect(r"\[NEW\] Device " + address, 40)
    s.send("scan off")
    s.expect(r"Discovery stopped")
    # bluetoothd's "Discovering: no" follows the controller's event, at no fixed point after the
    # reply: waited for, so that it is not printed among the next command's output.
    s.expect(r"Discovering: no")
    s.send("info " + address)
    s.expect(r"Connected: no")
    s.send("connect " + address)
    s.expect(r"Connection successful", 60)
    s.expect(r"ServicesResolved: yes", 60)
    s.pump(1)
    s.send("menu gatt")
    s.send("list-attributes " + address, settle=1.0)
    s.send("select-attribute " + read_uuid)
    s.send("read")
    s.expect(r"Attempting to read")
    # The value's [CHG] and its dump, then the reply's dump: all printed before the next command is
    # typed (a second's pause was not always enough on a loaded machine, and a command typed while
    # the read was outstanding changed what was printed; make stress, 2026-12-03).
    s.expect(r"\[CHG\] Attribute \S+ Value:")
    s.expect_lines(r"(?:[0-9a-f]{2} )+ +\S.*", 2)
    s.pump(0.5)
    s.send("select-attribute " + notify_uuid)
    s.send("notify on")
    s.expect(r"Notify started|Failed to start notify")
    # At least one notification (the peer sends one a second), however loaded the machine.
    s.expect(r"\[CHG\] Attribute \S+ Value:")
    s.pump(2)
    s.send("notify off")
    s.expect(r"Notify stopped|Failed to stop notify")
    s.send("select-attribute " + write_uuid)
    s.send('write "%s"' % " ".join("0x" + write_hex[i:i + 2] for i in range(0, len(write_hex), 2)))
    s.expect(r"Attempting to write")
    s.pump(1)
    s.send("back")
    s.send("pair " + address)
    # The agent answers what it is asked, as a user would: in the VM one bluetoothd serves both
    # ends and its numeric comparison for the peripheral's end reaches this default agent too.
    for _ in range(4):
        outcome = s.expect(r"Pairing successful|Failed to pair|Confirm passkey \d+ \(yes/no\)|Accept pairing \(yes/no\)", 60)
        if outcome.group(0).startswith(("Pairing", "Failed")):
            break
        s.send("yes")
    s.pump(1)
    s.send("disconnect " + address)
    s.expect(r"Successful disconnected|Failed to disconnect", 30)
    s.pump(1)
    s.send("quit", settle=1.0)
    with open(out + ".raw", "w") as raw:
        raw.write(s.raw)
    with open(out, "w") as normalised:
        normalised.write("\n".join(normalise(s.raw, address)) + "\n")


# The comparison: every event bluetoothctl printed, in order, must be the same against the
# simulator as against bluetoothd. An event is one printed line, or one block (an attribute: its
# header, path, UUID and name; a value: its header and hex dump). Handles are masked (the GATT
# database's layout is the peer's: the simulator mirrors the example's services, not its handles),
# and runs of identical events are one event (how many RSSI updates or notifications come in a
# given time is the peer's timing). Events that may legitimately differ are dropped from both
# transcripts first; each is listed here with why:
ALLOWED = [
    (r"^select [0-9A-F:]{17}$|^Controller CONTROLLER .*\[default\]$",
     "the VM has two controllers and the session selects the central; the simulator's only adapter "
     "is the default already"),
    (r"Controller ADDRESS |Device (?!ADDRESS)[0-9A-F]{2}:[0-9A-F:]{14}|/dev_(?!ADDRESS)[0-9A-F]{2}_",
     "the VM's other controller is the peripheral's own (the same bluetoothd serves it): bluetoothctl "
     "prints it and the device objects it keeps for the central too"),
    (r"^Request (confirmation|canceled)$|^\[agent\] Confirm passkey \S+ \(yes/no\)",
     "in the VM one bluetoothd serves both ends, so the peripheral end's numeric comparison is asked of "
     "the same default agent (bluetoothd.log: RequestConfirmation for the central's address on the "
     "peripheral's controller); a real sensor answers its own end, and the central's end is accepted "
     "by bluetoothd itself (btd_adapter_confirm_reply without an agent call)"),
    (r'^(select \S+|default-agent|scan (on|off)|info ADDRESS|connect ADDRESS|menu gatt|list-attributes ADDRESS|'
     r'select-attribute \S+|read|notify (on|off)|write ".*"|back|pair ADDRESS|yes|disconnect ADDRESS|quit)$',
     "the session's own commands, echoed by the terminal: the same in both transcripts by construction, "
     "and where an echo falls among bluetoothd's asynchronous events is the machine's timing (on a host at "
     "load average 15-20 'default-agent' was echoed before 'Pairable: yes' came, and a measurement was "
     "printed after the 'notify off' echo, 2026-12-02)"),
    (r"^\[CHG\] Device ADDRESS Connected: yes$",
     "bluetoothctl did not print it against bluetoothd in any of four VM transcripts ('Attempting to "
     "connect', then 'Connection successful', and 'Connected: no' later), for reasons not found; "
     "against the simulator it does"),
]
HANDLES = re.compile(r"(service|char|desc)[0-9a-f]{4}")
ATTRIBUTE = re.compile(r"^(\[(NEW|DEL)\] )?(Primary Service|Secondary Service|Characteristic|Descriptor) \(Handle")
HEXDUMP = re.compile(r"^([0-9a-f]{2} )+ +.*$")


def events(path):
    """The transcript's events, masked and grouped, with the allowed differences dropped."""
    lines = [HANDLES.sub(r"\1XXXX", line.rstrip("\n")) for line in open(path)]
    grouped, notifying, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        if ATTRIBUTE.match(line):
            line, i = " | ".join(lines[i:i + 4]), i + 4
        elif line.endswith(" Value:"):
            i += 1
            dump = []
            while i < len(lines) and HEXDUMP.match(lines[i]):
                dump.append(lines[i])
                i += 1
            # A read's value is the database's; a notification's is the peer's measurement.
            line += " " + ("<measurement>" if notifying else " ".join(d.split("  ")[0].strip() for d in dump))
        else:
            i += 1
        notifying = line == "Notify started" or (notifying and line != "Notify stopped")
        if any(re.search(pattern, line) for pattern, _ in ALLOWED):
            continue
        if not grouped or grouped[-1] != line:
            grouped.append(line)
    return grouped


def compare(reference, ours):
    want, got = events(reference), events(ours)
    if want != got:
        import difflib
        sys.exit("bluetoothctl transcripts differ (bluetoothd - / simulator +):\n" + "\n".join(
            difflib.unified_diff(want, got, "bluetoothd", "simulator", lineterm="")))
    print("bluetoothctl transcript ok (%d events compared)" % len(want))


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        run(*sys.argv[1:])
