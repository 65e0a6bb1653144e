/* Measuring subscriber: subscribes (QoS 1) to the reading topics and, for every message whose
 * payload carries a load value as 40 hex digits in a JSON string (the relay's and the gateway's
 * "raw_hex"), or as the raw 20 bytes, takes latency = arrival time − embedded send time
 * (both CLOCK_REALTIME, same machine). Values sent before --since are ignored (stragglers of an
 * earlier phase). SIGUSR1: the load has ended; exit once nothing arrived for --idle-ms (or after
 * --drain-max-ms). SIGTERM: exit now.
 *
 *   subscriber --port 1883 --topic 'blebridge/+' --since <realtime ns> [--host 127.0.0.1]
 * prints "ready" once subscribed, and at the end one line of key=value results.
 */
#include "bench_common.h"

#include <ctype.h>
#include <mosquitto.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#define MAX_DEVICES 65536

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *latencies_us; /* one per unique value, in arrival order */
static size_t latency_count, latency_capacity;
static uint64_t *first_sequence, *last_sequence; /* per device, in this phase: lowest and newest value */
/* Per device, a bitmap of the sequences received, from seen_base (SEEN_BELOW under the device's
 * first value): a value re-sent after newer ones (an outbox's at-least-once re-send) is a duplicate,
 * not a new value. Until 2026-12-07 only a repeat of the device's newest value was one, so re-sends
 * counted as unique values and could mask as many losses. */
#define SEEN_BELOW 65536
static uint8_t **seen_map;
static uint64_t *seen_base;
static size_t *seen_bytes;
static unsigned long long messages, foreign, stale, duplicates, reordered, unchecked;
static uint64_t first_arrival, last_arrival; /* realtime ns of the first/last counted value */
static uint64_t since_ns;
static unsigned long long devices_seen;
static volatile int subscribed;
static volatile sig_atomic_t draining, stop_now;

static void on_usr1(int signo) {
    (void)signo;
    draining = 1;
}
static void on_term(int signo) {
    (void)signo;
    stop_now = 1;
}

static int hex_digit(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Finds the load value: a JSON string of exactly 40 hex digits, or the raw 20 bytes. */
static int extract(const uint8_t *payload, int length, uint8_t out[LOAD_VALUE_LENGTH]) {
    for (int i = 0; i + 41 < length; i++) {
        if (payload[i] != '"') continue;
        int j = i + 1;
        while (j < length && hex_digit(payload[j]) >= 0) j++;
        if (j - (i + 1) == 2 * LOAD_VALUE_LENGTH && j < length && payload[j] == '"') {
            for (int k = 0; k < LOAD_VALUE_LENGTH; k++)
                out[k] = (uint8_t)(hex_digit(payload[i + 1 + 2 * k]) << 4 | hex_digit(payload[i + 2 + 2 * k]));
            return 1;
        }
        i = j - 1;
    }
    if (length == LOAD_VALUE_LENGTH && payload[0] != '{') {
        memcpy(out, payload, LOAD_VALUE_LENGTH);
        return 1;
    }
    return 0;
}

/* Marks `sequence` as received for `device`; 0 when it was received before. A sequence more than
 * SEEN_BELOW under the device's first one cannot be checked: it counts as new (and in `unchecked`). */
static int seen_insert(uint32_t device, uint64_t sequence) {
    if (!seen_map[device]) seen_base[device] = sequence > SEEN_BELOW ? sequence - SEEN_BELOW : 0;
    if (sequence < seen_base[device]) {
        unchecked++;
        return 1;
    }
    uint64_t offset = sequence - seen_base[device];
    size_t byte = (size_t)(offset / 8);
    if (byte >= seen_bytes[device]) {
        size_t size = seen_bytes[device] ? seen_bytes[device] : 2 * SEEN_BELOW / 8;
        while (size <= byte) size *= 2;
        uint8_t *grown = realloc(seen_map[device], size);
        if (!grown) die("subscriber", "out of memory");
        memset(grown + seen_bytes[device], 0, size - seen_bytes[device]);
        seen_map[device] = grown;
        seen_bytes[device] = size;
    }
    uint8_t bit = (uint8_t)(1u << (offset % 8));
    if (seen_map[device][byte] & bit) return 0;
    seen_map[device][byte] |= bit;
    return 1;
}

static void on_message(struct mosquitto *mosq, void *user, const struct mosquitto_message *message) {
    (void)mosq;
    (void)user;
    uint64_t now = realtime_ns();
    uint8_t bytes[LOAD_VALUE_LENGTH];
    pthread_mutex_lock(&lock);
    messages++;
    struct load_value value;
    if (!extract(message->payload, message->payloadlen, bytes)) {
        foreign++;
    } else if (load_value_decode(bytes, &value), value.timestamp_ns < since_ns || value.device >= MAX_DEVICES) {
        stale++;
    } else if (!seen_insert(value.device, value.sequence)) {
        duplicates++;
    } else {
        if (last_sequence[value.device] == 0) {
            devices_seen++;
            first_sequence[value.device] = value.sequence;
        }
        /* A first delivery older than one already received: the order of the device's values changed. */
        if (value.sequence < last_sequence[value.device]) {
            reordered++;
            if (value.sequence < first_sequence[value.device]) first_sequence[value.device] = value.sequence;
        } else {
            last_sequence[value.device] = value.sequence;
        }
        if (latency_count == latency_capacity) {
            latency_capacity = latency_capacity ? latency_capacity * 2 : 1 << 20;
            latencies_us = realloc(latencies_us, latency_capacity * sizeof *latencies_us);
            if (!latencies_us) die("subscriber", "out of memory");
        }
        uint64_t latency = now > value.timestamp_ns ? (now - value.timestamp_ns) / 1000 : 0;
        latencies_us[latency_count++] = latency > UINT32_MAX ? UINT32_MAX : (uint32_t)latency;
        if (!first_arrival) first_arrival = now;
        last_arrival = now;
    }
    pthread_mutex_unlock(&lock);
}

static void on_connect(struct mosquitto *mosq, void *user, int rc) {
    const char *topic = user;
    if (rc != 0) die("subscriber: connect refused", mosquitto_connack_string(rc));
    mosquitto_subscribe(mosq, NULL, topic, 1);
}

static void on_subscribe(struct mosquitto *mosq, void *user, int mid, int count, const int *granted) {
    (void)mosq;
    (void)user;
    (void)mid;
    if (count < 1 || granted[0] > 2) die("subscriber", "subscription refused");
    subscribed = 1;
}

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static double percentile(const uint32_t *sorted, size_t count, double p) {
    if (count == 0) return 0;
    size_t index = (size_t)(p * (double)(count - 1) + 0.5);
    return sorted[index] / 1000.0;
}

int main(int argc, char **argv) {
    const char *host = arg_string(argc, argv, "--host", "127.0.0.1");
    int port = (int)arg_double(argc, argv, "--port", 1883);
    const char *topic = arg_string(argc, argv, "--topic", "blebridge/+");
    const char *since = arg_string(argc, argv, "--since", "0");
    double idle_ms = arg_double(argc, argv, "--idle-ms", 1000);
    double drain_max_ms = arg_double(argc, argv, "--drain-max-ms", 10000);
    unsigned long long wait_devices = (unsigned long long)arg_double(argc, argv, "--wait-devices", 0);
    double timeout_ms = arg_double(argc, argv, "--timeout-ms", 60000);
    since_ns = strtoull(since, NULL, 10);
    first_sequence = calloc(MAX_DEVICES, sizeof *first_sequence);
    last_sequence = calloc(MAX_DEVICES, sizeof *last_sequence);
    seen_map = calloc(MAX_DEVICES, sizeof *seen_map);
    seen_base = calloc(MAX_DEVICES, sizeof *seen_base);
    seen_bytes = calloc(MAX_DEVICES, sizeof *seen_bytes);

    struct sigaction action = {0};
    action.sa_handler = on_usr1;
    sigaction(SIGUSR1, &action, NULL);
    action.sa_handler = on_term;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);

    mosquitto_lib_init();
    char client_id[64];
    snprintf(client_id, sizeof client_id, "bench-subscriber-%d", (int)getpid());
    struct mosquitto *mosq = mosquitto_new(client_id, true, (void *)topic);
    if (!mosq) die("subscriber", "mosquitto_new failed");
    mosquitto_connect_callback_set(mosq, on_connect);
    mosquitto_subscribe_callback_set(mosq, on_subscribe);
    mosquitto_message_callback_set(mosq, on_message);
    int rc = mosquitto_connect(mosq, host, port, 30);
    if (rc != MOSQ_ERR_SUCCESS) die("subscriber: connect", mosquitto_strerror(rc));
    if ((rc = mosquitto_loop_start(mosq)) != MOSQ_ERR_SUCCESS) die("subscriber: loop", mosquitto_strerror(rc));
    for (int i = 0; i < 1000 && !subscribed; i++) usleep(10000);
    if (!subscribed) die("subscriber", "no SUBACK");
    printf("ready\n");
    fflush(stdout);

    uint64_t drain_started = 0, started = realtime_ns();
    int status = 0;
    while (!stop_now) {
        usleep(20000);
        if (wait_devices) {
            pthread_mutex_lock(&lock);
            unsigned long long seen = devices_seen;
            pthread_mutex_unlock(&lock);
            if (seen >= wait_devices) break;
            if ((double)(realtime_ns() - started) / 1e6 >= timeout_ms) {
                status = 2;
                break;
            }
            continue;
        }
        if (!draining) continue;
        uint64_t now = realtime_ns();
        if (!drain_started) drain_started = now;
        pthread_mutex_lock(&lock);
        uint64_t last = last_arrival;
        pthread_mutex_unlock(&lock);
        uint64_t quiet_since = last > drain_started ? last : drain_started;
        if ((double)(now - quiet_since) / 1e6 >= idle_ms || (double)(now - drain_started) / 1e6 >= drain_max_ms) break;
    }
    mosquitto_disconnect(mosq);
    mosquitto_loop_stop(mosq, false);

    pthread_mutex_lock(&lock);
    unsigned long long expected = 0;
    for (size_t device = 0; device < MAX_DEVICES; device++)
        if (last_sequence[device]) expected += last_sequence[device] - first_sequence[device] + 1;
    qsort(latencies_us, latency_count, sizeof *latencies_us, compare_u32);
    double span = last_arrival > first_arrival ? (double)(last_arrival - first_arrival) / 1e9 : 0;
    double drain_ms = drain_started && last_arrival > drain_started ? (double)(last_arrival - drain_started) / 1e6 : 0;
    printf("devices=%llu expected=%llu unique=%zu duplicates=%llu reordered=%llu unchecked=%llu stale=%llu foreign=%llu "
           "span_s=%.3f rate=%.0f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f drain_ms=%.0f\n",
           devices_seen, expected, latency_count, duplicates, reordered, unchecked, stale, foreign, span,
           span > 0 ? (double)latency_count / span : 0,
           percentile(latencies_us, latency_count, 0.50), percentile(latencies_us, latency_count, 0.90),
           percentile(latencies_us, latency_count, 0.99), percentile(latencies_us, latency_count, 0.999),
           latency_count ? latencies_us[latency_count - 1] / 1000.0 : 0, drain_ms);
    fflush(stdout);
    pthread_mutex_unlock(&lock);
    mosquitto_destroy(mosq);
    mosquitto_lib_cleanup();
    free(latencies_us);
    free(first_sequence);
    free(last_sequence);
    return status;
}
