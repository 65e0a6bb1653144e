"""`make soak`: a compressed 24-hour soak (issue 19). One gateway runs for SOAK_MINUTES (20) of real
time while a day of events, sped up 72× (one simulated hour every 50 s), happens around it:
readings streaming from the simulator's load devices, devices leaving range and coming back,
links dropped by the peer (reconnects), broker restarts, a bluetoothd restart, adapter power
cycles and command traffic. Before the day, every kind of event runs SOAK_PRIME times (4; see
`Soak.prime`). Every SOAK_SAMPLE seconds (60), at a moment when every device is in
range and notifying (at most half a period late), it samples the gateway's RSS (and its
anonymous and file-backed parts), open fds, threads, outbox depth (rows) and outbox size on disk
(database + WAL); after SOAK_WARMUP minutes (5) it fits a line to each and reports the slope per
hour relative to the mean (goal: under 1 %/h). Lost readings are attributed to the nearest event
(of their own device, or of every device) within 2 s of their send time. Writes SOAK_OUTPUT
(.build/soak) samples.tsv, results.md, lost.tsv, duplicates.tsv, events.tsv and soak.png (gnuplot).

    soak.py BINARY
"""

import os
import random
import signal
import subprocess
import sys
import time

import harness
from harness import log, wait_until

MINUTES = float(os.environ.get("SOAK_MINUTES", "20"))
SAMPLE = float(os.environ.get("SOAK_SAMPLE", "60"))
WARMUP = float(os.environ.get("SOAK_WARMUP", "5"))
PRIME = int(os.environ.get("SOAK_PRIME", "4"))
DEVICES = int(os.environ.get("SOAK_DEVICES", "20"))
RATE = float(os.environ.get("SOAK_RATE", "5"))
OUTPUT = os.environ.get("SOAK_OUTPUT", os.path.join(os.path.dirname(__file__), "../../.build/soak"))
SPEED = 72  # a simulated day in 20 real minutes

# Events of one simulated day, each as "every N simulated minutes" (sped up SPEED times).
EVENTS = {
    "device out of range for 10 simulated minutes": 30,
    "link dropped by the peer": 10,
    "broker restarted (SIGTERM)": 90,
    "broker killed (SIGKILL)": 240,
    "bluetoothd restarted": 360,
    "adapter power-cycled": 480,
    "command (set with an unknown field, a bridge devices request)": 1,
}


def address(index):
    return "C0:FF:EE:10:%02X:%02X" % (index >> 8, index & 0xFF)


class Soak:
    def __init__(self, binary):
        self.world = harness.World(binary, "soak", DEVICES, RATE)
        # The heap in use (mallinfo2, through a preloaded probe): shown beside RssAnon, to tell
        # live memory from what the allocator keeps.
        self.probe = harness.HeapProbe(self.world.work)
        self.world.gateway_env.update(self.probe.env())
        self.random = random.Random(19)
        self.counts = {name: 0 for name in EVENTS}
        self.away = {}  # device index → real time it comes back
        self.samples = []
        self.log = []  # (clock ns, event name, device index or None), to attribute lost readings

    def event(self, name):
        w = self.world
        self.counts[name] += 1
        stamp = time.time_ns()
        device = None  # the device an event touches; None: every device
        if name.startswith("device out of range"):
            device = self.random.randrange(DEVICES)
            if device not in self.away:
                w.simulator_call("SetDeviceInRange", "sb", address(device), "false")
                self.away[device] = time.monotonic() + 10 * 60 / SPEED
        elif name == "link dropped by the peer":
            device = self.random.randrange(DEVICES)
            w.simulator_call("DisconnectDevice", "s", address(device))
        elif name.startswith("broker restarted"):
            w.kill_broker(signal.SIGTERM)
            time.sleep(2)
            w.start_broker()
        elif name.startswith("broker killed"):
            w.kill_broker(signal.SIGKILL)
            time.sleep(2)
            w.start_broker()
        elif name == "bluetoothd restarted":
            w.simulator_call("RestartBluez")
        elif name == "adapter power-cycled":
            w.simulator_call("SetPowered", "b", "false")
            time.sleep(1)
            w.simulator_call("SetPowered", "b", "true")
        else:
            target = self.random.randrange(DEVICES)
            self.commands.publish("blebridge/load-%04d/set" % target, '{"no_such_field":1}', qos=1)
            self.commands.publish("blebridge/bridge/request/devices", "{}", qos=1)
            return  # every 0.8 s: it would be the nearest event to anything
        self.log.append((stamp, name, device))

    def prime(self):
        """Before the day starts: every kind of event PRIME times (the commands once), each after
        every device notifies again. The first runs of a path raise the heap to its high-water
        mark (glibc keeps what a path's first runs needed: `Tests/Faults/run.sh eventmem` measured
        steps of 20-220 kB for the first few bluetoothd restarts, power cycles and link drops,
        shrinking to 0-30 kB, and heaptrack no object kept per restart), and in the compressed day
        the rarest kinds run only 3 or 4 times in all (a power cycle at minutes 6.7, 13.3 and 20),
        so without this the slope after the warm-up measured those paths' first runs, not a leak.
        A leak still shows: every kind keeps running at its daily rate in the judged window."""
        w = self.world
        for name in EVENTS:
            for _ in range(1 if name.startswith("command") else PRIME):
                self.event(name)
                if name.startswith("device out of range"):
                    for index in list(self.away):
                        w.simulator_call("SetDeviceInRange", "sb", address(index), "true")
                        del self.away[index]
                try:
                    wait_until(w.all_notifying, 120, "every device notifying after " + name)
                except TimeoutError as error:
                    log(error)
        self.counts = {name: 0 for name in EVENTS}
        log("primed", PRIME, "× every event kind")

    def sample(self, started):
        w = self.world
        figures = harness.process_figures(w.gateway.pid)
        figures["minute"] = (time.monotonic() - started) / 60
        figures["outbox_rows"] = harness.outbox_rows(w.outbox) or 0
        figures["outbox_bytes"] = harness.file_size(w.outbox)
        figures["received"] = w.subscriber.received()
        figures.update(self.probe.figures())
        self.samples.append(figures)
        log("sample", " ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))

    def run(self):
        w = self.world
        w.start()
        self.commands = harness.mqtt.Client(harness.mqtt.CallbackAPIVersion.VERSION2, client_id="soak-commands")
        self.commands.connect("127.0.0.1", w.broker_port)
        self.commands.loop_start()
        self.prime()
        started = time.monotonic()
        due = {name: started + every * 60 / SPEED for name, every in EVENTS.items()}
        next_sample = started
        end = started + MINUTES * 60
        while (now := time.monotonic()) < end:
            # Sampled in the same state each time: no device away and every one notifying (each
            # notify socket is an fd, so a sample during a reconnect counts fewer), at most
            # SAMPLE / 2 late; after that, whatever the state.
            if now >= next_sample and (now >= next_sample + SAMPLE / 2 or (not self.away and w.all_notifying())):
                self.sample(started)
                while next_sample <= now:  # a late sample is not followed by a second at once
                    next_sample += SAMPLE
            for index, back in list(self.away.items()):
                if now >= back:
                    w.simulator_call("SetDeviceInRange", "sb", address(index), "true")
                    self.log.append((time.time_ns(), "device back in range", index))
                    del self.away[index]
            for name, every in EVENTS.items():
                if now >= due[name]:
                    self.event(name)
                    due[name] += every * 60 / SPEED
            time.sleep(0.05)
        self.sample(started)
        for index in list(self.away):
            w.simulator_call("SetDeviceInRange", "sb", address(index), "true")
        self.commands.loop_stop()
        try:
            wait_until(w.all_notifying, 120, "every device back")
        except TimeoutError as error:
            log(error)
        return w.finish(drain_seconds=180)


def robust_slope_per_hour(points):
    """Theil-Sen slope of (minute, value) in units per hour (the median of the slopes between every
    two points), and relative to the mean. The resident memory dips for 15-20 s after each time
    the gateway gives its free heap pages back after a burst (`FreeMemorySchedule`; about 190 kB
    of 4.4 MB, refilled by the steady traffic): a least-squares line through 16 samples leans by
    more than 1 %/h when one of them falls in such a dip at either end of the window (+1.10 and
    +5.04 %/h in two flat soaks of 2026-12-05, one dip each at minute 5). A leak, or a step in
    mid-window, moves the slopes of most pairs, so the median sees it (`test_soak_judge.py`); a
    single step among the first or last few samples does not (docs/testing.md, "After a burst,
    again")."""
    pairs = [(y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for x2, y2 in points[i + 1:] if x2 != x1]
    if not pairs:
        return 0.0, 0.0
    pairs.sort()
    middle = len(pairs) // 2
    slope = (pairs[middle] if len(pairs) % 2 else (pairs[middle - 1] + pairs[middle]) / 2) * 60
    mean_y = sum(y for _, y in points) / len(points)
    return slope, (slope / mean_y * 100 if mean_y else 0.0)


def memory_is_flat(points):
    """The Theil-Sen slope of a memory figure (`robust_slope_per_hour`) and whether it meets the
    goal: under 1 %/h. Only growth fails: memory that falls after the warm-up is given back, not
    leaked, and it cannot fall for long. Judged both ways until 2026-12-05, a flat soak failed at
    -1.80 %/h (RssAnon 4,472-4,548 kB from minute 5 to 15, then three of the last five samples
    taken just after a release, 4,316-4,364 kB: the median of the pairs' slopes leaned down)."""
    slope, relative = robust_slope_per_hour(points)
    return slope, relative, relative < 1


def slope_per_hour(points):
    """Least-squares slope of (minute, value) in units per hour, and relative to the mean."""
    n = len(points)
    if n < 2:
        return 0.0, 0.0
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx * 60 if sxx else 0.0
    return slope, (slope / mean_y * 100 if mean_y else 0.0)


def main():
    binary = sys.argv[1]
    os.makedirs(OUTPUT, exist_ok=True)
    soak = Soak(binary)
    try:
        result = soak.run()
    finally:
        soak.world.close(keep=os.environ.get("SOAK_KEEP") == "1")
    keys = ["rss_kb", "anon_kb", "file_kb", "fds", "threads", "outbox_rows", "outbox_bytes", "pool_threads"]
    if soak.samples and all("heap_in_use" in sample for sample in soak.samples):
        keys += ["heap_in_use", "heap_top"]
    with open(os.path.join(OUTPUT, "samples.tsv"), "w") as f:
        f.write("minute\t" + "\t".join(keys) + "\n")
        for s in soak.samples:
            f.write(f"{s['minute']:.2f}\t" + "\t".join(str(s[k]) for k in keys) + "\n")
    after = [s for s in soak.samples if s["minute"] >= WARMUP]
    lines = [f"| figure | at {WARMUP:g} min | at the end | mean after warm-up | slope per hour | relative (goal < 1 %/h; memory: growth only) |",
             "|---|---|---|---|---|---|"]
    flat = True
    for key in keys:
        points = [(s["minute"], s[key]) for s in after]
        # Open fds are a count that moves by several with the state of the moment (the broker
        # connection down for 2 s every 1.25 minutes, a device reconnecting), so a line through
        # single samples gave ±10 fds/h either way (−5 to −19 in the runs so far) and failed every
        # soak. A leak of fds raises the highest count: fds are judged by the upper envelope.
        if key == "fds":
            slope, relative = envelope_per_hour(points)
        elif key in ("rss_kb", "anon_kb"):
            # The memory dips for a moment after each release of free heap pages: a robust slope,
            # and only growth fails (`memory_is_flat`).
            slope, relative, memory_flat = memory_is_flat(points)
        else:
            slope, relative = slope_per_hour(points)
        mean = sum(y for _, y in points) / len(points) if points else 0
        # Depth and size hover near a floor with the broker up, so a slope relative to their small
        # mean says nothing (one sample of 12 rows among 1–8 reads as hundreds of %/h): they are
        # judged absolutely (`depth_is_flat`, `size_is_flat`). file_kb (code paged in as paths run
        # the first time) is shown, and judged within rss_kb.
        # heap_in_use is shown, not judged: it counts the readings and D-Bus replies in flight
        # at the sample's moment (−130 to +40 kB around 1.5 MB in the runs of 2026-12-04, dips
        # when the broker is away), more than 1 %/h allows over a 15-minute window; a leak is
        # looked for with `run.sh eventmem` and heaptrack (docs/testing.md, "The threads' caches").
        if key in ("rss_kb", "anon_kb"):
            judged = memory_flat
        elif key in ("fds", "threads"):
            # Both ways: a count that falls can be a connection or a thread that went for good.
            judged = abs(relative) < 1
        elif key == "outbox_rows":
            judged = depth_is_flat(points, DEVICES * RATE)
        elif key == "outbox_bytes":
            judged = size_is_flat(points)
        else:
            judged = True
        flat &= judged
        label = {"fds": "fds (upper envelope)", "rss_kb": "rss_kb (Theil-Sen)", "anon_kb": "anon_kb (Theil-Sen)"}.get(key, key)
        lines.append(f"| {label} | {after[0][key] if after else '-'} | {soak.samples[-1][key]} | {mean:,.1f} |"
                     f" {slope:+,.2f} | {relative:+.2f} %{'' if judged else ' **FAILED**'} |")
    events = ", ".join(f"{name}: {count}" for name, count in soak.counts.items())
    attributed = attribute(result["rows"], soak.log, OUTPUT)
    duplicates = attribute_duplicates(result["rows"], soak.log, OUTPUT)
    summary = (f"{MINUTES:g} min, {DEVICES} devices × {RATE:g}/s; readings sent {result['sent']:,},"
               f" lost by the gateway {result['lost']}, lost by the broker after its PUBACK {result['broker_lost']},"
               f" duplicated {result['duplicated']}, reordered {result['reordered']}; integrity_check {result['integrity']};"
               f" SIGTERM exit {result['sigterm']} in {result['sigterm_seconds']:.1f} s. Events: {events}."
               f" Lost readings (gateway; broker) by the nearest event within 2 s of their send time: {attributed}."
               f" Duplicated readings by who made them and the nearest event within 2 s of their send time: {duplicates}.")
    table = "\n".join(lines) + "\n\n" + summary + "\n"
    with open(os.path.join(OUTPUT, "results.md"), "w") as f:
        f.write(table)
    print(table)
    plot(os.path.join(OUTPUT, "samples.tsv"), os.path.join(OUTPUT, "soak.png"))
    if not flat or result["lost"] or result["integrity"] != "ok" or result["sigterm"] != 0:
        print("soak: FAILED (a figure grows, readings lost, integrity or shutdown)")
        sys.exit(1)


def depth_is_flat(points, bound):
    """Outbox rows after the warm-up, sampled with every device in range and the broker up: each
    sample holds at most `bound` rows (one second of the soak's readings, still awaiting their
    PUBACK), and the later half's highest is no higher than the earlier half's plus that bound. Rows
    the gateway never deletes (a leak) pass both within seconds at 100 readings/s."""
    if not points:
        return True
    values = [y for _, y in points]
    early, late = values[: max(1, len(values) // 2)], values[len(values) // 2:]
    return max(values) <= bound and max(late) <= max(early) + bound


SIZE_TOLERANCE = 16 * 4096  # 16 pages: the WAL's frame or two of a checkpoint's moment


def size_is_flat(points, tolerance=SIZE_TOLERANCE):
    """Outbox size on disk (database + WAL) after the warm-up: the later half's largest is at most
    `tolerance` bytes above the earlier half's largest (SQLite reuses freed pages; a file that grows
    with the readings streamed adds megabytes in the judged 15 minutes)."""
    if len(points) < 2:
        return True
    values = [y for _, y in points]
    early, late = values[: len(values) // 2], values[len(values) // 2:]
    return max(late) <= max(early) + tolerance


def envelope_per_hour(points):
    """Growth of the upper envelope of (minute, value): the highest value of the later half of the
    points less the highest of the earlier half, per hour between the halves' middle minutes; and
    relative to the mean."""
    n = len(points)
    if n < 4:
        return 0.0, 0.0
    early, late = points[: n // 2], points[n // 2:]
    hours = (sum(x for x, _ in late) / len(late) - sum(x for x, _ in early) / len(early)) / 60
    mean_y = sum(y for _, y in points) / n
    slope = (max(y for _, y in late) - max(y for _, y in early)) / hours if hours else 0.0
    return slope, (slope / mean_y * 100 if mean_y else 0.0)


def nearest_event(stamp, device, log, margin_ns):
    """The kind of the logged event nearest to `stamp` within margin_ns ("none" without one): an
    event of one device (range, link drop) only for that device's readings."""
    near = [(abs(stamp - at), name) for at, name, touched in log
            if abs(stamp - at) <= margin_ns and touched in (None, device)]
    return min(near)[1] if near else "none"


def tally(items, log, margin_ns):
    """(device, sequence, send time, label) items counted by (nearest event, label), and their tsv lines."""
    counts = {}
    lines = []
    for device, sequence, stamp, label in items:
        kind = nearest_event(stamp, device, log, margin_ns)
        counts[(kind, label)] = counts.get((kind, label), 0) + 1
        lines.append(f"{device}\t{sequence}\t{stamp}\t{kind}\t{label}\n")
    return counts, lines


def attribute(rows, log, output=None, margin_ns=2_000_000_000):
    """Lost readings counted by the kind of the nearest event (within margin_ns) to their send time:
    an event of one device (range, link drop) only for that device's readings. With output, writes
    lost.tsv (device, sequence, send time, nearest event) and events.tsv."""
    items = []
    for row in rows:
        items += [(row["device"], s, t, "gateway") for s, t in zip(row["lost_sequences"], row["lost_times"])]
        items += [(row["device"], s, t, "broker")
                  for s, t in zip(row["broker_lost_sequences"], row["broker_lost_times"])]
    counts, lines = tally(items, log, margin_ns)
    if output:
        with open(os.path.join(output, "lost.tsv"), "w") as f:
            f.write("device\tsequence\tsend_ns\tnearest_event\tlost_by\n" + "".join(lines))
        with open(os.path.join(output, "events.tsv"), "w") as f:
            f.write("ns\tevent\tdevice\n" + "".join(f"{at}\t{name}\t{device}\n" for at, name, device in log))
    kinds = sorted({kind for kind, _ in counts})
    return ", ".join(f"{kind}: {counts.get((kind, 'gateway'), 0)}; {counts.get((kind, 'broker'), 0)}"
                     for kind in kinds) or "none lost"


def attribute_duplicates(rows, log, output=None, margin_ns=2_000_000_000):
    """Duplicated readings counted by who made them (`harness.duplicate_source`) and the kind of the
    nearest event (within margin_ns) to their send time; with output, writes duplicates.tsv."""
    items = [(row["device"], s, t, source) for row in rows for s, t, source in row.get("duplicates", [])]
    counts, lines = tally(items, log, margin_ns)
    if output:
        with open(os.path.join(output, "duplicates.tsv"), "w") as f:
            f.write("device\tsequence\tsend_ns\tnearest_event\tmade_by\n" + "".join(lines))
    return ", ".join(f"{source} at {kind}: {count}"
                     for (kind, source), count in sorted(counts.items(), key=lambda e: (e[0][1], e[0][0]))) or "none"


def plot(samples, png):
    with open(samples) as f:
        probed = "heap_in_use" in f.readline()
    heap = (f'''set title "heap in use (MiB, mallinfo2; squares: free at the heap's top)"; plot "{samples}" using 1:($10/1048576) with linespoints, "" using 1:($11/1048576) with linespoints pt 4
''' if probed else "")
    script = f"""set terminal pngcairo size 1000,900 font ",10"
set output "{png}"
set multiplot layout 4,2 title "blebridge compressed 24-hour soak (one simulated hour = 50 s)"
set xlabel "minute"
set key off
set title "RSS (MiB)"; plot "{samples}" using 1:($2/1024) with linespoints
set title "RSS, anonymous: heap and stacks (MiB)"; plot "{samples}" using 1:($3/1024) with linespoints
set title "RSS, file-backed: code and libraries (MiB)"; plot "{samples}" using 1:($4/1024) with linespoints
set title "open fds"; plot "{samples}" using 1:5 with linespoints
set title "threads (squares: global executor workers, blebridge.pool or default-qos)"; plot "{samples}" using 1:6 with linespoints, "" using 1:9 with linespoints pt 4
set title "outbox depth (rows)"; plot "{samples}" using 1:7 with linespoints
set title "outbox size (KiB, db + WAL)"; plot "{samples}" using 1:($8/1024) with linespoints
{heap}unset multiplot
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
