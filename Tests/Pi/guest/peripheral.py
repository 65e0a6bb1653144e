#!/usr/bin/python3
"""Runs one of Debian's BlueZ example scripts (bluez-test-scripts) on a chosen adapter.

    peripheral.py gatt|advertisement ADAPTER_PATH

The examples take the first adapter that offers the needed manager interface; with two btvirt
controllers that may be the gateway's own. This loads the installed example as a module and
makes its adapter lookup answer ADAPTER_PATH. `gatt` then runs the example's main().
`advertisement` registers the example's TestAdvertisement object itself and registers it again
every second while nothing is connected to ADAPTER_PATH: btvirt reports an advertisement to a
scanner only when advertising is switched on (docs/testing.md, the VM tier), so a single
registration before the gateway scans would never be seen. Nothing of the examples is copied.
"""
import importlib.machinery
import importlib.util
import sys

EXAMPLES = "/usr/share/doc/bluez-test-scripts/examples/"
SCRIPTS = {"gatt": "example-gatt-server", "advertisement": "example-advertisement"}


def load(path, name):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def advertise(module, adapter):
    import dbus
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    manager = dbus.Interface(bus.get_object("org.bluez", adapter), "org.bluez.LEAdvertisingManager1")
    objects = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    advertisement = module.TestAdvertisement(bus, 0)
    path = advertisement.get_path()
    state = {"registered": False, "busy": False, "announced": False}

    def connected():
        for object_path, interfaces in objects.GetManagedObjects().items():
            device = interfaces.get("org.bluez.Device1")
            if object_path.startswith(adapter + "/") and device and device.get("Connected"):
                return True
        return False

    def registered():
        state["registered"], state["busy"] = True, False
        if not state["announced"]:
            state["announced"] = True
            print("Advertisement registered", flush=True)

    def failed(error):
        state["busy"] = False
        print("advertisement: %s" % error, flush=True)

    def register():
        manager.RegisterAdvertisement(path, {}, reply_handler=registered, error_handler=failed)

    def unregistered():
        state["registered"] = False
        register()

    def refresh():
        if state["busy"] or (state["registered"] and connected()):
            return True
        state["busy"] = True
        if state["registered"]:
            manager.UnregisterAdvertisement(path, reply_handler=unregistered, error_handler=failed)
        else:
            register()
        return True

    refresh()
    GLib.timeout_add(1000, refresh)
    GLib.MainLoop().run()


def main():
    kind, adapter = sys.argv[1], sys.argv[2]
    module = load(EXAMPLES + SCRIPTS[kind], SCRIPTS[kind].replace("-", "_"))
    module.find_adapter = lambda bus: adapter
    sys.argv = [SCRIPTS[kind]]
    if kind == "advertisement":
        advertise(module, adapter)
    else:
        module.main()


if __name__ == "__main__":
    main()
