/* Emits <count> BlueZ-shaped PropertiesChanged signals (s, a{sv} with Value: ay of 20 bytes,
 * as) from /org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011, as fast as the bus takes
 * them. Usage: emitter <bus address> <count>. */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>

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
    const char *interface = "org.bluez.GattCharacteristic1";
    const char *key = "Value";
    unsigned char value[20];
    for (long i = 0; i < count; i++) {
        DBusMessage *message = dbus_message_new_signal("/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011",
                                                       "org.freedesktop.DBus.Properties", "PropertiesChanged");
        DBusMessageIter args, dict, entry, variant, bytes, strings;
        const unsigned char *pointer = value;
        for (int b = 0; b < 20; b++) value[b] = (unsigned char)(i + b);
        dbus_message_iter_init_append(message, &args);
        dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &interface);
        dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &dict);
        dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
        dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "ay", &variant);
        dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "y", &bytes);
        dbus_message_iter_append_fixed_array(&bytes, DBUS_TYPE_BYTE, &pointer, 20);
        dbus_message_iter_close_container(&variant, &bytes);
        dbus_message_iter_close_container(&entry, &variant);
        dbus_message_iter_close_container(&dict, &entry);
        dbus_message_iter_close_container(&args, &dict);
        dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "s", &strings);
        dbus_message_iter_close_container(&args, &strings);
        dbus_connection_send(connection, message, NULL);
        dbus_message_unref(message);
        if (i % 256 == 255) dbus_connection_flush(connection);
    }
    dbus_connection_flush(connection);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
