/* Shared by the benchmark's C programs: the load value and clocks.
 *
 * The load value is the simulator's LoadValue (Sources/BlueZSimulator/Generators/LoadValue.swift):
 * 20 bytes, little-endian: device index (uint32), sequence (uint64), send time in nanoseconds
 * since the Unix epoch (uint64, CLOCK_REALTIME). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOAD_VALUE_LENGTH 20

struct load_value {
    uint32_t device;
    uint64_t sequence;
    uint64_t timestamp_ns;
};

static inline uint64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void put_le(uint8_t *out, uint64_t value, int width) {
    for (int i = 0; i < width; i++) out[i] = (uint8_t)(value >> (8 * i));
}

static inline uint64_t get_le(const uint8_t *in, int width) {
    uint64_t value = 0;
    for (int i = width - 1; i >= 0; i--) value = (value << 8) | in[i];
    return value;
}

static inline void load_value_encode(const struct load_value *value, uint8_t out[LOAD_VALUE_LENGTH]) {
    put_le(out, value->device, 4);
    put_le(out + 4, value->sequence, 8);
    put_le(out + 12, value->timestamp_ns, 8);
}

static inline void load_value_decode(const uint8_t in[LOAD_VALUE_LENGTH], struct load_value *value) {
    value->device = (uint32_t)get_le(in, 4);
    value->sequence = get_le(in + 4, 8);
    value->timestamp_ns = get_le(in + 12, 8);
}

static inline void die(const char *what, const char *detail) {
    fprintf(stderr, "%s: %s\n", what, detail ? detail : "");
    exit(1);
}

/* "--name value" argument lookup; returns fallback when absent. */
static inline const char *arg_string(int argc, char **argv, const char *name, const char *fallback) {
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return fallback;
}

static inline double arg_double(int argc, char **argv, const char *name, double fallback) {
    const char *text = arg_string(argc, argv, name, NULL);
    return text ? strtod(text, NULL) : fallback;
}

#endif
