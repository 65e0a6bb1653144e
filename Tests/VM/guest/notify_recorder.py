#!/usr/bin/python3
# Stands in for systemd's notification socket in the VM (its PID 1 is busybox): binds the datagram
# socket named on the command line (writable by every user, so a gateway running as its service user
# can send) and prints each notification, one line per KEY=value, stamped with the wall time it
# arrived (seconds since the epoch).
import os
import socket
import sys
import time

path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
os.chmod(path, 0o777)
while True:
    data = sock.recv(65536).decode("utf-8", "replace")
    stamp = "%.3f" % time.time()
    for line in data.splitlines():
        print(stamp, line, flush=True)
