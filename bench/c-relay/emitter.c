/* Load source for the benchmark: plays org.bluez on a D-Bus bus and emits BlueZ-shaped
 * PropertiesChanged signals (interface org.bluez.GattCharacteristic1, a{sv} with Value: ay) for
 * N devices, each R times a second, for a fixed duration. Each value is a load value (device,
 * sequence, CLOCK_REALTIME send time). Sends are paced against absolute deadlines; when the bus
 * pushes back the emitter falls behind and reports the rate it achieved.
 *
 *   emitter --address unix:path=… --devices 50 --rate 20 --duration 5
 * prints: sent=<n> elapsed_s=<s> achieved=<n/s>
 */
#include "bench_common.h"

#include <dbus/dbus.h>

static void device_path(char *out, size_t size, unsigned index) {
    snprintf(out, size, "/org/bluez/hci0/dev_C0_FF_EE_10_%02X_%02X/service0010/char0011", (index >> 8) & 0xFF,
             index & 0xFF);
}

static DBusMessage *make_signal(const char *path, const uint8_t *bytes) {
    DBusMessage *message = dbus_message_new_signal(path, "org.freedesktop.DBus.Properties", "PropertiesChanged");
    if (!message) die("emitter", "out of memory");
    DBusMessageIter args, dict, entry, variant, array, invalidated;
    const char *interface = "org.bluez.GattCharacteristic1";
    const char *key = "Value";
    dbus_message_iter_init_append(message, &args);
    dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &interface);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &dict);
    dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant);
    dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "y", &array);
    dbus_message_iter_append_fixed_array(&array, DBUS_TYPE_BYTE, &bytes, LOAD_VALUE_LENGTH);
    dbus_message_iter_close_container(&variant, &array);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&dict, &entry);
    dbus_message_iter_close_container(&args, &dict);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "s", &invalidated);
    dbus_message_iter_close_container(&args, &invalidated);
    return message;
}

int main(int argc, char **argv) {
    const char *address = arg_string(argc, argv, "--address", NULL);
    const char *name = arg_string(argc, argv, "--name", "org.bluez");
    unsigned devices = (unsigned)arg_double(argc, argv, "--devices", 50);
    double rate = arg_double(argc, argv, "--rate", 20);
    double duration = arg_double(argc, argv, "--duration", 5);
    if (!address || devices == 0 || devices > 65536 || rate <= 0 || duration <= 0)
        die("usage", "emitter --address ADDR --devices N --rate HZ --duration S [--name org.bluez]");

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection || !dbus_bus_register(connection, &error)) die("emitter: connect", error.message);
    int reply = dbus_bus_request_name(connection, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    if (reply != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) die("emitter: cannot own name", name);

    char (*paths)[96] = calloc(devices, sizeof *paths);
    uint64_t *sequences = calloc(devices, sizeof *sequences);
    if (!paths || !sequences) die("emitter", "out of memory");
    for (unsigned i = 0; i < devices; i++) device_path(paths[i], sizeof paths[i], i);

    const double total_rate = rate * devices;
    const uint64_t start = monotonic_ns();
    const uint64_t end = start + (uint64_t)(duration * 1e9);
    uint64_t sent = 0;
    unsigned next_device = 0;
    for (;;) {
        uint64_t now = monotonic_ns();
        if (now >= end) break;
        /* Every message whose deadline has passed goes out now (device round robin). */
        uint64_t due = (uint64_t)((double)(now - start) * total_rate / 1e9) + 1;
        int queued = 0;
        while (sent < due) {
            struct load_value value = {next_device, ++sequences[next_device], realtime_ns()};
            uint8_t bytes[LOAD_VALUE_LENGTH];
            load_value_encode(&value, bytes);
            DBusMessage *message = make_signal(paths[next_device], bytes);
            if (!dbus_connection_send(connection, message, NULL)) die("emitter", "send failed");
            dbus_message_unref(message);
            sent++;
            queued = 1;
            next_device = (next_device + 1) % devices;
        }
        if (queued) dbus_connection_flush(connection);
        uint64_t next_deadline = start + (uint64_t)((double)sent * 1e9 / total_rate);
        now = monotonic_ns();
        if (next_deadline > now + 20000) {
            uint64_t wake = next_deadline < end ? next_deadline : end;
            struct timespec until = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
        }
    }
    dbus_connection_flush(connection);
    double elapsed = (double)(monotonic_ns() - start) / 1e9;
    printf("sent=%llu elapsed_s=%.3f achieved=%.0f\n", (unsigned long long)sent, elapsed, (double)sent / elapsed);
    fflush(stdout);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
