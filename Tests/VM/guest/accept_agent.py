#!/usr/bin/python3
# A BlueZ pairing agent (org.bluez.Agent1, NoInputNoOutput) that accepts every Just Works
# confirmation and authorisation: the default agent of the guest's bluetoothd, so a bond between its
# two controllers can be made without a person. With --reject it refuses each of them instead
# (org.bluez.Error.Rejected), as a user saying no would. Prints "agent registered" once it is the
# default.
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

AGENT = "org.bluez.Agent1"
PATH = "/io/blebridge/vm/agent"
REJECT = "--reject" in sys.argv[1:]


def answer(what, *details):
    print("agent:", "rejected" if REJECT else what, *details, flush=True)
    if REJECT:
        raise dbus.exceptions.DBusException("refused by the test", name="org.bluez.Error.Rejected")


class AcceptingAgent(dbus.service.Object):
    @dbus.service.method(AGENT, in_signature="", out_signature="")
    def Release(self):
        pass

    @dbus.service.method(AGENT, in_signature="ou", out_signature="")
    def RequestConfirmation(self, device, passkey):
        answer("confirmed", device, passkey)

    @dbus.service.method(AGENT, in_signature="o", out_signature="")
    def RequestAuthorization(self, device):
        answer("authorised", device)

    @dbus.service.method(AGENT, in_signature="os", out_signature="")
    def AuthorizeService(self, device, uuid):
        answer("service", device, uuid)

    @dbus.service.method(AGENT, in_signature="", out_signature="")
    def Cancel(self):
        print("agent: cancelled", flush=True)


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
AcceptingAgent(bus, PATH)
manager = dbus.Interface(bus.get_object("org.bluez", "/org/bluez"), "org.bluez.AgentManager1")
manager.RegisterAgent(PATH, "NoInputNoOutput")
manager.RequestDefaultAgent(PATH)
print("agent registered", flush=True)
GLib.MainLoop().run()
