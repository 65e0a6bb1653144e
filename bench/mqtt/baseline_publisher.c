/*
 * Baseline for mqtt-bench: a plain C libmosquitto publisher doing what the Swift client does.
 *
 *   baseline_publisher PORT QOS COUNT PAYLOAD_BYTES
 *
 * Connects with MQTT 5 to 127.0.0.1:PORT, runs libmosquitto's own network thread
 * (mosquitto_loop_start), publishes COUNT messages of PAYLOAD_BYTES to "bench/c" at QOS, then one
 * QoS 1 "fence" message, and stops the clock when the fence (QoS 0: everything before it has been
 * written and processed by the broker) or every message (QoS 1) is acknowledged.
 * Prints the throughput in messages per second and the CPU time (user + system, all threads)
 * per message in microseconds.
 */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int connected = 0;
static long acknowledged = 0;
static int fence_mid = -1;
static int fence_done = 0;
static int qos_level = 0;

static void on_connect(struct mosquitto *mosq, void *obj, int rc, int flags, const mosquitto_property *props) {
    (void)mosq; (void)obj; (void)flags; (void)props;
    pthread_mutex_lock(&lock);
    connected = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void on_publish(struct mosquitto *mosq, void *obj, int mid, int rc, const mosquitto_property *props) {
    (void)mosq; (void)obj; (void)rc; (void)props;
    pthread_mutex_lock(&lock);
    if (mid == fence_mid) fence_done = 1;
    else if (qos_level > 0) acknowledged++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s PORT QOS COUNT PAYLOAD_BYTES\n", argv[0]);
        return 64;
    }
    int port = atoi(argv[1]);
    qos_level = atoi(argv[2]);
    long count = atol(argv[3]);
    int size = atoi(argv[4]);
    char *payload = malloc((size_t)size);
    memset(payload, 'x', (size_t)size);

    mosquitto_lib_init();
    struct mosquitto *mosq = mosquitto_new(NULL, true, NULL);
    mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_v5_callback_set(mosq, on_connect);
    mosquitto_publish_v5_callback_set(mosq, on_publish);
    if (mosquitto_connect_bind_v5(mosq, "127.0.0.1", port, 30, NULL, NULL) != MOSQ_ERR_SUCCESS) {
        fprintf(stderr, "connect failed\n");
        return 1;
    }
    mosquitto_loop_start(mosq);
    pthread_mutex_lock(&lock);
    while (connected == 0) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    if (connected < 0) {
        fprintf(stderr, "CONNACK refused\n");
        return 1;
    }

    double start = now();
    double cpu_start = cpu_seconds();
    for (long i = 0; i < count; i++) {
        int rc = mosquitto_publish_v5(mosq, NULL, "bench/c", size, payload, qos_level, false, NULL);
        if (rc != MOSQ_ERR_SUCCESS) {
            fprintf(stderr, "publish failed: %s\n", mosquitto_strerror(rc));
            return 1;
        }
    }
    pthread_mutex_lock(&lock);
    int mid = 0;
    mosquitto_publish_v5(mosq, &mid, "bench/c", size, payload, 1, false, NULL);
    fence_mid = mid;
    while (!fence_done || (qos_level > 0 && acknowledged < count)) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    double elapsed = now() - start;
    double cpu = cpu_seconds() - cpu_start;
    printf("%.0f %.3f\n", count / elapsed, cpu * 1e6 / count);

    mosquitto_disconnect(mosq);
    mosquitto_loop_stop(mosq, false);
    mosquitto_destroy(mosq);
    mosquitto_lib_cleanup();
    free(payload);
    return 0;
}
