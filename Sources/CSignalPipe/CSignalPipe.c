#define _GNU_SOURCE
#include "CSignalPipe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int pipeWrite = -1;

// Async-signal-safe: an atomic load, write(2), and errno restored for the interrupted code.
static void forward(int signo) {
    int saved = errno;
    unsigned char number = (unsigned char)signo;
    int fd = atomic_load_explicit(&pipeWrite, memory_order_relaxed);
    if (fd >= 0) {
        ssize_t written = write(fd, &number, 1);
        (void)written;
    }
    errno = saved;
}

int blebridge_signal_pipe_open(void) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -1;
    if (fcntl(ends[1], F_SETFL, O_NONBLOCK) != 0) {
        int saved = errno;
        close(ends[0]);
        close(ends[1]);
        errno = saved;
        return -1;
    }
    atomic_store_explicit(&pipeWrite, ends[1], memory_order_release);
    return ends[0];
}

int blebridge_signal_forward(int signo) {
    struct sigaction action = {0};
    action.sa_handler = forward;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    return sigaction(signo, &action, NULL) == 0 ? 0 : errno;
}
