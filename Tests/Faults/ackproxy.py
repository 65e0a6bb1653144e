"""A TCP proxy between the gateway and mosquitto that records which load readings the broker
acknowledged (QoS 1 PUBACK) to the gateway.

The measuring subscriber sits behind the same broker, so a reading it never received was lost
either by the gateway (never acknowledged: the gateway must keep and re-send it) or by the broker
after its PUBACK (mosquitto 2.0.11 with persistence loses some acknowledged QoS 1 messages for a
persistent subscriber across a restart, SIGTERM or SIGKILL, with no gateway involved:
`Tests/Faults/brokerloss.py`). The proxy parses the MQTT packets it forwards (CONNECT for the
protocol level, PUBLISH from the gateway with its packet id and load value, PUBACK from the broker)
and changes nothing. One upstream connection per gateway connection; when one side ends, the other
is half-closed after everything was forwarded. One difference from a direct connection remains:
while the broker is down, the gateway's connection is accepted by the proxy and ended at once
(end of file) instead of refused.
"""

import socket
import threading

import harness


def read_exactly(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def read_packet(sock):
    """One MQTT control packet: (first byte, whole packet bytes, body)."""
    first = read_exactly(sock, 1)
    header = first
    length = 0
    multiplier = 1
    while True:
        byte = read_exactly(sock, 1)
        header += byte
        length += (byte[0] & 0x7F) * multiplier
        if byte[0] & 0x80 == 0:
            break
        multiplier *= 128
    body = read_exactly(sock, length) if length else b""
    return first[0], header + body, body


def variable_int(data, offset):
    value = 0
    multiplier = 1
    while True:
        byte = data[offset]
        offset += 1
        value += (byte & 0x7F) * multiplier
        if byte & 0x80 == 0:
            return value, offset
        multiplier *= 128


class AckProxy:
    """Listens on `port` (loopback) and forwards to the broker on `broker_port`."""

    def __init__(self, port, broker_port):
        self.port = port
        self.broker_port = broker_port
        self.lock = threading.Lock()
        self.acknowledged = set()  # (device, sequence) the broker PUBACKed to the gateway
        # (device, sequence) → [fresh, dup]: PUBLISH packets of the reading from the gateway, without
        # and with the DUP flag (libmosquitto's re-send of an unacknowledged packet on a new connection)
        self.published = {}
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(16)
        self.closed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closed:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.broker_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                downstream.close()  # the broker is away: the gateway sees its connection end
                continue
            # pending: packet id → (device, sequence); open: the directions still forwarding
            state = {"level": 4, "pending": {}, "open": 2, "lock": threading.Lock()}
            for source, target, outgoing in ((downstream, upstream, True), (upstream, downstream, False)):
                threading.Thread(target=self.pump, args=(source, target, outgoing, state), daemon=True).start()

    def pump(self, source, target, outgoing, state):
        """Forwards one direction packet by packet. At its end it half-closes the other side (FIN
        after everything forwarded) and keeps reading what still comes, so no socket is closed with
        unread data: that sends a reset, and the peer's kernel drops what it had not read yet (PUBACKs
        the gateway then re-sends for: duplicates a direct connection does not make)."""
        forwarding = True
        try:
            while True:
                first, packet, body = read_packet(source)
                if not forwarding:
                    continue
                kind = first >> 4
                try:
                    if outgoing:
                        self.gateway_packet(kind, first, body, state)
                        target.sendall(packet)
                    else:
                        target.sendall(packet)  # forward first: the gateway may act on it at once
                        if kind == 4 and len(body) >= 2:  # PUBACK
                            with self.lock:
                                reading = state["pending"].pop(int.from_bytes(body[0:2], "big"), None)
                                if reading:
                                    self.acknowledged.add(reading)
                except OSError:
                    forwarding = False  # the other side is gone: read this one to its end
                    for sock, how in ((target, socket.SHUT_RDWR), (source, socket.SHUT_WR)):
                        try:
                            sock.shutdown(how)
                        except OSError:
                            pass
        except (EOFError, OSError):
            pass
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        with state["lock"]:
            state["open"] -= 1
            last = state["open"] == 0
        if last:
            source.close()
            target.close()

    def gateway_packet(self, kind, first, body, state):
        if kind == 1 and len(body) >= 7:  # CONNECT: protocol name, then its level
            name_length = int.from_bytes(body[0:2], "big")
            state["level"] = body[2 + name_length]
        elif kind == 3:  # PUBLISH
            qos = (first >> 1) & 3
            topic_length = int.from_bytes(body[0:2], "big")
            offset = 2 + topic_length
            if qos == 0:
                return
            packet_id = int.from_bytes(body[offset:offset + 2], "big")
            offset += 2
            if state["level"] == 5:
                properties, offset = variable_int(body, offset)
                offset += properties
            value = harness.extract_load_value(body[offset:])
            if value:
                with self.lock:
                    state["pending"][packet_id] = (value[0], value[1])
                    counts = self.published.setdefault((value[0], value[1]), [0, 0])
                    counts[1 if first & 0x08 else 0] += 1

    def acknowledged_readings(self):
        with self.lock:
            return set(self.acknowledged)

    def publish_counts(self):
        """(device, sequence) → (fresh, dup): how often the gateway published each reading."""
        with self.lock:
            return {reading: tuple(counts) for reading, counts in self.published.items()}

    def close(self):
        self.closed = True
        self.listener.close()
