/* clockshift: an LD_PRELOAD library that shifts one process's wall clock (CLOCK_REALTIME and its
 * coarse variant, gettimeofday, time) by a number of seconds read from the file named by
 * CLOCKSHIFT_FILE, re-read at most once a second, so a test can make the clock jump while the
 * process runs. CLOCK_MONOTONIC and CLOCK_BOOTTIME are left alone, as when an administrator or
 * NTP steps the real clock. The host's clock is never touched (the fault campaign's clock-jump
 * case; libfaketime 0.9.10 was tried first and left Swift's CommandLine.arguments empty).
 * Build: cc -shared -fPIC -O2 -o clockshift.so clockshift.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static _Atomic long long offset_seconds;
static _Atomic long long checked_at; /* monotonic seconds of the last read */

static int real_clock_gettime(clockid_t clock, struct timespec *ts) {
    return (int)syscall(SYS_clock_gettime, clock, ts);
}

static long long current_offset(void) {
    struct timespec now;
    real_clock_gettime(CLOCK_MONOTONIC, &now);
    long long last = atomic_load(&checked_at);
    if (now.tv_sec != last && atomic_compare_exchange_strong(&checked_at, &last, now.tv_sec)) {
        const char *path = getenv("CLOCKSHIFT_FILE");
        int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (fd >= 0) {
            char text[32] = {0};
            ssize_t length = read(fd, text, sizeof text - 1);
            close(fd);
            if (length > 0) atomic_store(&offset_seconds, strtoll(text, NULL, 10));
        }
    }
    return atomic_load(&offset_seconds);
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    int result = real_clock_gettime(clock, ts);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) ts->tv_sec += current_offset();
    return result;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    struct timespec now;
    int result = clock_gettime(CLOCK_REALTIME, &now);
    if (result == 0) {
        tv->tv_sec = now.tv_sec;
        tv->tv_usec = now.tv_nsec / 1000;
    }
    return result;
}

time_t time(time_t *out) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (out) *out = now.tv_sec;
    return now.tv_sec;
}
