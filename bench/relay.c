/*
 * The benchmark's ceiling: the least work that does the gateway's job for load-mode devices.
 * D-Bus PropertiesChanged signal (GattCharacteristic1.Value) -> row in a SQLite WAL outbox ->
 * MQTT QoS 1 publish -> row deleted on PUBACK. No decoding, no JSON beyond the hex value.
 *
 * usage: relay BUS_ADDRESS BROKER_PORT OUTBOX_PATH DEVICES
 * Connects LOAD-0000.. (C0:FF:EE:10:00:00..) through org.bluez, starts notifications, relays
 * until SIGTERM/SIGINT. Prints "ready" on stdout once every device notifies.
 */
#include <dbus/dbus.h>
#include <mosquitto.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOAD_CHARACTERISTIC "6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b"

static volatile sig_atomic_t running = 1;
static pthread_mutex_t db_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3 *db;
static sqlite3_stmt *insert_row, *delete_row;
static struct mosquitto *mqtt;
/* mid -> rowid, filled before the PUBACK can arrive (under db_lock). */
#define MAX_MID 65536
static sqlite3_int64 rows_by_mid[MAX_MID];

static void stop(int signal_number) { (void)signal_number; running = 0; }

static void die(const char *what, const char *detail) {
    fprintf(stderr, "relay: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

static void on_publish(struct mosquitto *client, void *context, int mid) {
    (void)client; (void)context;
    pthread_mutex_lock(&db_lock);
    sqlite3_int64 row = rows_by_mid[mid % MAX_MID];
    sqlite3_bind_int64(delete_row, 1, row);
    if (sqlite3_step(delete_row) != SQLITE_DONE) fprintf(stderr, "relay: delete: %s\n", sqlite3_errmsg(db));
    sqlite3_reset(delete_row);
    pthread_mutex_unlock(&db_lock);
}

static void relay_value(const char *path, const unsigned char *bytes, int length) {
    char topic[256], hex[1024];
    const char *device = strstr(path, "dev_");
    snprintf(topic, sizeof topic, "relay/%.*s", device ? 21 : 7, device ? device : "unknown");
    int n = length > 500 ? 500 : length;
    for (int i = 0; i < n; i++) sprintf(hex + 2 * i, "%02x", bytes[i]);
    hex[2 * n] = 0;
    pthread_mutex_lock(&db_lock);
    sqlite3_bind_text(insert_row, 1, topic, -1, SQLITE_STATIC);
    sqlite3_bind_text(insert_row, 2, hex, -1, SQLITE_STATIC);
    if (sqlite3_step(insert_row) != SQLITE_DONE) fprintf(stderr, "relay: insert: %s\n", sqlite3_errmsg(db));
    sqlite3_reset(insert_row);
    sqlite3_int64 row = sqlite3_last_insert_rowid(db);
    int mid = 0;
    int rc = mosquitto_publish(mqtt, &mid, topic, 2 * n, hex, 1, false);
    if (rc == MOSQ_ERR_SUCCESS) rows_by_mid[mid % MAX_MID] = row;
    pthread_mutex_unlock(&db_lock);
}

static DBusHandlerResult on_signal(DBusConnection *connection, DBusMessage *message, void *context) {
    (void)connection; (void)context;
    if (!dbus_message_is_signal(message, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged"))
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    DBusMessageIter args, changed, entry, variant, array;
    const char *interface = NULL;
    if (!dbus_message_iter_init(message, &args)) return DBUS_HANDLER_RESULT_HANDLED;
    dbus_message_iter_get_basic(&args, &interface);
    if (strcmp(interface, "org.bluez.GattCharacteristic1") != 0) return DBUS_HANDLER_RESULT_HANDLED;
    dbus_message_iter_next(&args);
    dbus_message_iter_recurse(&args, &changed);
    while (dbus_message_iter_get_arg_type(&changed) == DBUS_TYPE_DICT_ENTRY) {
        const char *key = NULL;
        dbus_message_iter_recurse(&changed, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "Value") == 0) {
            dbus_message_iter_next(&entry);
            dbus_message_iter_recurse(&entry, &variant);
            dbus_message_iter_recurse(&variant, &array);
            const unsigned char *bytes = NULL;
            int length = 0;
            dbus_message_iter_get_fixed_array(&array, &bytes, &length);
            relay_value(dbus_message_get_path(message), bytes, length);
        }
        dbus_message_iter_next(&changed);
    }
    return DBUS_HANDLER_RESULT_HANDLED;
}

/* Calls a no-argument (or one-string-argument) method and waits for the reply. */
static int call(DBusConnection *bus, const char *path, const char *interface, const char *method, int timeout_ms) {
    DBusMessage *message = dbus_message_new_method_call("org.bluez", path, interface, method);
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, message, timeout_ms, &error);
    dbus_message_unref(message);
    if (!reply) {
        fprintf(stderr, "relay: %s.%s on %s: %s\n", interface, method, path, error.message);
        dbus_error_free(&error);
        return -1;
    }
    dbus_message_unref(reply);
    return 0;
}

/* Finds the object path of the load characteristic under `device_path` (after service resolution). */
static int find_characteristic(DBusConnection *bus, const char *device_path, char *out, size_t size) {
    DBusMessage *message = dbus_message_new_method_call("org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects");
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, message, 5000, NULL);
    dbus_message_unref(message);
    if (!reply) return -1;
    int found = -1;
    DBusMessageIter args, objects, object, interfaces, interface, properties, property, variant;
    dbus_message_iter_init(reply, &args);
    dbus_message_iter_recurse(&args, &objects);
    size_t prefix = strlen(device_path);
    while (found < 0 && dbus_message_iter_get_arg_type(&objects) == DBUS_TYPE_DICT_ENTRY) {
        const char *path = NULL;
        dbus_message_iter_recurse(&objects, &object);
        dbus_message_iter_get_basic(&object, &path);
        if (strncmp(path, device_path, prefix) == 0 && path[prefix] == '/') {
            dbus_message_iter_next(&object);
            dbus_message_iter_recurse(&object, &interfaces);
            while (dbus_message_iter_get_arg_type(&interfaces) == DBUS_TYPE_DICT_ENTRY) {
                const char *name = NULL;
                dbus_message_iter_recurse(&interfaces, &interface);
                dbus_message_iter_get_basic(&interface, &name);
                if (strcmp(name, "org.bluez.GattCharacteristic1") == 0) {
                    dbus_message_iter_next(&interface);
                    dbus_message_iter_recurse(&interface, &properties);
                    while (dbus_message_iter_get_arg_type(&properties) == DBUS_TYPE_DICT_ENTRY) {
                        const char *key = NULL;
                        dbus_message_iter_recurse(&properties, &property);
                        dbus_message_iter_get_basic(&property, &key);
                        if (strcmp(key, "UUID") == 0) {
                            const char *uuid = NULL;
                            dbus_message_iter_next(&property);
                            dbus_message_iter_recurse(&property, &variant);
                            dbus_message_iter_get_basic(&variant, &uuid);
                            if (strcasecmp(uuid, LOAD_CHARACTERISTIC) == 0) {
                                snprintf(out, size, "%s", path);
                                found = 0;
                            }
                        }
                        dbus_message_iter_next(&properties);
                    }
                }
                dbus_message_iter_next(&interfaces);
            }
        }
        dbus_message_iter_next(&objects);
    }
    dbus_message_unref(reply);
    return found;
}

int main(int argc, char **argv) {
    if (argc != 5) die("usage", "relay BUS_ADDRESS BROKER_PORT OUTBOX_PATH DEVICES");
    int devices = atoi(argv[4]);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);

    if (sqlite3_open(argv[3], &db) != SQLITE_OK) die("sqlite open", sqlite3_errmsg(db));
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                     "CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, payload BLOB NOT NULL);",
                 NULL, NULL, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO outbox (topic, payload) VALUES (?, ?)", -1, &insert_row, NULL);
    sqlite3_prepare_v2(db, "DELETE FROM outbox WHERE id = ?", -1, &delete_row, NULL);

    mosquitto_lib_init();
    mqtt = mosquitto_new("blebridge-relay", true, NULL);
    mosquitto_int_option(mqtt, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
    mosquitto_max_inflight_messages_set(mqtt, 0);
    mosquitto_publish_callback_set(mqtt, on_publish);
    if (mosquitto_connect(mqtt, "127.0.0.1", atoi(argv[2]), 30) != MOSQ_ERR_SUCCESS) die("mqtt connect", argv[2]);
    mosquitto_loop_start(mqtt);

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *bus = dbus_connection_open_private(argv[1], &error);
    if (!bus || !dbus_bus_register(bus, &error)) die("dbus", error.message);
    dbus_bus_add_match(bus, "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='org.bluez.GattCharacteristic1'", &error);
    dbus_connection_add_filter(bus, on_signal, NULL, NULL);

    call(bus, "/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery", 5000);
    for (int index = 0; index < devices; index++) {
        char device[128], characteristic[256];
        snprintf(device, sizeof device, "/org/bluez/hci0/dev_C0_FF_EE_10_%02X_%02X", index >> 8, index & 0xFF);
        int attempts = 0;
        while (call(bus, device, "org.bluez.Device1", "Connect", 30000) != 0) {
            if (++attempts > 50) die("connect", device);
            usleep(200000);
        }
        attempts = 0;
        while (find_characteristic(bus, device, characteristic, sizeof characteristic) != 0) {
            if (++attempts > 100) die("services", device);
            usleep(50000);
        }
        if (call(bus, characteristic, "org.bluez.GattCharacteristic1", "StartNotify", 5000) != 0) die("notify", characteristic);
    }
    call(bus, "/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery", 5000);
    printf("ready\n");
    fflush(stdout);
    while (running && dbus_connection_read_write_dispatch(bus, 100)) {}
    mosquitto_disconnect(mqtt);
    mosquitto_loop_stop(mqtt, false);
    dbus_connection_close(bus);
    sqlite3_finalize(insert_row);
    sqlite3_finalize(delete_row);
    sqlite3_close(db);
    return 0;
}
