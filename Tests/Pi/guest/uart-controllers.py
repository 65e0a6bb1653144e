#!/usr/bin/python3
"""Two emulated LE controllers attached the way a Pi's on-board Bluetooth is: over a UART.

    uart-controllers.py COUNT

Debian 13's arm64 kernel has no hci_vhci (CONFIG_BT_HCIVHCI is off there), so btvirt cannot make
controllers through /dev/vhci. It still emulates them behind its server sockets (`btvirt -s`):
each connection to /tmp/bt-server-le is one LE controller speaking H:4, and all of them live in
the one btvirt process, so they see each other's advertisements and connect to each other. This
gives each connection a pseudo-terminal, relays bytes both ways, and writes the terminal's path
to /run/pi-check/ttyBT<n>; `btattach -B <path> -P h4` then binds the kernel's hci_uart to it, as
the Pi's UART-attached controller is bound.
"""
import os
import selectors
import socket
import sys
import time
import tty


def main():
    count = int(sys.argv[1])
    os.makedirs("/run/pi-check", exist_ok=True)
    selector = selectors.DefaultSelector()
    for index in range(count):
        for _ in range(100):
            try:
                connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                connection.connect("/tmp/bt-server-le")
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit("no btvirt server at /tmp/bt-server-le")
        master, slave = os.openpty()
        tty.setraw(slave)
        path = os.ttyname(slave)
        with open("/run/pi-check/ttyBT%d" % index, "w") as out:
            out.write(path + "\n")
        selector.register(master, selectors.EVENT_READ, (master, connection))
        selector.register(connection, selectors.EVENT_READ, (master, connection))
        print("controller %d on %s" % (index, path), flush=True)
    while True:
        for key, _ in selector.select():
            master, connection = key.data
            if key.fileobj is connection:
                data = connection.recv(4096)
                if not data:
                    sys.exit("btvirt closed a controller")
                os.write(master, data)
            else:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    continue
                connection.sendall(data)


if __name__ == "__main__":
    main()
