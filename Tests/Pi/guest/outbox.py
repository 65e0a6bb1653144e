#!/usr/bin/python3
"""Outbox checks for the upgrade step.

    outbox.py snapshot DB FILE      write the rows the outbox holds now, one "<topic>\t<payload>"
                                    line each, to FILE; print how many
    outbox.py delivered FILE LOG T  print "<delivered> <held>": how many of FILE's rows the MQTT
                                    log (mqtt.py log) received after unix time T
"""
import sqlite3
import sys


def snapshot(db, path):
    connection = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    rows = connection.execute("SELECT topic, payload FROM outbox ORDER BY id").fetchall()
    with open(path, "w", encoding="utf-8") as out:
        for topic, payload in rows:
            if isinstance(payload, bytes):
                payload = payload.decode("utf-8", "replace")
            out.write("%s\t%s\n" % (topic, payload.replace("\n", " ")))
    print(len(rows))


def delivered(path, log, since):
    held = [line.rstrip("\n") for line in open(path, encoding="utf-8") if line.strip()]
    seen = set()
    for line in open(log, encoding="utf-8", errors="replace"):
        parts = line.rstrip("\n").split("\t", 2)
        if len(parts) == 3 and float(parts[0]) >= since:
            seen.add(parts[1] + "\t" + parts[2])
    print(sum(1 for row in held if row in seen), len(held))


if __name__ == "__main__":
    if sys.argv[1] == "snapshot":
        snapshot(sys.argv[2], sys.argv[3])
    else:
        delivered(sys.argv[2], sys.argv[3], float(sys.argv[4]))
