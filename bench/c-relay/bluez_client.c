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
#include "bench_common.h"

#include <dbus/dbus.h>
#include <signal.h>
#include <stdarg.h>
#include <strings.h>
#include <unistd.h>

#define MAX_OBJECTS 4096

static volatile sig_atomic_t stopping;
static void on_signal(int signo) {
    (void)signo;
    stopping = 1;
}

struct found {
    char path[256];
    char address[32]; /* devices */
    char device[256]; /* characteristics: the device path they belong to */
};

static DBusConnection *connection;

static DBusMessage *call(const char *path, const char *interface, const char *method, int timeout_ms, int first_type,
                         ...) {
    DBusMessage *message = dbus_message_new_method_call("org.bluez", path, interface, method);
    if (!message) die("bluez_client", "out of memory");
    if (first_type != DBUS_TYPE_INVALID) {
        va_list args;
        va_start(args, first_type);
        dbus_message_append_args_valist(message, first_type, args);
        va_end(args);
    }
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, message, timeout_ms, &error);
    dbus_message_unref(message);
    if (!reply) {
        fprintf(stderr, "bluez_client: %s.%s on %s: %s: %s\n", interface, method, path, error.name, error.message);
        dbus_error_free(&error);
    }
    return reply;
}

static const char *string_property(DBusMessageIter *properties, const char *name) {
    DBusMessageIter dict, entry, variant;
    for (dbus_message_iter_recurse(properties, &dict); dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&dict)) {
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, name) != 0) continue;
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_STRING) return NULL;
        const char *value;
        dbus_message_iter_get_basic(&variant, &value);
        return value;
    }
    return NULL;
}

/* GetManagedObjects: the devices whose address has the prefix, and the characteristics with the
 * UUID (with their device's path). */
static void scan_objects(const char *prefix, const char *uuid, struct found *devices, int *device_count,
                         struct found *characteristics, int *characteristic_count) {
    *device_count = *characteristic_count = 0;
    DBusMessage *reply = call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", 25000, DBUS_TYPE_INVALID);
    if (!reply) die("bluez_client", "GetManagedObjects failed");
    DBusMessageIter args, objects, object, interfaces, interface;
    dbus_message_iter_init(reply, &args);
    for (dbus_message_iter_recurse(&args, &objects); dbus_message_iter_get_arg_type(&objects) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&objects)) {
        const char *path;
        dbus_message_iter_recurse(&objects, &object);
        dbus_message_iter_get_basic(&object, &path);
        dbus_message_iter_next(&object);
        for (dbus_message_iter_recurse(&object, &interfaces);
             dbus_message_iter_get_arg_type(&interfaces) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&interfaces)) {
            const char *name;
            dbus_message_iter_recurse(&interfaces, &interface);
            dbus_message_iter_get_basic(&interface, &name);
            dbus_message_iter_next(&interface);
            if (strcmp(name, "org.bluez.Device1") == 0 && *device_count < MAX_OBJECTS) {
                const char *address = string_property(&interface, "Address");
                if (address && strncmp(address, prefix, strlen(prefix)) == 0) {
                    struct found *item = &devices[(*device_count)++];
                    snprintf(item->path, sizeof item->path, "%s", path);
                    snprintf(item->address, sizeof item->address, "%s", address);
                }
            } else if (strcmp(name, "org.bluez.GattCharacteristic1") == 0 && *characteristic_count < MAX_OBJECTS) {
                const char *value = string_property(&interface, "UUID");
                const char *service = strstr(path, "/service");
                if (value && strcasecmp(value, uuid) == 0 && service) {
                    struct found *item = &characteristics[(*characteristic_count)++];
                    snprintf(item->path, sizeof item->path, "%s", path);
                    snprintf(item->device, sizeof item->device, "%.*s", (int)(service - path), path);
                }
            }
        }
    }
    dbus_message_unref(reply);
}

static int compare_found(const void *a, const void *b) {
    return strcmp(((const struct found *)a)->path, ((const struct found *)b)->path);
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
    connection = dbus_connection_open_private(address, &error);
    if (!connection || !dbus_bus_register(connection, &error)) die("bluez_client: connect", error.message);
    static struct found devices[MAX_OBJECTS], characteristics[MAX_OBJECTS];
    int device_count, characteristic_count;
    const uint64_t deadline = monotonic_ns() + (uint64_t)(timeout * 1e9);

    /* Discovery until enough load devices are known. */
    DBusMessage *reply = call(adapter, "org.bluez.Adapter1", "StartDiscovery", 25000, DBUS_TYPE_INVALID);
    if (!reply) die("bluez_client", "StartDiscovery failed");
    dbus_message_unref(reply);
    for (;;) {
        scan_objects(prefix, uuid, devices, &device_count, characteristics, &characteristic_count);
        if (device_count >= count) break;
        if (monotonic_ns() > deadline || stopping) die("bluez_client", "not enough load devices discovered");
        usleep(100000);
    }
    if ((reply = call(adapter, "org.bluez.Adapter1", "StopDiscovery", 25000, DBUS_TYPE_INVALID)))
        dbus_message_unref(reply);
    qsort(devices, (size_t)device_count, sizeof *devices, compare_found);

    /* Connect one at a time (as BlueZ wants), then wait for every characteristic. */
    for (int i = 0; i < count; i++) {
        while (!(reply = call(devices[i].path, "org.bluez.Device1", "Connect", 30000, DBUS_TYPE_INVALID))) {
            if (monotonic_ns() > deadline || stopping) die("bluez_client: cannot connect", devices[i].address);
            usleep(200000);
        }
        dbus_message_unref(reply);
    }
    int ready = 0;
    while (!ready) {
        scan_objects(prefix, uuid, devices, &device_count, characteristics, &characteristic_count);
        qsort(devices, (size_t)device_count, sizeof *devices, compare_found);
        ready = 1;
        for (int i = 0; i < count && ready; i++) {
            int has = 0;
            for (int j = 0; j < characteristic_count && !has; j++)
                has = strcmp(characteristics[j].device, devices[i].path) == 0;
            ready = has;
        }
        if (!ready) {
            if (monotonic_ns() > deadline || stopping) die("bluez_client", "services not resolved in time");
            usleep(100000);
        }
    }
    int started = 0;
    for (int j = 0; j < characteristic_count; j++) {
        int wanted = 0;
        for (int i = 0; i < count && !wanted; i++) wanted = strcmp(characteristics[j].device, devices[i].path) == 0;
        if (!wanted) continue;
        reply = call(characteristics[j].path, "org.bluez.GattCharacteristic1", "StartNotify", 25000, DBUS_TYPE_INVALID);
        if (!reply) die("bluez_client: StartNotify failed", characteristics[j].path);
        dbus_message_unref(reply);
        started++;
    }
    printf("ready %d\n", started);
    fflush(stdout);

    /* Hold the sessions; keep the connection drained. */
    while (!stopping && dbus_connection_read_write_dispatch(connection, 200)) {
    }
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
