/* Baseline for the DBus benchmark: a minimal libdbus receiver of BlueZ-shaped
 * PropertiesChanged signals (s, a{sv} with Value: ay, as), decoding every field.
 * Usage: receiver <bus address> <count>. Prints READY once the match rule is active,
 * then, after <count> signals: "c <count> <seconds> <signals/s> <cpu seconds> <checksum>". */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

/* Decodes one signal completely; returns 0 when it is not the expected shape. */
static int decode(DBusMessage *message, unsigned long *checksum) {
    DBusMessageIter args, dict, entry, variant, bytes, strings;
    const char *text;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return 0;
    dbus_message_iter_get_basic(&args, &text);
    *checksum += (unsigned char)text[0];
    if (!dbus_message_iter_next(&args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return 0;
    dbus_message_iter_recurse(&args, &dict);
    while (dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY) {
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &text);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (strcmp(text, "Value") == 0 && dbus_message_iter_get_arg_type(&variant) == DBUS_TYPE_ARRAY) {
            const unsigned char *value;
            unsigned char copy[512];
            int length = 0;
            dbus_message_iter_recurse(&variant, &bytes);
            dbus_message_iter_get_fixed_array(&bytes, &value, &length);
            if (length > (int)sizeof copy) length = sizeof copy;
            memcpy(copy, value, length); /* the application keeps the value */
            if (length > 0) *checksum += copy[0];
        }
        dbus_message_iter_next(&dict);
    }
    if (!dbus_message_iter_next(&args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return 0;
    dbus_message_iter_recurse(&args, &strings);
    while (dbus_message_iter_get_arg_type(&strings) == DBUS_TYPE_STRING) {
        dbus_message_iter_get_basic(&strings, &text);
        *checksum += (unsigned char)text[0];
        dbus_message_iter_next(&strings);
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <address> <count>\n", argv[0]);
        return 2;
    }
    long count = atol(argv[2]);
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(argv[1], &error);
    if (!connection || !dbus_bus_register(connection, &error)) {
        fprintf(stderr, "connect: %s\n", error.message);
        return 1;
    }
    dbus_bus_add_match(connection,
                       "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                       "path_namespace='/org/bluez',arg0='org.bluez.GattCharacteristic1'",
                       &error);
    if (dbus_error_is_set(&error)) {
        fprintf(stderr, "match: %s\n", error.message);
        return 1;
    }
    printf("READY\n");
    fflush(stdout);
    long received = 0;
    unsigned long checksum = 0;
    double start = 0, cpuStart = 0;
    while (received < count && dbus_connection_read_write(connection, -1)) {
        DBusMessage *message;
        while (received < count && (message = dbus_connection_pop_message(connection)) != NULL) {
            if (dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged")) {
                if (received == 0) {
                    start = now();
                    cpuStart = cpu();
                }
                if (!decode(message, &checksum)) {
                    fprintf(stderr, "unexpected signal shape\n");
                    return 1;
                }
                received++;
            }
            dbus_message_unref(message);
        }
    }
    double seconds = now() - start;
    printf("c %ld %.3f %.0f %.3f %lu\n", received, seconds, received / seconds, cpu() - cpuStart, checksum);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return received == count ? 0 : 1;
}
