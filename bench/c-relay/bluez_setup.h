/* Shared by the benchmark's BlueZ clients (bluez_client, relay --acquire-notify): finds the
 * simulator's (or a BlueZ's) load devices, connects them and returns their load characteristics.
 *
 * bluez_load_characteristics discovers the devices whose address starts with `prefix`, connects
 * `count` of them one at a time (as BlueZ wants), waits until each has its characteristic `uuid`,
 * and fills `wanted` with those characteristics (path and device path), `count` of them. */
#ifndef BLUEZ_SETUP_H
#define BLUEZ_SETUP_H

#include "bench_common.h"

#include <dbus/dbus.h>
#include <signal.h>
#include <stdarg.h>
#include <strings.h>
#include <unistd.h>

#define MAX_OBJECTS 4096

struct found {
    char path[256];
    char address[32]; /* devices */
    char device[256]; /* characteristics: the device path they belong to */
};

static DBusMessage *bluez_call(DBusConnection *connection, const char *path, const char *interface, const char *method, int timeout_ms, int first_type,
                         ...) {
    DBusMessage *message = dbus_message_new_method_call("org.bluez", path, interface, method);
    if (!message) die("bluez_setup", "out of memory");
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
        fprintf(stderr, "bluez_setup: %s.%s on %s: %s: %s\n", interface, method, path, error.name, error.message);
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
static void scan_objects(DBusConnection *connection, const char *prefix, const char *uuid, struct found *devices, int *device_count,
                         struct found *characteristics, int *characteristic_count) {
    *device_count = *characteristic_count = 0;
    DBusMessage *reply = bluez_call(connection, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", 25000, DBUS_TYPE_INVALID);
    if (!reply) die("bluez_setup", "GetManagedObjects failed");
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

static int bluez_load_characteristics(DBusConnection *connection, const char *prefix, const char *uuid,
                                      const char *adapter, int count, double timeout,
                                      volatile sig_atomic_t *stopping, struct found *wanted) {
    static struct found devices[MAX_OBJECTS], characteristics[MAX_OBJECTS];
    int device_count, characteristic_count;
    const uint64_t deadline = monotonic_ns() + (uint64_t)(timeout * 1e9);

    /* Discovery until enough load devices are known. */
    DBusMessage *reply = bluez_call(connection, adapter, "org.bluez.Adapter1", "StartDiscovery", 25000, DBUS_TYPE_INVALID);
    if (!reply) die("bluez_setup", "StartDiscovery failed");
    dbus_message_unref(reply);
    for (;;) {
        scan_objects(connection, prefix, uuid, devices, &device_count, characteristics, &characteristic_count);
        if (device_count >= count) break;
        if (monotonic_ns() > deadline || *stopping) die("bluez_setup", "not enough load devices discovered");
        usleep(100000);
    }
    if ((reply = bluez_call(connection, adapter, "org.bluez.Adapter1", "StopDiscovery", 25000, DBUS_TYPE_INVALID)))
        dbus_message_unref(reply);
    qsort(devices, (size_t)device_count, sizeof *devices, compare_found);

    /* Connect one at a time (as BlueZ wants), then wait for every characteristic. */
    for (int i = 0; i < count; i++) {
        while (!(reply = bluez_call(connection, devices[i].path, "org.bluez.Device1", "Connect", 30000, DBUS_TYPE_INVALID))) {
            if (monotonic_ns() > deadline || *stopping) die("bluez_setup: cannot connect", devices[i].address);
            usleep(200000);
        }
        dbus_message_unref(reply);
    }
    int ready = 0;
    while (!ready) {
        scan_objects(connection, prefix, uuid, devices, &device_count, characteristics, &characteristic_count);
        qsort(devices, (size_t)device_count, sizeof *devices, compare_found);
        ready = 1;
        for (int i = 0; i < count && ready; i++) {
            int has = 0;
            for (int j = 0; j < characteristic_count && !has; j++)
                has = strcmp(characteristics[j].device, devices[i].path) == 0;
            ready = has;
        }
        if (!ready) {
            if (monotonic_ns() > deadline || *stopping) die("bluez_setup", "services not resolved in time");
            usleep(100000);
        }
    }
    int found_count = 0;
    for (int j = 0; j < characteristic_count; j++) {
        int match = 0;
        for (int i = 0; i < count && !match; i++) match = strcmp(characteristics[j].device, devices[i].path) == 0;
        if (match) wanted[found_count++] = characteristics[j];
    }
    return found_count;
}

#endif
