"""`make faults`: the fault campaign (issue 19). Each case starts a fresh world (dbus-daemon, the
simulator in load mode, mosquitto, the real gateway in durable mode, a measuring subscriber),
streams sequence-numbered readings, applies its fault, drains, and reports per device the
readings lost, duplicated and reordered, plus `PRAGMA integrity_check` of the outbox.

    campaign.py BINARY [CASE …]

Environment: FAULTS_DEVICES (10), FAULTS_RATE (per device, 10/s), FAULTS_FREEZE_SECONDS (60: the
broker's SIGSTOP), FAULTS_KILL_WINDOW_MS (the SIGKILL bound, below), FAULTS_RESULTS (where the
Markdown table goes), FAULTS_KEEP=1 keeps each case's directory (logs, configuration, outbox).

The one loss the product allows (docs/testing.md, "Bounded losses"): a gateway SIGKILL loses the
readings BlueZ handed over that were not yet committed. A lost reading is counted as within that
bound only when, for one of the case's kills, it was not in the outbox right after the kill (not
committed), no later reading of the same device sent before the process was gone was delivered
(the gateway commits each device's readings in order, so what it lost is the tail it had not
committed), and either it was sent (the simulator's exact send time) at most FAULTS_KILL_WINDOW_MS
before the SIGKILL or after it, or it was never handed to the gateway: still unread in its notify
sockets when the process was gone (the campaign holds duplicates of those sockets across the kill,
`HeldNotifySockets`, and reads what they still queue), or newer than such a reading of its device
(a socket is first in, first out: the gateway cannot have read it, so the simulator dropped it at
the full socket, as bluetoothd does). Every other lost reading fails the case: a committed one, a
gap before newer committed ones, or one the gateway had read and held uncommitted for longer.

FAULTS_GATEWAY_CPU=0.08 runs the gateway under a CPU quota (that share of one core), as on a
machine loaded by others; `sigkill-10000-queued` at 1,000 readings/s needs about 0.12.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import harness
from harness import log, wait_until

DEVICES = int(os.environ.get("FAULTS_DEVICES", "10"))
RATE = float(os.environ.get("FAULTS_RATE", "10"))
FREEZE = float(os.environ.get("FAULTS_FREEZE_SECONDS", "60"))
KILL_WINDOW_NS = int(float(os.environ.get("FAULTS_KILL_WINDOW_MS", "250")) * 1e6)
# Built by run.sh from clockshift.c: shifts the gateway's wall clock only.
CLOCKSHIFT = os.environ.get("FAULTS_CLOCKSHIFT", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                              "../../.build/faults/clockshift.so"))


def now_ns():
    return time.time_ns()


class Case:
    """A case's world and what it records besides the counts: notes and fault windows."""

    def __init__(self, world):
        self.world = world
        self.notes = []
        self.windows = []  # (start ns, end ns) of each fault, for attributing lost readings
        self.kills = []  # Kill of each gateway SIGKILL, for the bounded loss

    def note(self, text):
        log("   ", text)
        self.notes.append(text)

    def fault(self, action, settle):
        """Runs action() as a fault; the window runs until settle() returns."""
        start = now_ns()
        action()
        settle()
        self.windows.append((start, now_ns()))


class Kill:
    """A gateway SIGKILL: when it was sent, when the process was gone, and what the outbox held."""

    def __init__(self, signalled, reaped, committed, unread=None):
        self.signalled = signalled
        self.reaped = reaped
        self.committed = committed  # {(device, sequence)} in the outbox right after the kill
        self.unread = unread or set()  # {(device, sequence)} still unread in its notify sockets when it was gone

    def oldest_unread(self, device):
        """The oldest sequence of `device` still unread in the notify sockets (inf when none)."""
        return min((s for d, s in self.unread if d == device), default=float("inf"))


def kill_gateway(case):
    """SIGKILLs the gateway, waits until it is gone and records the kill with the outbox's readings."""
    w = case.world
    cpu = harness.cpu_seconds(w.gateway.pid)
    held = harness.HeldNotifySockets(w.gateway.pid)
    signalled = now_ns()
    w.stop_gateway(signal.SIGKILL)
    reaped = now_ns()
    unread = held.drain()
    kill = Kill(signalled, reaped, harness.outbox_readings(w.outbox) if os.path.exists(w.outbox) else set(), unread)
    kill.cpu = cpu
    case.kills.append(kill)
    return kill


# ---------------------------------------------------------------- the cases
def broker_killed(case):
    w = case.world
    time.sleep(5)
    for _ in range(3):
        case.fault(lambda: w.kill_broker(signal.SIGKILL), lambda: (time.sleep(5), w.start_broker()))
        time.sleep(8)


def broker_frozen(case):
    w = case.world
    time.sleep(5)
    case.fault(lambda: w.mosquitto.send_signal(signal.SIGSTOP),
               lambda: (time.sleep(FREEZE), w.mosquitto.send_signal(signal.SIGCONT)))
    case.note(f"broker frozen {FREEZE:.0f} s")
    time.sleep(15)


def gateway_killed(case):
    w = case.world
    for _ in range(3):
        time.sleep(5)
        case.fault(lambda: kill_gateway(case),
                   lambda: (w.start_gateway(), wait_until(w.all_notifying, 120, "devices notifying again")))
    time.sleep(5)


def broker_away_until(w, condition, what):
    """Kills the broker and waits (10 min at most) until condition(); returns the seconds it took."""
    w.kill_broker(signal.SIGKILL)
    started = time.monotonic()
    wait_until(condition, 600, what)
    return time.monotonic() - started


def killed_with_queue(case):
    w = case.world
    time.sleep(3)
    outage = broker_away_until(w, lambda: (harness.outbox_rows(w.outbox) or 0) >= 10_000, "10,000 readings queued")
    kill = kill_gateway(case)
    case.windows.append((kill.signalled, kill.reaped))
    rows = harness.outbox_rows(w.outbox)
    case.note(f"SIGKILL with {rows} readings in the outbox ({outage:.0f} s of broker outage);"
              f" integrity right after the kill: {harness.integrity_check(w.outbox)}")
    w.start_gateway()
    wait_until(w.all_notifying, 120, "devices notifying again")
    w.start_broker()
    time.sleep(5)


def full_disk(case):
    w = case.world
    time.sleep(5)
    outage = broker_away_until(w, lambda: w.gateway_log_contains("outbox refused readings"),
                               "the outbox refusing (disk full)")
    case.note(f"disk full after {outage:.0f} s of broker outage"
              f" ({harness.outbox_rows(w.outbox)} readings in the outbox)")
    time.sleep(10)
    w.start_broker()
    time.sleep(20)
    case.note("outbox accepts readings again: " + ("yes" if w.gateway_log_contains("outbox accepts readings again")
                                                  else "not logged"))


def outbox_deleted(case):
    w = case.world
    time.sleep(5)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(w.outbox + suffix):
            os.unlink(w.outbox + suffix)
    case.note("outbox, WAL and shm unlinked while running")
    time.sleep(10)
    status, took = w.stop_gateway()
    case.note(f"SIGTERM: exit {status} in {took:.1f} s")
    w.start_gateway()
    wait_until(w.all_notifying, 120, "devices notifying again")
    case.note("restarted on a new outbox: " + ("yes" if os.path.exists(w.outbox) else "no file"))
    time.sleep(10)


def outbox_read_only(case):
    w = case.world
    time.sleep(5)
    paths = [p for p in (w.outbox, w.outbox + "-wal", w.outbox + "-shm") if os.path.exists(p)]
    for path in paths:
        os.chmod(path, 0o444)
    os.chmod(w.outbox_dir, 0o555)
    case.note("outbox files 0444 and their directory 0555 while running (the gateway runs as nobody)")
    time.sleep(10)
    status, took = w.stop_gateway()
    case.note(f"SIGTERM: exit {status} in {took:.1f} s")
    restarted = now_ns()
    w.start_gateway(wrapper=NOBODY)
    time.sleep(10)
    case.windows.append((restarted, now_ns()))
    exited = w.gateway.poll()
    case.note(f"restart on the read-only outbox: {'exit ' + str(exited) if exited is not None else 'running'};"
              f" log: {last_lines(w.gateway_log, 2)}")
    if exited is None:
        w.stop_gateway()
    os.chmod(w.outbox_dir, 0o755)
    for path in paths:
        os.chmod(path, 0o644)
    w.start_gateway(wrapper=NOBODY)
    wait_until(w.all_notifying, 120, "devices notifying again")
    time.sleep(10)


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def clock_jump(case):
    """The gateway's wall clock (only its own, through clockshift.so) jumps +1 h, back, -1 h, back."""
    w = case.world
    offset_file = os.path.join(w.work, "clockshift")

    def jump(seconds):
        with open(offset_file + ".new", "w") as f:
            f.write(f"{seconds}\n")
        os.replace(offset_file + ".new", offset_file)

    time.sleep(5)
    for seconds in (3600, 0, -3600, 0):
        case.fault(lambda: jump(seconds), lambda: time.sleep(8))
    case.note("gateway wall clock +1 h, back, -1 h, back, 8 s each (CLOCK_REALTIME only)")


def three_link_faults(case, action, what):
    """3 × (5 s of streaming, action(), then until every device notifies again), then 5 s."""
    w = case.world
    for _ in range(3):
        time.sleep(5)
        case.fault(action, lambda: wait_until(w.all_notifying, 120, f"devices notifying after {what}"))
    time.sleep(5)


def bluetoothd_restarted(case):
    three_link_faults(case, lambda: case.world.simulator_call("RestartBluez", check=True), "the restart")


def adapter_power_cycled(case):
    w = case.world
    three_link_faults(case, lambda: (w.simulator_call("SetPowered", "b", "false", check=True), time.sleep(2),
                                     w.simulator_call("SetPowered", "b", "true", check=True)), "power-on")


def links_dropped(case):
    """The soak's most frequent event: the peer drops a link (DisconnectDevice), every device, 3×."""
    w = case.world
    three_link_faults(case, lambda: [w.simulator_call("DisconnectDevice", "s", "C0:FF:EE:10:%02X:%02X"
                                                      % (i >> 8, i & 0xFF)) for i in range(w.devices)], "the drop")


def command_flood(case):
    w = case.world
    # The gateway's CPU use while only readings stream, over the case's first 5 s: subtracted from
    # what the flood costs it.
    idle_cpu = harness.cpu_seconds(w.gateway.pid)[0]
    idle_since = time.monotonic()
    time.sleep(5)
    flood_seconds, rate = 10, 10_000
    client = harness.mqtt.Client(harness.mqtt.CallbackAPIVersion.VERSION2, client_id="faults-flood")
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", w.broker_port)
    client.loop_start()
    sent = 0
    wait_until(lambda: w.subscriber.commands_handled() is not None, 30, "a health message with `commands`")
    handled_before = w.subscriber.commands_handled()
    started = time.monotonic()
    started_ns = now_ns()
    cpu_before = harness.cpu_seconds(w.gateway.pid)[0]
    background = (cpu_before - idle_cpu) / (started - idle_since)  # CPU seconds per second for the readings
    answers_before = w.subscriber.responses
    # Commands the gateway must parse and answer: unknown fields on configured devices.
    while (elapsed := time.monotonic() - started) < flood_seconds:
        target = int(elapsed * rate)
        while sent < target:
            device = sent % DEVICES
            client.publish("blebridge/load-%04d/set" % device, '{"no_such_field":%d}' % sent, qos=0)
            sent += 1
        time.sleep(0.001)
    took = time.monotonic() - started
    case.windows.append((now_ns() - int(took * 1e9), now_ns()))
    # The gateway still answers a bridge request right after the flood (its backlog still there).
    answered = threading.Event()
    probe = harness.mqtt.Client(harness.mqtt.CallbackAPIVersion.VERSION2, client_id="faults-probe")
    probe.on_message = lambda *_: answered.set()
    probe.connect("127.0.0.1", w.broker_port)
    probe.subscribe("blebridge/bridge/response/devices", qos=1)
    probe.loop_start()
    time.sleep(0.5)
    asked = time.monotonic()
    probe.publish("blebridge/bridge/request/devices", "{}", qos=1)
    ok = answered.wait(300)
    answer = f"in {time.monotonic() - asked:.2f} s" if ok else "NOT within 300 s"
    # The gateway's own rate, from its health counter (1 s resolution), and its CPU time per command
    # (what a shared machine's load does not change much): the sender's rate is the Python
    # client's and the broker's, not the gateway's.
    try:
        wait_until(lambda: w.subscriber.commands_handled() - handled_before >= sent, 300, "every command handled")
        ended = time.monotonic()
        cpu = harness.cpu_seconds(w.gateway.pid)[0] - cpu_before - background * (ended - started)
        with w.subscriber.lock:
            done = next(t for t, n in w.subscriber.commands_seen if n - handled_before >= sent)
        handled = (f"the gateway handled all {sent} in {(done - started_ns) / 1e9:.1f} s from the first"
                   f" ({sent / ((done - started_ns) / 1e9):,.0f}/s, health counter, 1 s resolution), using"
                   f" {cpu:.1f} s of CPU for them ({cpu / sent * 1e6:.0f} µs a command; readings' share"
                   f" {background:.3f} CPU s/s subtracted)")
    except TimeoutError:
        handled = f"the gateway handled only {w.subscriber.commands_handled() - handled_before} within 300 s"
    case.note(f"{sent} commands sent in {took:.1f} s ({sent / took:,.0f}/s, QoS 0); bridge/request/devices"
              f" after the flood answered {answer}; {handled}; answers received"
              f" {w.subscriber.responses - answers_before}")
    probe.loop_stop()
    client.loop_stop()
    time.sleep(5)


def last_lines(path, count):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(line.strip() for line in f.readlines()[-count:])
    except OSError:
        return "(no log)"


CASES = {
    "broker-killed-3x": (broker_killed, {}),
    "broker-frozen": (broker_frozen, {}),
    "gateway-sigkill-3x": (gateway_killed, {}),
    "sigkill-10000-queued": (killed_with_queue, {"rate": 50, "devices": 20}),
    "full-disk-2mb": (full_disk, {"tmpfs": "2m"}),
    "outbox-deleted": (outbox_deleted, {}),
    "outbox-read-only": (outbox_read_only, {"nobody": True}),
    "clock-jump-1h": (clock_jump, {"clockshift": True}),
    "bluetoothd-restarted-3x": (bluetoothd_restarted, {}),
    "adapter-power-cycled-3x": (adapter_power_cycled, {}),
    "command-flood-10000-per-s": (command_flood, {}),
    "links-dropped-3x": (links_dropped, {}),
}


def run_case(binary, name):
    function, options = CASES[name]
    devices = options.get("devices", DEVICES)
    rate = options.get("rate", RATE)
    world = harness.World(binary, name, devices, rate)
    case = Case(world)
    mounted = None
    try:
        if "tmpfs" in options:
            mounted = os.path.join(world.work, "tmpfs")
            os.makedirs(mounted)
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={options['tmpfs']}", "tmpfs", mounted], check=True)
            world.outbox_dir = mounted
            world.outbox = os.path.join(mounted, "outbox.sqlite")
            case.note(f"outbox on a {options['tmpfs']} tmpfs")
        if options.get("nobody"):
            world.outbox_dir = os.path.join(world.work, "outbox")
            os.makedirs(world.outbox_dir)
            os.chown(world.outbox_dir, 65534, 65534)
            os.chmod(world.work, 0o755)
            world.outbox = os.path.join(world.outbox_dir, "outbox.sqlite")
            world.first_wrapper = NOBODY
        if options.get("clockshift"):
            with open(os.path.join(world.work, "clockshift"), "w") as f:
                f.write("0\n")
            world.gateway_env = {"LD_PRELOAD": CLOCKSHIFT, "CLOCKSHIFT_FILE": os.path.join(world.work, "clockshift")}
        log(f"[{name}] {devices} devices × {rate:g}/s")
        world.start()
        function(case)
        result = world.finish(drain_seconds=180)
    except Exception as error:  # a case that cannot finish is a failure, reported with its reason
        log(f"[{name}] ERROR {error!r}")
        result = {"error": repr(error), "sent": 0, "rows": [], "lost": None, "broker_lost": None, "duplicated": None,
                  "reordered": None,
                  "integrity": harness.integrity_check(world.outbox) if os.path.exists(world.outbox) else "no file",
                  "sigterm": None, "sigterm_seconds": 0, "dropped_reported": None}
    finally:
        world.close(keep=os.environ.get("FAULTS_KEEP") == "1")
        if mounted:
            subprocess.run(["umount", "-l", mounted])
            if os.environ.get("FAULTS_KEEP") != "1":  # close() could not remove the mount point
                shutil.rmtree(world.work, ignore_errors=True)
    result["name"] = name
    result["notes"] = case.notes
    if result.get("lost"):
        case.note(describe_lost(result["rows"], case.windows))
    result["at_fault"] = lost_near(result.get("rows", []), case.windows)
    result["bounded"], result["unbounded"], bounded_before, late, unread, dropped, turns = judge_kill_losses(
        result.get("rows", []), case.kills)
    if bounded_before:
        case.note(f"{len(bounded_before)} within the SIGKILL bound by time (sent {min(bounded_before):.0f} to"
                  f" {max(bounded_before):.0f} ms before a kill; negative: after the signal, before the process"
                  f" was gone)")
    if unread:
        case.note(f"{len(unread)} within it as never handed to the gateway, sent {min(unread):.0f} to"
                  f" {max(unread):.0f} ms before the kill: {len(unread) - dropped} still in its notify sockets when"
                  f" it was gone, {dropped} newer than one still there (dropped by the simulator at a full socket)")
    if turns:
        case.note(f"{len(turns)} within it as the last poller turn of a device still behind (read, not yet"
                  f" committed, at most {POLLER_TURN} a device, with newer readings still in its socket), sent"
                  f" {min(turns):.0f} to {max(turns):.0f} ms before the kill")
    if late:
        case.note(f"{len(late)} outside it: not committed at a kill (its tail) and read by the gateway, but sent"
                  f" {min(late):.0f} to {max(late):.0f} ms before it, more than {KILL_WINDOW_NS / 1e6:.0f} ms: the"
                  f" gateway held readings it had read that long without committing them")
    for kill in case.kills:
        lags = commit_lags(result.get("rows", []), kill)
        case.note(f"kill: the process was gone {(kill.reaped - kill.signalled) / 1e6:.0f} ms after the signal;"
                  f" {len(kill.committed)} readings in the outbox"
                  + (f"; commit lag at the signal (oldest uncommitted reading's age) per device"
                     f" {min(lags):.0f}/{sorted(lags)[len(lags) // 2]:.0f}/{max(lags):.0f} ms min/median/max"
                     if lags else "; every reading sent before the signal was committed or delivered")
                  + f"; {len(kill.unread)} readings still unread in its notify sockets when it was gone"
                  + (f"; the process had used {kill.cpu[0]:.1f} s of CPU in {kill.cpu[1]:.1f} s" if kill.cpu else ""))
    dump_losses(name, result.get("rows", []), case.kills)
    log(f"[{name}] sent {result['sent']} lost {result['lost']} (within the SIGKILL bound: {result['bounded']};"
        f" at a fault ±2 s: {result['at_fault']})"
        f" lost by the broker after its PUBACK {result.get('broker_lost')}"
        f" duplicated {result['duplicated']} reordered {result['reordered']} integrity {result['integrity']}"
        f" SIGTERM exit {result['sigterm']} in {result['sigterm_seconds']:.1f} s")
    return result


def dump_losses(name, rows, kills):
    """Writes what the judgement used to FAULTS_LOSSES_DIR/<case>.json (when set): per device the
    lost sequences with their send times, and per kill its times, the sequences in the outbox
    right after it and those still unread in the notify sockets."""
    directory = os.environ.get("FAULTS_LOSSES_DIR")
    if not directory:
        return
    os.makedirs(directory, exist_ok=True)
    document = {
        "devices": [{"device": r["device"], "sent": r["sent"], "lost": r["lost_sequences"],
                     "lost_sent_ns": [send_time(r, q) for q in r["lost_sequences"]],
                     "delivered_max": max(r.get("delivered") or [0])} for r in rows],
        "kills": [{"signalled": k.signalled, "reaped": k.reaped, "committed": sorted(k.committed),
                   "unread": sorted(k.unread or ())} for k in kills],
    }
    with open(os.path.join(directory, name + ".json"), "w") as f:
        json.dump(document, f)


def describe_lost(rows, windows):
    """When the lost readings were sent: relative to the nearest fault, or as UTC times."""
    stamps = sorted(t for r in rows for t in r["lost_times"])
    if windows:
        offsets = [min((t - start for start, _ in windows), key=abs) / 1e6 for t in stamps]
        before = sum(1 for o in offsets if o < 0)
        return (f"lost readings sent {min(offsets):+.0f} … {max(offsets):+.0f} ms from the start of the nearest fault"
                f" ({before} before it, {len(offsets) - before} after)")
    first, last = (time.strftime("%H:%M:%S", time.gmtime(t / 1e9)) for t in (stamps[0], stamps[-1]))
    return f"lost readings sent between {first} and {last} UTC"


# Packets the gateway's notify-socket poller reads from one socket per turn
# (`NotifySocketPoller.packetsPerTurn`): each is handed on at once, and the outbox thread commits
# whatever gathered in its next transaction (group commit).
POLLER_TURN = 64


def judge_kill_losses(rows, kills, window_ns=KILL_WINDOW_NS, turn=POLLER_TURN):
    """Splits the gateway's lost readings into those within the SIGKILL bound (see the module's
    docstring) and the rest; returns (within, outside, [ms before the kill of each within by time],
    [ms before the kill of each reading outside: the uncommitted tail of a kill, read by the gateway,
    sent earlier than the window and not excused as a poller turn], [ms before the kill of each
    reading never handed to the gateway], how many of those the simulator dropped at a full socket,
    [ms before the kill of each read reading excused as the last poller turn of a device still
    behind])."""
    within, outside, before, late, unread, dropped, turns = 0, 0, [], [], [], [], []
    read_tail = {}  # (kill index, device) → [ms before the kill of each tail reading the gateway had read]
    for row in rows:
        delivered = row.get("delivered", set())
        for sequence in row["lost_sequences"]:
            sent = send_time(row, sequence)
            # The first kill after the send (kills are in time order): the one whose tail it can be;
            # or the kill whose held sockets took it (sent just after the reap, before they were
            # read out and closed: the simulator had not yet seen the hang-up).
            kill = None if sent is None else next(
                (k for k in kills if sent <= k.reaped or (row["device"], sequence) in k.unread), None)
            tail_of = kill if kill is not None and (row["device"], sequence) not in kill.committed and not any(
                later > sequence and sent_before(row, later, kill.reaped) for later in delivered) else None
            if tail_of is not None and sequence >= tail_of.oldest_unread(row["device"]):
                # Never handed to the gateway: still in its notify socket, or (not in the socket but
                # newer than a reading still there, which a FIFO socket would have given first)
                # dropped by the simulator at a full socket, as bluetoothd drops them.
                within += 1
                unread.append((tail_of.signalled - sent) / 1e6)
                if (row["device"], sequence) not in tail_of.unread:
                    dropped.append(sequence)
            elif tail_of is not None:
                read_tail.setdefault((kills.index(tail_of), row["device"]), []).append((tail_of.signalled - sent) / 1e6)
            else:
                outside += 1
    for (index, device), ages in read_tail.items():
        behind = kills[index].oldest_unread(device) != float("inf")
        for age in ages:
            if age <= window_ns / 1e6:
                within += 1
                before.append(age)
            elif behind and len(ages) <= turn:
                # The poller was behind on this device (readings still unread in its socket): what
                # it had read and not yet committed is its last turn, read just now however long
                # ago it was sent, so the send time says nothing about how long the gateway held it.
                within += 1
                turns.append(age)
            else:
                outside += 1
                late.append(age)
    return within, outside, before, late, unread, len(dropped), turns


def commit_lags(rows, kill):
    """Per device: how long before `kill`'s signal the reading after its newest committed one was
    sent (ms; the gateway's commit lag then), for devices that had sent one by then. Committed
    before the kill: in the outbox right after it, or delivered and sent before the process was
    gone (durable mode publishes only what it committed; the kill ends the sockets)."""
    lags = []
    for row in rows:
        committed = [s for d, s in kill.committed if d == row["device"]]
        committed += [s for s in row.get("delivered", set()) if sent_before(row, s, kill.reaped)]
        oldest = (max(committed) if committed else 0) + 1
        sent = send_time(row, oldest)
        if sent is not None and sent <= kill.signalled:
            lags.append((kill.signalled - sent) / 1e6)
    return lags


def send_time(row, sequence):
    """The simulator's send time (ns) of a sequence of the device of `row`, None when not kept."""
    first, times = row.get("send_times", (0, []))
    return times[sequence - first] if first and first <= sequence < first + len(times) else None


def sent_before(row, sequence, instant):
    """Whether the device of `row` sent `sequence` at or before `instant` (exact send times only)."""
    sent = send_time(row, sequence)
    return sent is not None and sent <= instant


def lost_near(rows, windows, margin_ns=2_000_000_000):
    count = 0
    for row in rows:
        for stamp in row["lost_times"]:
            if any(start - margin_ns <= stamp <= end + margin_ns for start, end in windows):
                count += 1
    return count


def per_device(rows):
    """Devices with anything lost, duplicated or reordered, or 'none'."""
    bad = [f"{r['device']}: {r['lost']}/{r['duplicated']}/{r['reordered']}" for r in rows
           if r["lost"] or r["duplicated"] or r["reordered"]]
    return "; ".join(bad) if bad else "none"


def main():
    binary = sys.argv[1]
    names = sys.argv[2:] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit(f"unknown case(s) {unknown}; cases: {', '.join(CASES)}")
    results = [run_case(binary, name) for name in names]
    lines = [
        "| case | sent | lost by the gateway | of which within the SIGKILL bound | of which at a fault (±2 s) |"
        " lost by the broker after its PUBACK |"
        " duplicated | reordered | devices lost/dup/reordered | integrity_check | SIGTERM at the end | notes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        sigterm = "hung (killed after 30 s)" if r["sigterm"] is None else f"exit {r['sigterm']}, {r['sigterm_seconds']:.1f} s"
        notes = "; ".join(r["notes"]) + (("; ERROR " + r["error"]) if "error" in r else "")
        lines.append(f"| {r['name']} | {r['sent']:,} | {r['lost']} | {r['bounded']} | {r['at_fault']} |"
                     f" {r.get('broker_lost')} |"
                     f" {r['duplicated']} |"
                     f" {r['reordered']} | {per_device(r['rows'])} | {r['integrity']} | {sigterm} |"
                     f" {notes.replace('|', '/')} |")
    table = "\n".join(lines)
    print(table)
    path = os.environ.get("FAULTS_RESULTS")
    if path:
        with open(path, "w") as f:
            f.write(table + "\n")
    failed = [r["name"] for r in results
              if "error" in r or r["unbounded"] or r["integrity"] != "ok" or r["sigterm"] != 0]
    if failed:
        print("faults: FAILED (readings lost outside the SIGKILL bound, integrity, a hang or an error): "
              + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
