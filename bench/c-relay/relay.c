/* The benchmark's ceiling: the gateway's hot path in plain C.
 *
 * BlueZ-shaped PropertiesChanged signal (org.bluez.GattCharacteristic1, Value: ay) on a D-Bus bus,
 * or (--acquire-notify N) one AcquireNotify socket per load device, as the gateway reads them: the
 * relay then finds N load devices itself, connects them and acquires their characteristic
 * (bluez_setup.h), and epoll reads every socket, one notification per packet
 *   → row in a SQLite WAL outbox (synchronous=NORMAL; every signal read in one wake-up goes in one
 *     transaction)
 *   → MQTT QoS 1 publish of {"raw_hex":"<value>","ts":"<arrival, ISO 8601>"} on <base>/<dev_…>
 *   → row deleted when the broker's PUBACK arrives (acknowledged rows are deleted in batches).
 *
 * One thread reads D-Bus (or the sockets), writes SQLite and publishes; libmosquitto's own thread runs the network
 * loop and hands PUBACKs back through a mutex-protected list and an eventfd.
 *
 * --memory: the same without the outbox, a floor for what any program costs that reads each notification, publishes
 * it at QoS 1 and reads its PUBACK: no SQLite at all, and the PUBACKs only counted on libmosquitto's thread (no
 * hand-back). Nothing is kept across a broker outage or a kill. --memory --one-thread: the same on one thread, with
 * no libmosquitto thread: the MQTT socket joins the relay's epoll (mosquitto_loop_read on its readiness), and each
 * publish is written on the relay's thread as libmosquitto does unthreaded, so nothing is handed between threads.
 *
 *   relay --address unix:path=… (--db outbox.sqlite | --memory) --port 1883 [--host 127.0.0.1]
 *         [--base-topic blebridge] [--inflight 64] [--client-id relay]
 *         [--acquire-notify N [--prefix C0:FF:EE:10:] [--uuid …] [--adapter /org/bluez/hci0]]
 * Runs until SIGTERM/SIGINT, then prints: received=<n> published=<n> acked=<n> outbox_depth=<rows>
 */
#include "bluez_setup.h"

#include <dbus/dbus.h>
#include <errno.h>
#include <mosquitto.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t stopping = 0;
static void on_signal(int signo) {
    (void)signo;
    stopping = 1;
}

/* PUBACKs from the mosquitto thread; mids are 16-bit, the main thread maps them to row ids. */
static pthread_mutex_t acked_lock = PTHREAD_MUTEX_INITIALIZER;
static int *acked_mids;
static size_t acked_count, acked_capacity;
static int wake_fd;
static volatile int connected_flag;
/* --memory: PUBACKs counted here, on libmosquitto's thread. */
static int memory_only;
static int one_thread;
static unsigned long long memory_acked;

static void on_publish(struct mosquitto *mosq, void *user, int mid) {
    (void)mosq;
    (void)user;
    if (memory_only) {
        __atomic_add_fetch(&memory_acked, 1, __ATOMIC_RELAXED);
        return;
    }
    pthread_mutex_lock(&acked_lock);
    if (acked_count == acked_capacity) {
        acked_capacity = acked_capacity ? acked_capacity * 2 : 1024;
        acked_mids = realloc(acked_mids, acked_capacity * sizeof *acked_mids);
        if (!acked_mids) die("relay", "out of memory");
    }
    acked_mids[acked_count++] = mid;
    pthread_mutex_unlock(&acked_lock);
    uint64_t one = 1;
    if (write(wake_fd, &one, sizeof one) < 0 && errno != EAGAIN) die("relay: eventfd", strerror(errno));
}

static void on_connect(struct mosquitto *mosq, void *user, int rc) {
    (void)mosq;
    (void)user;
    if (rc == 0) connected_flag = 1;
}

static void check_sqlite(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) die(what, sqlite3_errmsg(db));
}

static void exec_sql(sqlite3 *db, const char *sql) {
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) die(sql, message);
}

struct pending {
    char topic[128];
    char payload[128];
    int payload_length;
    sqlite3_int64 row;
};

/* Extracts Value (ay) from a GattCharacteristic1 PropertiesChanged signal; 0 when not one. */
static int value_of(DBusMessage *message, const uint8_t **bytes, int *length) {
    DBusMessageIter args, dict, entry, variant, array;
    const char *interface;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return 0;
    dbus_message_iter_get_basic(&args, &interface);
    if (strcmp(interface, "org.bluez.GattCharacteristic1") != 0) return 0;
    if (!dbus_message_iter_next(&args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return 0;
    for (dbus_message_iter_recurse(&args, &dict); dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&dict)) {
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "Value") != 0) continue;
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY ||
            dbus_message_iter_get_element_type(&variant) != DBUS_TYPE_BYTE)
            return 0;
        dbus_message_iter_recurse(&variant, &array);
        dbus_message_iter_get_fixed_array(&array, bytes, length);
        return 1;
    }
    return 0;
}

/* "<base>/dev_C0_FF_EE_10_00_01" from "/org/bluez/hci0/dev_C0_FF_EE_10_00_01/service…/char…". */
static void topic_of(const char *base, const char *path, char *out, size_t size) {
    const char *device = strstr(path, "/dev_");
    if (!device) {
        snprintf(out, size, "%s/unknown", base);
        return;
    }
    device++;
    size_t length = strcspn(device, "/");
    snprintf(out, size, "%s/%.*s", base, (int)length, device);
}

static int format_payload(const uint8_t *bytes, int length, char *out, size_t size) {
    static const char digits[] = "0123456789abcdef";
    char hex[2 * 64 + 1];
    if (length > 64) length = 64;
    for (int i = 0; i < length; i++) {
        hex[2 * i] = digits[bytes[i] >> 4];
        hex[2 * i + 1] = digits[bytes[i] & 0xF];
    }
    hex[2 * length] = 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    return snprintf(out, size, "{\"raw_hex\":\"%s\",\"ts\":\"%s.%03ldZ\"}", hex, stamp, now.tv_nsec / 1000000);
}

static struct pending *batch;
static size_t batch_count, batch_capacity = 4096;

/* One value into this wake-up's batch (one transaction). */
static void add_pending(const char *base, const char *path, const uint8_t *bytes, int length) {
    if (batch_count == batch_capacity) {
        batch_capacity *= 2;
        batch = realloc(batch, batch_capacity * sizeof *batch);
        if (!batch) die("relay", "out of memory");
    }
    struct pending *item = &batch[batch_count++];
    topic_of(base, path, item->topic, sizeof item->topic);
    item->payload_length = format_payload(bytes, length, item->payload, sizeof item->payload);
}

/* --acquire-notify: one socket per characteristic and the device path it is from. */
struct notify_socket {
    int fd;
    char path[256];
};

int main(int argc, char **argv) {
    const char *address = arg_string(argc, argv, "--address", NULL);
    const char *db_path = arg_string(argc, argv, "--db", NULL);
    const char *host = arg_string(argc, argv, "--host", "127.0.0.1");
    int port = (int)arg_double(argc, argv, "--port", 1883);
    const char *base = arg_string(argc, argv, "--base-topic", "blebridge");
    int inflight = (int)arg_double(argc, argv, "--inflight", 64);
    const char *client_id = arg_string(argc, argv, "--client-id", "relay");
    int acquire = (int)arg_double(argc, argv, "--acquire-notify", 0);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--memory") == 0) memory_only = 1;
        else if (strcmp(argv[i], "--one-thread") == 0) one_thread = 1;
    if (one_thread && !memory_only) die("usage", "--one-thread needs --memory");
    if (!address || (!db_path && !memory_only)) die("usage", "relay --address ADDR (--db PATH | --memory) --port PORT");

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) die("relay: eventfd", strerror(errno));

    /* Outbox (--memory: an in-memory database nothing is written to, so the code below stays one). */
    sqlite3 *db;
    if (memory_only) db_path = ":memory:";
    if (sqlite3_open(db_path, &db) != SQLITE_OK) die("relay: sqlite open", sqlite3_errmsg(db));
    exec_sql(db, "PRAGMA journal_mode=WAL");
    exec_sql(db, "PRAGMA synchronous=NORMAL");
    exec_sql(db, "CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, "
                 "payload BLOB NOT NULL, qos INTEGER NOT NULL, sample_time INTEGER NOT NULL)");
    sqlite3_stmt *insert, *delete, *begin, *commit;
    check_sqlite(sqlite3_prepare_v2(db, "INSERT INTO outbox (topic, payload, qos, sample_time) VALUES (?, ?, 1, ?)",
                                    -1, &insert, NULL),
                 db, "prepare insert");
    check_sqlite(sqlite3_prepare_v2(db, "DELETE FROM outbox WHERE id = ?", -1, &delete, NULL), db, "prepare delete");
    check_sqlite(sqlite3_prepare_v2(db, "BEGIN", -1, &begin, NULL), db, "prepare begin");
    check_sqlite(sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL), db, "prepare commit");

    /* MQTT. */
    mosquitto_lib_init();
    struct mosquitto *mosq = mosquitto_new(client_id, true, NULL);
    if (!mosq) die("relay", "mosquitto_new failed");
    mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, inflight); /* MQTT 5: in flight at once */
    mosquitto_publish_callback_set(mosq, on_publish);
    mosquitto_connect_callback_set(mosq, on_connect);
    int rc = mosquitto_connect(mosq, host, port, 30);
    if (rc != MOSQ_ERR_SUCCESS) die("relay: mqtt connect", mosquitto_strerror(rc));
    if (one_thread) {
        for (int i = 0; i < 500 && !connected_flag; i++)
            if ((rc = mosquitto_loop(mosq, 10, 1)) != MOSQ_ERR_SUCCESS) die("relay: loop", mosquitto_strerror(rc));
    } else {
        if ((rc = mosquitto_loop_start(mosq)) != MOSQ_ERR_SUCCESS) die("relay: loop", mosquitto_strerror(rc));
        for (int i = 0; i < 500 && !connected_flag; i++) usleep(10000);
    }
    if (!connected_flag) die("relay", "no CONNACK");

    /* D-Bus. */
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection || !dbus_bus_register(connection, &error)) die("relay: dbus connect", error.message);
    int dbus_fd;
    if (!dbus_connection_get_unix_fd(connection, &dbus_fd)) die("relay", "no D-Bus fd");
    int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) die("relay: epoll", strerror(errno));
    /* data.u32: 0 D-Bus, 1 the PUBACK eventfd, 2 + i the notify socket i. */
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = 0};
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, dbus_fd, &event) < 0) die("relay: epoll_ctl", strerror(errno));
    event.data.u32 = 1;
    if (!memory_only && epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &event) < 0) die("relay: epoll_ctl", strerror(errno));
    /* --one-thread: slot 1 is the MQTT socket (the eventfd is not used without the outbox). */
    if (one_thread && epoll_ctl(epoll_fd, EPOLL_CTL_ADD, mosquitto_socket(mosq), &event) < 0)
        die("relay: epoll_ctl", strerror(errno));
    static struct notify_socket sockets[MAX_OBJECTS];
    int socket_count = 0;
    if (acquire > 0) {
        static struct found characteristics[MAX_OBJECTS];
        int found = bluez_load_characteristics(connection, arg_string(argc, argv, "--prefix", "C0:FF:EE:10:"),
                                               arg_string(argc, argv, "--uuid", "6b1e2002-3c4d-4e5f-8a9b-0c1d2e3f4a5b"),
                                               arg_string(argc, argv, "--adapter", "/org/bluez/hci0"), acquire, 90,
                                               &stopping, characteristics);
        for (int j = 0; j < found; j++) {
            DBusMessage *call = dbus_message_new_method_call("org.bluez", characteristics[j].path,
                                                             "org.bluez.GattCharacteristic1", "AcquireNotify");
            DBusMessageIter args, options;
            dbus_message_iter_init_append(call, &args);
            dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &options);
            dbus_message_iter_close_container(&args, &options);
            DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, call, 25000, &error);
            dbus_message_unref(call);
            int fd;
            uint16_t mtu;
            if (!reply || !dbus_message_get_args(reply, &error, DBUS_TYPE_UNIX_FD, &fd, DBUS_TYPE_UINT16, &mtu,
                                                 DBUS_TYPE_INVALID))
                die("relay: AcquireNotify", error.message);
            dbus_message_unref(reply);
            sockets[socket_count].fd = fd;
            memcpy(sockets[socket_count].path, characteristics[j].path, sizeof sockets[socket_count].path);
            event.data.u32 = 2 + (uint32_t)socket_count++;
            if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) < 0) die("relay: epoll_ctl", strerror(errno));
        }
    } else {
        dbus_bus_add_match(connection,
                           "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                           "path_namespace='/org/bluez',arg0='org.bluez.GattCharacteristic1'",
                           &error);
        if (dbus_error_is_set(&error)) die("relay: add match", error.message);
    }
    printf("ready\n");
    fflush(stdout);

    static sqlite3_int64 row_of_mid[65536];
    batch = malloc(batch_capacity * sizeof *batch);
    int *mids = NULL;
    size_t mids_capacity = 0;
    unsigned long long received = 0, published = 0, acked = 0;
    while (!stopping) {
        struct epoll_event ready[64];
        int events = epoll_wait(epoll_fd, ready, 64, 200);
        if (events < 0 && errno != EINTR) die("relay: epoll_wait", strerror(errno));

        /* Every value available now: one transaction, then publish each. */
        batch_count = 0;
        for (int e = 0; e < events; e++) {
            uint32_t source = ready[e].data.u32;
            if (source == 1 && one_thread) {
                if ((rc = mosquitto_loop_read(mosq, 1)) != MOSQ_ERR_SUCCESS) die("relay: mqtt read", mosquitto_strerror(rc));
                continue;
            }
            if (source < 2) continue;
            struct notify_socket *notify = &sockets[source - 2];
            if (notify->fd < 0) continue;
            uint8_t packet[512];
            ssize_t length;
            while ((length = recv(notify->fd, packet, sizeof packet, MSG_DONTWAIT)) > 0)
                add_pending(base, notify->path, packet, (int)length);
            if (length == 0 || (length < 0 && errno != EAGAIN && errno != EINTR)) {
                epoll_ctl(epoll_fd, EPOLL_CTL_DEL, notify->fd, NULL);
                close(notify->fd);
                notify->fd = -1;
                fprintf(stderr, "relay: notify socket of %s closed\n", notify->path);
            }
        }
        dbus_connection_read_write(connection, 0);
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection))) {
            const uint8_t *bytes;
            int length;
            if (dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged") &&
                value_of(message, &bytes, &length))
                add_pending(base, dbus_message_get_path(message), bytes, length);
            dbus_message_unref(message);
        }
        size_t count = batch_count;
        if (count > 0 && memory_only) {
            received += count;
            for (size_t i = 0; i < count; i++) {
                rc = mosquitto_publish(mosq, NULL, batch[i].topic, batch[i].payload_length, batch[i].payload, 1, false);
                if (rc != MOSQ_ERR_SUCCESS) die("relay: publish", mosquitto_strerror(rc));
                published++;
            }
        } else if (count > 0) {
            received += count;
            check_sqlite(sqlite3_step(begin), db, "begin");
            sqlite3_reset(begin);
            for (size_t i = 0; i < count; i++) {
                sqlite3_bind_text(insert, 1, batch[i].topic, -1, SQLITE_STATIC);
                sqlite3_bind_blob(insert, 2, batch[i].payload, batch[i].payload_length, SQLITE_STATIC);
                sqlite3_bind_int64(insert, 3, (sqlite3_int64)realtime_ns());
                check_sqlite(sqlite3_step(insert), db, "insert");
                sqlite3_reset(insert);
                batch[i].row = sqlite3_last_insert_rowid(db);
            }
            check_sqlite(sqlite3_step(commit), db, "commit");
            sqlite3_reset(commit);
            for (size_t i = 0; i < count; i++) {
                int mid;
                rc = mosquitto_publish(mosq, &mid, batch[i].topic, batch[i].payload_length, batch[i].payload, 1, false);
                if (rc != MOSQ_ERR_SUCCESS) die("relay: publish", mosquitto_strerror(rc));
                row_of_mid[mid & 0xFFFF] = batch[i].row;
                published++;
            }
        }

        if (one_thread) {
            if (mosquitto_want_write(mosq) && (rc = mosquitto_loop_write(mosq, 1)) != MOSQ_ERR_SUCCESS)
                die("relay: mqtt write", mosquitto_strerror(rc));
            mosquitto_loop_misc(mosq);
        }
        if (memory_only) continue;
        /* PUBACKs: delete their rows in one transaction. */
        uint64_t counter;
        if (read(wake_fd, &counter, sizeof counter) < 0 && errno != EAGAIN) die("relay: eventfd", strerror(errno));
        pthread_mutex_lock(&acked_lock);
        size_t acks = acked_count;
        if (acks > mids_capacity) {
            mids_capacity = acks * 2;
            mids = realloc(mids, mids_capacity * sizeof *mids);
            if (!mids) die("relay", "out of memory");
        }
        if (acks) memcpy(mids, acked_mids, acks * sizeof *mids);
        acked_count = 0;
        pthread_mutex_unlock(&acked_lock);
        if (acks > 0) {
            check_sqlite(sqlite3_step(begin), db, "begin");
            sqlite3_reset(begin);
            for (size_t i = 0; i < acks; i++) {
                sqlite3_bind_int64(delete, 1, row_of_mid[mids[i] & 0xFFFF]);
                check_sqlite(sqlite3_step(delete), db, "delete");
                sqlite3_reset(delete);
            }
            check_sqlite(sqlite3_step(commit), db, "commit");
            sqlite3_reset(commit);
            acked += acks;
        }
    }

    if (memory_only) acked = __atomic_load_n(&memory_acked, __ATOMIC_RELAXED);
    sqlite3_stmt *depth;
    check_sqlite(sqlite3_prepare_v2(db, "SELECT count(*) FROM outbox", -1, &depth, NULL), db, "prepare count");
    check_sqlite(sqlite3_step(depth), db, "count");
    printf("received=%llu published=%llu acked=%llu outbox_depth=%lld\n", received, published, acked,
           (long long)sqlite3_column_int64(depth, 0));
    fflush(stdout);
    sqlite3_finalize(depth);
    mosquitto_disconnect(mosq);
    if (!one_thread) mosquitto_loop_stop(mosq, false);
    mosquitto_destroy(mosq);
    mosquitto_lib_cleanup();
    sqlite3_finalize(insert);
    sqlite3_finalize(delete);
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    sqlite3_close(db);
    for (int j = 0; j < socket_count; j++)
        if (sockets[j].fd >= 0) close(sockets[j].fd);
    close(epoll_fd);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    free(batch);
    free(mids);
    free(acked_mids);
    return 0;
}
