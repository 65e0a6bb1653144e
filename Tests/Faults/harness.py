"""Shared parts of the fault campaign (campaign.py) and the soak (soak.py).

Real parts only: a private dbus-daemon, the BlueZ simulator (`blebridge simulate`) in load mode,
mosquitto on a free loopback port (persistence on, so a subscriber's session survives a broker
restart), the real `blebridge run` binary and a paho-mqtt subscriber with a persistent session.
Load-mode values carry (device index, sequence number, send time); the subscriber records every
sequence per device, and the simulator's `GetLoadStatistics` gives the last sequence each device
sent, so lost, duplicated and reordered readings are counted per device.
"""

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time

import paho.mqtt.client as mqtt

import ackproxy

LOAD_CHARACTERISTIC = "6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
SIMULATOR = ["io.blebridge.Simulator", "/io/blebridge/Simulator", "io.blebridge.Simulator1"]


def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, seconds, what):
    """Waits for an external process's state (no other signal exists for it); raises on timeout."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {seconds} s")
        time.sleep(0.05)


def process_figures(pid):
    """RSS (kB) with its anonymous part (heap, stacks: what a leak grows) and its file-backed part
    (code and libraries paged in as paths run for the first time), open fds and threads, from /proc."""
    figures = {"rss_kb": 0, "anon_kb": 0, "file_kb": 0, "threads": 0}
    names = {"VmRSS:": "rss_kb", "RssAnon:": "anon_kb", "RssFile:": "file_kb", "Threads:": "threads"}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key = names.get(line.split(maxsplit=1)[0] if line.strip() else "")
            if key:
                figures[key] = int(line.split()[1])
    figures["threads"] -= probe_threads(pid)  # a test instrument's, not the gateway's
    figures["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    figures["pool_threads"] = pool_threads(pid)
    return figures


class HeapProbe:
    """The heap in use of a gateway started with `env()` (Tests/Faults/heapprobe.c, preloaded): what
    a leak grows, whatever the allocator keeps resident. `figures()` asks the probe's thread through
    a FIFO and waits for its answer line; {} when the probe is not built or did not answer."""

    LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../.build/faults/heapprobe.so")

    def __init__(self, work):
        self.fifo = os.path.join(work, "heapprobe.fifo")
        self.out = os.path.join(work, "heapprobe.tsv")
        self.asked = 0
        self.available = os.path.exists(self.LIBRARY)
        if self.available:
            os.mkfifo(self.fifo)

    def env(self):
        if not self.available:
            return {}
        return {"LD_PRELOAD": os.path.abspath(self.LIBRARY), "HEAPPROBE_FIFO": self.fifo, "HEAPPROBE_OUT": self.out}

    def figures(self, timeout=5):
        """Bytes: heap_in_use (mallinfo2's uordblks), heap_arena, heap_free, heap_top."""
        if not self.available:
            return {}
        fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)  # the probe holds it open for reading
        try:
            os.write(fd, b"?")
        finally:
            os.close(fd)
        self.asked += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(self.out) as f:
                    lines = f.read().splitlines()
            except FileNotFoundError:
                lines = []
            # The probe counts from 1 in each gateway process; the last line is the newest answer.
            if len(lines) >= self.asked:
                fields = [int(x) for x in lines[-1].split("\t")]
                return dict(zip(("heap_in_use", "heap_arena", "heap_free", "heap_top"), fields[1:]))
            time.sleep(0.01)
        return {}


def threads_named(pid, names):
    """The process's threads whose comm is one of `names`."""
    count = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as comm:
                count += comm.read().strip() in names
        except OSError:
            pass  # the thread ended between the listing and the read
    return count


def probe_threads(pid):
    """Threads named `heapprobe` (HeapProbe's, preloaded: not the gateway's own)."""
    return threads_named(pid, ("heapprobe",))


def pool_threads(pid):
    """The threads of Swift's global concurrent executor: the gateway's own fixed pool
    (`blebridge.pool`, TaskPool), and libdispatch's workers for the default-priority root queue
    (comm `oot.default-qos`, the tail of `com.apple.root.default-qos`), which ran it before and
    now run only a signal source's handler; libdispatch alone decides how many of those there are
    (docs/testing.md, "The ninth thread")."""
    return threads_named(pid, ("oot.default-qos", "blebridge.pool"))


class Subscriber:
    """Records load values per device: every sequence number received, in arrival order."""

    def __init__(self, port, client_id):
        self.lock = threading.Lock()
        self.sequences = {}  # device index → [sequence, …] in arrival order
        self.other = 0
        self.health = None  # the last bridge/health payload
        self.commands_seen = []  # (arrival ns, the health payload's `commands`), one per health message
        self.responses = 0
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False)
        self.client.max_inflight_messages_set(0)
        self.client.max_queued_messages_set(0)
        self.client.reconnect_delay_set(min_delay=0.1, max_delay=0.5)
        self.client.on_message = self.on_message
        self.subscribed = threading.Event()
        self.client.on_connect = lambda client, *_: client.subscribe("blebridge/#", qos=1)
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        # A long keep-alive: a frozen broker must not make the measuring client drop its session.
        self.client.connect("127.0.0.1", port, keepalive=600)
        self.client.loop_start()
        if not self.subscribed.wait(20):
            raise TimeoutError("subscriber: no SUBACK in 20 s")

    def on_message(self, client, userdata, message):
        topic = message.topic
        if topic == "blebridge/bridge/health":
            try:
                self.health = json.loads(message.payload)
            except ValueError:
                return
            if isinstance(self.health, dict) and isinstance(self.health.get("commands"), int):
                with self.lock:
                    self.commands_seen.append((time.time_ns(), self.health["commands"]))
            return
        if topic.startswith("blebridge/bridge/response/"):
            with self.lock:
                self.responses += 1
            return
        value = extract_load_value(message.payload)
        with self.lock:
            if value is None:
                self.other += 1
            else:
                self.sequences.setdefault(value[0], []).append((value[1], value[2]))

    def commands_handled(self):
        """The gateway's `commands` counter in its latest health message (None before the first)."""
        with self.lock:
            return self.commands_seen[-1][1] if self.commands_seen else None

    def received(self):
        with self.lock:
            return sum(len(v) for v in self.sequences.values())

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


def extract_load_value(payload):
    """(device, sequence, send time ns) from a reading whose JSON carries the 20-byte value as hex."""
    try:
        document = json.loads(payload)
    except ValueError:
        return None
    candidates = list(document.values()) if isinstance(document, dict) else []
    for candidate in candidates:
        if isinstance(candidate, str) and len(candidate) == 40:
            try:
                raw = bytes.fromhex(candidate)
            except ValueError:
                continue
            return (
                int.from_bytes(raw[0:4], "little"),
                int.from_bytes(raw[4:12], "little"),
                int.from_bytes(raw[12:20], "little"),
            )
    return None


def duplicate_source(fresh, dup):
    """Who made a reading the subscriber received more than once, from how often the gateway
    published it (the proxy's count of PUBLISH packets without and with the DUP flag)."""
    if fresh >= 2:
        return "gateway published again"  # the publish window's replay of a new generation
    if dup >= 1:
        return "libmosquitto re-sent"  # an unacknowledged packet, on a new connection
    return "broker delivered again"  # one PUBLISH from the gateway, two deliveries


def count_losses(received, last_sequences, acknowledged=frozenset(), send_times=None, publish_counts=None):
    """Per device: sent (its last sequence), unique received, lost, duplicated, reordered, and the
    send times (ns) of lost sequences for attributing them to faults: exact from the simulator's
    record (`send_times`, device → (first sequence, [ns, …]), `World.load_send_times`) where it has
    them, otherwise the nearest received neighbour's (to within a period; `lost_exact` says which).
    A reading never received that the broker had acknowledged to the gateway (`acknowledged`, from
    the proxy) was lost by the broker, not by the gateway: counted apart as `broker_lost`. Each
    duplicated reading is listed with its send time and, given `publish_counts` (the proxy's), who
    made it (`duplicate_source`)."""
    rows = []
    send_times = send_times or {}

    def sent_at(device, sequence, seen, last):
        first, times = send_times.get(device, (0, []))
        if first and first <= sequence < first + len(times):
            return times[sequence - first], True
        return neighbour_time(seen, sequence, last), False

    for device, last in enumerate(last_sequences):
        arrivals = received.get(device, [])
        seen = {}
        duplicated = reordered = 0
        duplicates = []
        highest = 0
        for sequence, stamp in arrivals:
            if sequence in seen:
                duplicated += 1
                fresh, dup = (publish_counts or {}).get((device, sequence), (1, 0))
                duplicates.append((sequence, stamp, duplicate_source(fresh, dup) if publish_counts else "unknown"))
                continue
            seen[sequence] = stamp
            if sequence < highest:
                reordered += 1
            highest = max(highest, sequence)
        unreceived = [s for s in range(1, last + 1) if s not in seen]
        missing = [s for s in unreceived if (device, s) not in acknowledged]
        broker_lost = [s for s in unreceived if (device, s) in acknowledged]
        rows.append(
            {
                "device": device,
                "sent": last,
                "received": len(seen),
                "lost": len(missing),
                "broker_lost": len(broker_lost),
                "broker_lost_sequences": broker_lost,
                "broker_lost_times": [sent_at(device, s, seen, last)[0] for s in broker_lost],
                "duplicated": duplicated,
                "duplicates": duplicates,
                "reordered": reordered,
                "lost_sequences": missing,
                "lost_times": [sent_at(device, s, seen, last)[0] for s in missing],
                "send_times": send_times.get(device, (0, [])),
                "delivered": set(seen) | {s for d, s in acknowledged if d == device},
            }
        )
    return rows


def neighbour_time(seen, sequence, last):
    for distance in range(1, last + 1):
        for candidate in (sequence - distance, sequence + distance):
            if candidate in seen:
                return seen[candidate]
    return 0


def cpu_seconds(pid):
    """(CPU seconds used, seconds since it started) of process `pid`, from /proc; None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, uptime - int(fields[19]) / ticks


class HeldNotifySockets:
    """Duplicates of a process's `SOCK_SEQPACKET` sockets (the notify sockets BlueZ writes),
    taken with `pidfd_getfd` just before a SIGKILL: they keep the sockets' receive queues alive
    after the process is gone, so `drain()` then reads exactly the readings the process had not
    read: (device, sequence) of each, from the load value itself. Read at once after the reap and
    closed, so the simulator sees the hang-up a few milliseconds later than it would otherwise."""

    def __init__(self, pid):
        self.sockets = []
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return
        try:
            for name in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                        continue
                    fd = _pidfd_getfd(pidfd, int(name))
                except OSError:
                    continue
                held = socket.socket(fileno=fd)
                if held.type == socket.SOCK_SEQPACKET:
                    self.sockets.append(held)
                else:
                    held.detach()
                    os.close(fd)
        finally:
            os.close(pidfd)

    def drain(self):
        """Reads and closes the held sockets; returns {(device, sequence)} of the load values queued."""
        unread = set()
        for held in self.sockets:
            while True:
                try:
                    packet = held.recv(2048, socket.MSG_DONTWAIT)
                except OSError:
                    break
                if not packet:
                    break
                if len(packet) == 20:
                    unread.add((int.from_bytes(packet[0:4], "little"), int.from_bytes(packet[4:12], "little")))
            held.close()
        self.sockets = []
        return unread


def _pidfd_getfd(pidfd, target):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(438, pidfd, target, 0)  # SYS_pidfd_getfd (the same number on every architecture)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return fd


def integrity_check(path):
    if not os.path.exists(path):
        return "no file"
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return ";".join(row[0] for row in connection.execute("PRAGMA integrity_check"))
    finally:
        connection.close()


def outbox_rows(path):
    """Rows in the outbox table (readings not yet acknowledged), read-only beside the gateway."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return connection.execute("SELECT count(*) FROM outbox").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error:
        return None


def outbox_readings(path):
    """(device, sequence) of every load reading in the outbox (committed, not yet acknowledged),
    read-only; e.g. right after a SIGKILL, before the restart."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        values = (extract_load_value(row[0]) for row in connection.execute("SELECT payload FROM outbox"))
        return {(value[0], value[1]) for value in values if value}
    finally:
        connection.close()


def file_size(path):
    """The outbox's size on disk: the database plus its WAL."""
    return sum(os.path.getsize(p) for p in (path, path + "-wal", path + "-shm") if os.path.exists(p))


class World:
    """One case's processes: dbus-daemon, simulator, mosquitto, gateway, subscriber."""

    def __init__(self, binary, name, devices, rate, outbox_dir=None, mode="durable", gateway_env=None):
        self.binary = binary
        self.work = tempfile.mkdtemp(prefix=f"blebridge-faults-{name}-")
        self.devices = devices
        self.rate = rate
        self.mode = mode
        self.outbox_dir = outbox_dir or self.work
        self.outbox = os.path.join(self.outbox_dir, "outbox.sqlite")
        self.gateway_env = gateway_env or {}
        self.gateway = self.mosquitto = self.simulator = self.bus = self.subscriber = None
        self.port = free_port()  # the gateway's broker: the proxy in front of mosquitto
        self.broker_port = free_port()  # mosquitto itself (the subscriber and command clients)
        self.proxy = None
        self.gateway_starts = 0
        self.first_wrapper = ()
        # FAULTS_GATEWAY_CPU=0.2: the gateway (its restarts too) gets at most that share of one core
        # (a cgroup v1 CPU quota), as on a machine loaded by others, without loading anyone else.
        self.cpu_group = None
        share = float(os.environ.get("FAULTS_GATEWAY_CPU", "0") or 0)
        if share > 0:
            self.cpu_group = f"/sys/fs/cgroup/cpu/blebridge-faults-{os.getpid()}-{name}"
            os.makedirs(self.cpu_group, exist_ok=True)
            with open(os.path.join(self.cpu_group, "cpu.cfs_period_us"), "w") as f:
                f.write("100000\n")
            with open(os.path.join(self.cpu_group, "cpu.cfs_quota_us"), "w") as f:
                f.write(f"{int(share * 100000)}\n")

    # ---------------------------------------------------------------- dbus-daemon and simulator
    def start_bus(self):
        config = os.path.join(self.work, "bus.conf")
        with open(config, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={self.work}/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
<limit name="max_incoming_bytes">1000000000</limit><limit name="max_outgoing_bytes">1000000000</limit>
<limit name="max_replies_per_connection">50000</limit><limit name="max_match_rules_per_connection">50000</limit>
</busconfig>""")
        self.bus = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE, stderr=open(os.path.join(self.work, "dbus.log"), "w"), text=True)
        self.bus_address = self.bus.stdout.readline().strip()
        if not self.bus_address:
            raise RuntimeError("dbus-daemon did not start")

    def start_simulator(self):
        self.simulator = subprocess.Popen(
            [self.binary, "simulate", "--bus", self.bus_address, "--scenario", "bthome"],
            stdout=open(os.path.join(self.work, "simulator.log"), "w"), stderr=subprocess.STDOUT)
        wait_until(lambda: self.simulator_call("ListDevices") is not None, 30, "simulator control channel")

    def simulator_call(self, method, signature=None, *arguments, check=False):
        command = ["busctl", f"--address={self.bus_address}", "--json=short", "--timeout=60", "call", *SIMULATOR, method]
        if signature:
            command += [signature, *[str(a) for a in arguments]]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            if check:
                raise RuntimeError(f"{method}: {result.stderr.strip()}")
            return None
        return json.loads(result.stdout)["data"] if result.stdout.strip() else []

    def set_load(self, devices, rate):
        self.simulator_call("SetLoad", "ud", devices, rate, check=True)

    def load_send_times(self, device):
        """(first sequence, [send time ns, …]) of a load device's recent values (the simulator keeps
        at least the last 8,192 per device); (0, []) from a simulator without `GetLoadSendTimes`
        (FAULTS_BINARY of an older build), whose losses are then timed by their neighbours."""
        reply = self.simulator_call("GetLoadSendTimes", "u", device)
        return (reply[0], reply[1]) if reply else (0, [])

    def load_statistics(self):
        data = self.simulator_call("GetLoadStatistics", check=True)[0]
        return {key: value["data"] for key, value in data.items()}

    # ---------------------------------------------------------------- mosquitto
    def start_broker(self):
        persistence = os.path.join(self.work, "mosquitto") + "/"
        os.makedirs(persistence, exist_ok=True)
        config = os.path.join(self.work, "mosquitto.conf")
        with open(config, "w") as f:
            # Persistence keeps the measuring subscriber's session (and what is queued for it) across
            # a restart, so readings the gateway publishes before the subscriber is back still reach it.
            f.write(f"""listener {self.broker_port} 127.0.0.1
allow_anonymous true
max_queued_messages 0
max_inflight_messages 0
persistence true
persistence_location {persistence}
autosave_interval 1
log_dest file {self.work}/mosquitto.log
log_type error
log_type warning
""")
        self.mosquitto = subprocess.Popen(["mosquitto", "-c", config], stderr=subprocess.DEVNULL)
        wait_until(self.broker_answers, 10, "mosquitto")

    def broker_answers(self):
        try:
            socket.create_connection(("127.0.0.1", self.broker_port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def kill_broker(self, how=signal.SIGKILL):
        self.mosquitto.send_signal(how)
        self.mosquitto.wait()

    # ---------------------------------------------------------------- gateway
    def write_config(self):
        config = {
            "gateway_id": "faults",
            "bluetooth": {"adapter": "hci0", "bus": self.bus_address, "max_connections": self.devices},
            "mqtt": {"url": f"mqtt://127.0.0.1:{self.port}", "client_id": "blebridge-faults", "qos": 1,
                     "state_window": "0ms"},
            "outbox": {"path": self.outbox, "synchronous": "normal", "mode": self.mode},
            "homeassistant": {"enabled": False},
            "devices": [{
                "id": "load-%04d" % i,
                "match": {"address": "C0:FF:EE:10:%02X:%02X" % (i >> 8, i & 0xFF)},
                "connection": "keep_connected",
                "subscribe": [{"characteristic": LOAD_CHARACTERISTIC, "mode": "notify"}],
            } for i in range(self.devices)],
        }
        self.config = os.path.join(self.work, "gateway.json")
        with open(self.config, "w") as f:
            json.dump(config, f, indent=1)

    def start_gateway(self, wrapper=None, extra_env=None):
        """Starts `blebridge run`; wrapper (default: first_wrapper) is a command prefix, e.g. setpriv."""
        wrapper = self.first_wrapper if wrapper is None else wrapper
        self.gateway_starts += 1
        environment = dict(os.environ, **self.gateway_env, **(extra_env or {}))
        self.gateway_log = os.path.join(self.work, f"gateway-{self.gateway_starts}.log")
        if self.cpu_group:
            wrapper = ["sh", "-c", f'echo $$ > {self.cpu_group}/cgroup.procs && exec "$@"', "cpu-quota", *wrapper]
        self.gateway = subprocess.Popen(
            [*wrapper, self.binary, "run", "--config", self.config, "--health-interval", "1s"],
            stdout=open(self.gateway_log, "w"), stderr=subprocess.STDOUT, env=environment)

    def stop_gateway(self, how=signal.SIGTERM, timeout=30):
        """Stops the gateway; returns (exit status, seconds it took) — None status when it hung."""
        started = time.monotonic()
        self.gateway.send_signal(how)
        try:
            status = self.gateway.wait(timeout)
        except subprocess.TimeoutExpired:
            self.gateway.kill()
            self.gateway.wait()
            status = None
        return status, time.monotonic() - started

    def all_notifying(self):
        states = 0
        for i in range(self.devices):
            reply = self.simulator_call("GetDeviceState", "s", "C0:FF:EE:10:%02X:%02X" % (i >> 8, i & 0xFF))
            if not reply:
                return False
            state = {key: value["data"] for key, value in reply[0].items()}
            states += bool(state.get("notifying"))
        return states == self.devices

    def gateway_log_contains(self, text):
        try:
            with open(self.gateway_log, errors="replace") as f:
                return text in f.read()
        except OSError:
            return False

    # ---------------------------------------------------------------- whole world
    def start(self):
        self.start_bus()
        self.start_simulator()
        self.set_load(self.devices, 1)  # creates the load devices (nothing is sent before they notify)
        self.start_broker()
        self.subscriber = Subscriber(self.broker_port, "faults-subscriber")
        self.proxy = ackproxy.AckProxy(self.port, self.broker_port)
        self.write_config()
        self.start_gateway()
        wait_until(self.all_notifying, 120, "every load device connected and notifying")
        self.set_load(self.devices, self.rate)

    def finish(self, drain_seconds=60, idle_seconds=30):
        """Stops the load, waits until every reading sent arrived (or drain_seconds passed, or
        idle_seconds without a new one),
        stops the gateway with SIGTERM; returns the figures."""
        self.set_load(0, 0)
        statistics = self.load_statistics()
        last = statistics.get("sequences", [])
        total = sum(last)
        # Until everything sent arrived, at most drain_seconds, and no longer than idle_seconds
        # without a new reading (a reading lost for good would otherwise cost the whole wait).
        progress = {"count": -1, "at": time.monotonic()}

        def drained():
            count = self.unique_received(self.proxy.acknowledged_readings())
            if count != progress["count"]:
                progress.update(count=count, at=time.monotonic())
            return count >= total or time.monotonic() - progress["at"] > idle_seconds

        try:
            wait_until(drained, drain_seconds, "drain")
        except TimeoutError:
            pass
        time.sleep(1)  # late duplicates
        status, took = self.stop_gateway()
        send_times = {device: self.load_send_times(device) for device, sent in enumerate(last) if sent}
        rows = count_losses(
            self.subscriber.sequences, last, self.proxy.acknowledged_readings(), send_times,
            self.proxy.publish_counts())
        return {
            "sent": total,
            "rows": rows,
            "lost": sum(r["lost"] for r in rows),
            "broker_lost": sum(r["broker_lost"] for r in rows),
            "duplicated": sum(r["duplicated"] for r in rows),
            "reordered": sum(r["reordered"] for r in rows),
            "integrity": integrity_check(self.outbox),
            "sigterm": status,
            "sigterm_seconds": took,
            "dropped_reported": (self.subscriber.health or {}).get("dropped"),
        }

    def unique_received(self, acknowledged=frozenset()):
        """Readings received, plus (when given) those the broker acknowledged and never delivered."""
        with self.subscriber.lock:
            received = {(device, s) for device, v in self.subscriber.sequences.items() for s, _ in v}
        return len(received | set(acknowledged)) if acknowledged else len(received)

    def close(self, keep=False):
        if self.subscriber:
            self.subscriber.stop()
        if self.proxy:
            self.proxy.close()
        for process in (self.gateway, self.simulator, self.mosquitto, self.bus):
            if process and process.poll() is None:
                if process is self.mosquitto:
                    process.send_signal(signal.SIGCONT)
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if self.cpu_group:
            try:
                os.rmdir(self.cpu_group)
            except OSError:
                pass
        if not keep:
            shutil.rmtree(self.work, ignore_errors=True)
