/* Makes a BlueZ (or the simulator) deliver load notifications as PropertiesChanged signals, as a
 * client of org.bluez: discovers the load devices (addresses starting with --prefix), connects
 * each, waits for its characteristic --uuid and calls StartNotify on it, then holds the notify
 * sessions (BlueZ ends them when their client leaves the bus) until SIGTERM. The relay then
 * receives the broadcast PropertiesChanged signals like any other listener.
 *
 *   bluez_client --address unix:path=… --count 32 [--prefix C0:FF:EE:10:]
 *                [--uuid 6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b] [--adapter /org/bluez/hci0] [--timeout 60]
 * prints "ready <n>" once every notification is on.
 */
#include "bluez_setup.h"

static volatile sig_atomic_t stopping;
static void on_signal(int signo) {
    (void)signo;
    stopping = 1;
}

int main(int argc, char **argv) {
    const char *address = arg_string(argc, argv, "--address", NULL);
    const char *prefix = arg_string(argc, argv, "--prefix", "C0:FF:EE:10:");
    const char *uuid = arg_string(argc, argv, "--uuid", "6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b");
    const char *adapter = arg_string(argc, argv, "--adapter", "/org/bluez/hci0");
    int count = (int)arg_double(argc, argv, "--count", 32);
    double timeout = arg_double(argc, argv, "--timeout", 60);
    if (!address || count < 1 || count > MAX_OBJECTS) die("usage", "bluez_client --address ADDR --count N");
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection || !dbus_bus_register(connection, &error)) die("bluez_client: connect", error.message);
    static struct found characteristics[MAX_OBJECTS];
    int found = bluez_load_characteristics(connection, prefix, uuid, adapter, count, timeout, &stopping, characteristics);
    for (int j = 0; j < found; j++) {
        DBusMessage *reply = bluez_call(connection, characteristics[j].path, "org.bluez.GattCharacteristic1",
                                        "StartNotify", 25000, DBUS_TYPE_INVALID);
        if (!reply) die("bluez_client: StartNotify failed", characteristics[j].path);
        dbus_message_unref(reply);
    }
    printf("ready %d\n", found);
    fflush(stdout);

    /* Hold the sessions; keep the connection drained. */
    while (!stopping && dbus_connection_read_write_dispatch(connection, 200)) {
    }
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
