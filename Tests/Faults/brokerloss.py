"""Does mosquitto lose QoS 1 messages it acknowledged, for a persistent subscriber, when it is
restarted? The fault harness's broker and subscriber exactly (persistence on, autosave 1 s, the
paho-mqtt subscriber with a persistent session), with no gateway: a paho-mqtt publisher sends
sequence-numbered load values at QoS 1, about 180/s, and records each PUBACK; the broker is stopped
with SIGNAL (term or kill) 3 times (4 s apart, down 2 s each). Prints the messages sent,
acknowledged, received, and those acknowledged but never received.

    brokerloss.py term|kill
"""

import json
import signal
import sys
import threading
import time

import paho.mqtt.client as mqtt

import harness


def main():
    how = {"term": signal.SIGTERM, "kill": signal.SIGKILL}[sys.argv[1] if len(sys.argv) > 1 else "term"]
    world = harness.World("/bin/true", "brokerloss", 1, 1)
    lock = threading.Lock()
    acknowledged = set()
    sequence_of = {}  # paho message id → sequence
    try:
        world.start_broker()
        subscriber = harness.Subscriber(world.broker_port, "faults-subscriber")
        publisher = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="brokerloss-publisher", clean_session=False)
        publisher.max_inflight_messages_set(64)
        publisher.max_queued_messages_set(0)
        publisher.reconnect_delay_set(0.1, 0.5)

        def on_publish(client, userdata, mid, reason, properties):
            with lock:
                if mid in sequence_of:
                    acknowledged.add(sequence_of[mid])

        publisher.on_publish = on_publish
        publisher.connect("127.0.0.1", world.broker_port)
        publisher.loop_start()
        started = time.monotonic()
        sequence = restarts = 0
        while time.monotonic() - started < 20:
            sequence += 1
            raw = (0).to_bytes(4, "little") + sequence.to_bytes(8, "little") + time.time_ns().to_bytes(8, "little")
            info = publisher.publish("blebridge/load-0000", json.dumps({"value": raw.hex()}), qos=1)
            with lock:
                sequence_of[info.mid] = sequence
            if restarts < 3 and time.monotonic() - started > 4 + 5 * restarts:
                world.kill_broker(how)
                time.sleep(2)
                world.start_broker()
                restarts += 1
            time.sleep(0.005)
        time.sleep(15)  # everything acknowledged is delivered by now, or never
        publisher.loop_stop()
        received = {s for s, _ in subscriber.sequences.get(0, [])}
        with lock:
            acked = set(acknowledged)
        never = sorted(acked - received)
        print(f"signal {how.name}: sent {sequence}, acknowledged {len(acked)}, received {len(received)},"
              f" acknowledged and never received {len(never)}: {never[:40]}")
    finally:
        world.close()


if __name__ == "__main__":
    main()
