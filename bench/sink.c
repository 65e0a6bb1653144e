/*
 * Benchmark subscriber: receives load-mode values (hex of the 20-byte LoadValue: device u32,
 * sequence u64, send time u64 ns CLOCK_REALTIME, little-endian) and measures end to end.
 *
 * usage: sink BROKER_PORT TOPIC_FILTER WARMUP_SECONDS MEASURE_SECONDS
 * Prints one line of JSON: received, rate, latency p50/p99/max (ms), gaps (lost sequence numbers).
 */
#include <mosquitto.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 4000000
#define MAX_DEVICES 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double *latencies;
static long samples, measuring, received_total;
static uint64_t last_sequence[MAX_DEVICES];
static long gaps;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Finds 40 consecutive hex digits in the payload (raw hex, or inside {"value":"…"}). */
static int extract(const char *payload, int length, unsigned char out[20]) {
    int run = 0;
    for (int i = 0; i < length; i++) {
        if (hex_value(payload[i]) >= 0) {
            if (++run == 40 && (i + 1 == length || hex_value(payload[i + 1]) < 0)) {
                const char *start = payload + i - 39;
                for (int j = 0; j < 20; j++) out[j] = (unsigned char)(hex_value(start[2 * j]) << 4 | hex_value(start[2 * j + 1]));
                return 0;
            }
        } else {
            run = 0;
        }
    }
    return -1;
}

static uint64_t little(const unsigned char *bytes, int width) {
    uint64_t value = 0;
    for (int i = 0; i < width; i++) value |= (uint64_t)bytes[i] << (8 * i);
    return value;
}

static void on_message(struct mosquitto *client, void *context, const struct mosquitto_message *message) {
    (void)client; (void)context;
    unsigned char value[20];
    if (extract(message->payload, message->payloadlen, value) != 0) return;
    uint64_t arrival = now_ns();
    uint32_t device = (uint32_t)little(value, 4);
    uint64_t sequence = little(value + 4, 8);
    uint64_t sent = little(value + 12, 8);
    pthread_mutex_lock(&lock);
    received_total++;
    if (device < MAX_DEVICES) {
        if (last_sequence[device] != 0 && sequence > last_sequence[device] + 1) {
            if (measuring) gaps += (long)(sequence - last_sequence[device] - 1);
        }
        if (sequence > last_sequence[device]) last_sequence[device] = sequence;
    }
    if (measuring && samples < MAX_SAMPLES) latencies[samples++] = (double)(int64_t)(arrival - sent) / 1e6;
    pthread_mutex_unlock(&lock);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: sink BROKER_PORT TOPIC_FILTER WARMUP_SECONDS MEASURE_SECONDS\n");
        return 64;
    }
    latencies = malloc(sizeof(double) * MAX_SAMPLES);
    mosquitto_lib_init();
    struct mosquitto *mqtt = mosquitto_new(NULL, true, NULL);
    mosquitto_message_callback_set(mqtt, on_message);
    if (mosquitto_connect(mqtt, "127.0.0.1", atoi(argv[1]), 30) != MOSQ_ERR_SUCCESS) return 1;
    mosquitto_subscribe(mqtt, NULL, argv[2], 1);
    mosquitto_loop_start(mqtt);
    printf("subscribed\n");
    fflush(stdout);
    sleep((unsigned)atoi(argv[3]));
    pthread_mutex_lock(&lock);
    measuring = 1;
    pthread_mutex_unlock(&lock);
    int seconds = atoi(argv[4]);
    sleep((unsigned)seconds);
    pthread_mutex_lock(&lock);
    measuring = 0;
    long count = samples;
    pthread_mutex_unlock(&lock);
    qsort(latencies, (size_t)count, sizeof(double), compare);
    double p50 = count ? latencies[count / 2] : 0, p99 = count ? latencies[(long)(count * 0.99)] : 0;
    double max = count ? latencies[count - 1] : 0;
    printf("{\"received\":%ld,\"rate\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"gaps\":%ld}\n", count,
           (double)count / seconds, p50, p99, max, gaps);
    fflush(stdout);
    mosquitto_loop_stop(mqtt, true);
    return 0;
}
