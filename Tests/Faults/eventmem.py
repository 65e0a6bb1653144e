"""`Tests/Faults/run.sh eventmem`: the gateway's memory per soak event (issue 19). The soak mixes a
day of events and sees its anonymous memory rise in steps; this repeats one kind of event at a
time, EVENTMEM_REPEATS (10) times each, against one gateway with the soak's load (20 devices at
5 readings/s), and after each (once every device notifies again, plus a second) samples `RssAnon`,
the main malloc arena (`[heap]` in smaps) and the threads by name. A kind that leaks grows by the
same amount each time (a slope in kB per event); a high-water mark grows on the first few and
then stops. Prints one table row per kind (first, last, least-squares slope over the second half)
and the threads that appeared.

    eventmem.py BINARY [KIND …]   kinds: idle, link, broker, bluetoothd, power, commands,
    cluster (a broker SIGTERM, a broker SIGKILL and a bluetoothd restart, as at the soak's minute 10)
"""

import os
import signal
import subprocess
import sys
import time

import harness
from harness import log, wait_until

REPEATS = int(os.environ.get("EVENTMEM_REPEATS", "10"))
DEVICES = int(os.environ.get("EVENTMEM_DEVICES", "20"))
RATE = float(os.environ.get("EVENTMEM_RATE", "5"))


def heap_kb(pid):
    """Rss of the `[heap]` mapping (glibc's main arena; with one arena, all of malloc's small blocks)."""
    inside = False
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            if not line[0].isupper() or line.split(":")[0] in ("VmFlags",):
                fields = line.split()
                if len(fields) >= 5 and "-" in fields[0]:
                    inside = fields[-1] == "[heap]"
                continue
            if inside and line.startswith("Rss:"):
                return int(line.split()[1])
    return 0


def allocator_figures(pid):
    """With EVENTMEM_GDB=1: glibc's `mallinfo2()` (arena: the main arena's size, in use, free) and
    SQLite's `sqlite3_memory_used()` (its page caches and statements: the outbox), through gdb (a
    stop of well under a second per sample, after the symbols are read). Bytes; {} without gdb."""
    if os.environ.get("EVENTMEM_GDB") != "1":
        return {}
    result = subprocess.run(
        ["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "set confirm off",
         "-ex", "p (long long) sqlite3_memory_used()",
         "-ex", "p mallinfo2()"], capture_output=True, text=True, timeout=120)
    figures = {}
    for line in result.stdout.splitlines():
        if line.startswith("$1 = "):
            figures["sqlite"] = int(line.split("=")[1])
        if line.startswith("$2 = "):
            for part in line[line.index("{") + 1:line.rindex("}")].split(","):
                key, value = part.split("=")
                figures[key.strip()] = int(value)
    return figures


def thread_names(pid):
    names = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        names[name] = names.get(name, 0) + 1
    return names


def slope(values):
    n = len(values)
    if n < 2:
        return 0.0
    mean_x = (n - 1) / 2
    mean_y = sum(values) / n
    sxx = sum((x - mean_x) ** 2 for x in range(n))
    return sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values)) / sxx


def main():
    binary = sys.argv[1]
    kinds = sys.argv[2:] or ["idle", "link", "broker", "bluetoothd", "power", "commands"]
    world = harness.World(binary, "eventmem", DEVICES, RATE)
    probe = harness.HeapProbe(world.work)  # mallinfo2 without stopping the gateway, as gdb does
    world.gateway_env.update(probe.env())
    rows = []
    try:
        world.start()
        pid = world.gateway.pid
        commands = harness.mqtt.Client(harness.mqtt.CallbackAPIVersion.VERSION2, client_id="eventmem-commands")
        commands.connect("127.0.0.1", world.broker_port)
        commands.loop_start()
        time.sleep(30)  # the first readings' paths run once
        first_threads = thread_names(pid)
        log("threads at start", first_threads)

        def settle():
            try:
                wait_until(world.all_notifying, 60, "every device notifying")
            except TimeoutError as error:
                log(error)
            time.sleep(1)

        def event(kind, index):
            if kind == "idle":
                time.sleep(10)
            elif kind == "link":
                world.simulator_call("DisconnectDevice", "s", "C0:FF:EE:10:00:%02X" % (index % DEVICES))
                time.sleep(1)
            elif kind == "broker":
                world.kill_broker(signal.SIGTERM)
                time.sleep(2)
                world.start_broker()
                time.sleep(3)
            elif kind == "bluetoothd":
                world.simulator_call("RestartBluez")
                time.sleep(2)
            elif kind == "cluster":  # the soak's minute-10 marks: broker SIGTERM, SIGKILL, bluetoothd restart
                for stop in (signal.SIGTERM, signal.SIGKILL):
                    world.kill_broker(stop)
                    time.sleep(2)
                    world.start_broker()
                world.simulator_call("RestartBluez")
                time.sleep(2)
            elif kind == "power":
                world.simulator_call("SetPowered", "b", "false")
                time.sleep(1)
                world.simulator_call("SetPowered", "b", "true")
                time.sleep(2)
            elif kind == "commands":
                for target in range(100):
                    commands.publish("blebridge/load-%04d/set" % (target % DEVICES), '{"no_such_field":1}', qos=1)
                    commands.publish("blebridge/bridge/request/devices", "{}", qos=1)
                time.sleep(3)
            settle()

        for kind in kinds:
            settle()
            anon, heap = [], []
            for index in range(REPEATS + 1):
                if index:
                    event(kind, index)
                figures = harness.process_figures(pid)
                anon.append(figures["anon_kb"])
                heap.append(heap_kb(pid))
                allocator = allocator_figures(pid)
                probed = probe.figures()
                if probed and not allocator:
                    allocator = {"arena": probed["heap_arena"], "uordblks": probed["heap_in_use"],
                                 "fordblks": probed["heap_free"]}
                log(kind, index, "anon", anon[-1], "heap", heap[-1], "threads", figures["threads"],
                    "sqlite", allocator.get("sqlite"), "arena", allocator.get("arena"),
                    "in use", allocator.get("uordblks"), "free", allocator.get("fordblks"))
            log(kind, "threads by name", thread_names(pid))
            half = anon[len(anon) // 2:]
            rows.append((kind, anon[0], anon[-1], slope(anon), slope(half), heap[0], heap[-1], slope(heap[len(heap) // 2:])))
        last_threads = thread_names(pid)
        appeared = {k: v - first_threads.get(k, 0) for k, v in last_threads.items() if v != first_threads.get(k, 0)}
        commands.loop_stop()
    finally:
        world.close(keep=os.environ.get("EVENTMEM_KEEP") == "1")
    print(f"| kind ({REPEATS} each) | RssAnon first (kB) | last | kB per event | kB per event, 2nd half |"
          " [heap] first | last | kB per event, 2nd half |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, a0, a1, s, s2, h0, h1, hs2 in rows:
        print(f"| {kind} | {a0:,} | {a1:,} | {s:+.1f} | {s2:+.1f} | {h0:,} | {h1:,} | {hs2:+.1f} |")
    print("threads at start:", first_threads, "changed by the end:", appeared)


if __name__ == "__main__":
    main()
