"""A TCP proxy between the gateway and mosquitto that records which load readings the broker
acknowledged (QoS 1 PUBACK) to the gateway.

The measuring subscriber sits behind the same broker, so a reading it never received was lost
either by the gateway (never acknowledged: the gateway must keep and re-send it) or by the broker
after its PUBACK (mosquitto 2.0.11 with persistence loses some acknowledged QoS 1 messages for a
persistent subscriber across a restart, SIGTERM or SIGKILL, with no gateway involved:
`Tests/Faults/brokerloss.py`). The proxy parses the MQTT packets it forwards (CONNECT for the
protocol level, PUBLISH from the gateway with its packet id and load value, PUBACK from the broker)
and changes nothing. One upstream connection per gateway connection; when either side closes, both do.
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
            state = {"level": 4, "pending": {}}  # packet id → (device, sequence)
            for source, target, outgoing in ((downstream, upstream, True), (upstream, downstream, False)):
                threading.Thread(target=self.pump, args=(source, target, outgoing, state), daemon=True).start()

    def pump(self, source, target, outgoing, state):
        try:
            while True:
                first, packet, body = read_packet(source)
                kind = first >> 4
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
        except (EOFError, OSError):
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

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

    def acknowledged_readings(self):
        with self.lock:
            return set(self.acknowledged)

    def close(self):
        self.closed = True
        self.listener.close()
