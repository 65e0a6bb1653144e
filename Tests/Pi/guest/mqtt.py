#!/usr/bin/python3
"""MQTT helpers for the Pi tier (python3-paho-mqtt; the image has no libmosquitto1).

    mqtt.py log FILE            subscribe to blebridge/# (persistent session, QoS 1) and append
                                "<unix time>\t<topic>\t<payload>" lines to FILE, reconnecting forever
    mqtt.py pub TOPIC PAYLOAD   publish once (QoS 1) and exit 0 when the broker acknowledged
"""
import sys
import time

import paho.mqtt.client as mqtt


def client(client_id, clean):
    kwargs = {"client_id": client_id, "clean_session": clean}
    if hasattr(mqtt, "CallbackAPIVersion"):
        return mqtt.Client(mqtt.CallbackAPIVersion.VERSION1, **kwargs)
    return mqtt.Client(**kwargs)


def log(path):
    out = open(path, "a", buffering=1, encoding="utf-8")
    c = client("pi-check-log", False)

    def on_connect(c, userdata, flags, rc):
        out.write("%.3f\t$connect\t%s\n" % (time.time(), rc))
        c.subscribe("blebridge/#", qos=1)

    def on_message(c, userdata, message):
        payload = message.payload.decode("utf-8", "replace").replace("\n", " ")
        out.write("%.3f\t%s\t%s\n" % (time.time(), message.topic, payload))

    c.on_connect = on_connect
    c.on_message = on_message
    c.reconnect_delay_set(1, 2)
    while True:
        try:
            c.connect("127.0.0.1", 1883, keepalive=10)
            break
        except OSError:
            time.sleep(1)
    c.loop_forever(retry_first_connection=True)


def pub(topic, payload):
    c = client("pi-check-pub-%d" % time.time_ns(), True)
    c.connect("127.0.0.1", 1883, keepalive=10)
    c.loop_start()
    info = c.publish(topic, payload, qos=1)
    info.wait_for_publish(timeout=10)
    c.disconnect()
    c.loop_stop()
    return 0 if info.is_published() else 1


if __name__ == "__main__":
    if sys.argv[1] == "log":
        log(sys.argv[2])
    else:
        sys.exit(pub(sys.argv[2], sys.argv[3]))
