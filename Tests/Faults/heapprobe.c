// Test-only (the soak, issue 19): preloaded into the gateway (LD_PRELOAD), it answers "how much
// of the heap is in use" from outside without stopping the process, as gdb would. A thread of its
// own (comm `heapprobe`, not counted by the soak) waits on the FIFO HEAPPROBE_FIFO; for each byte
// written there it appends one line to HEAPPROBE_OUT: a sequence number, then glibc's mallinfo2()
// figures in bytes: blocks in use (uordblks), the arena's size (arena), free blocks (fordblks)
// and the releasable top (keepcost). mallinfo2 takes the arena's lock for a few microseconds. The
// heap in use tells live memory (and blocks held in glibc's per-thread caches) from the free
// memory the allocator keeps resident; the soak and eventmem print it beside RssAnon.
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int answers = -1;
static int questions = -1;

static void *answer(void *unused) {
    (void)unused;
    unsigned long sequence = 0;
    char byte;
    for (;;) {
        ssize_t got = read(questions, &byte, 1);
        if (got <= 0) continue;  // O_RDWR: never EOF; EINTR only
        struct mallinfo2 info = mallinfo2();
        char line[160];
        int length = snprintf(line, sizeof line, "%lu\t%zu\t%zu\t%zu\t%zu\n", ++sequence, info.uordblks,
                              info.arena, info.fordblks, info.keepcost);
        if (length > 0 && write(answers, line, (size_t)length) < 0) return NULL;
    }
}

__attribute__((constructor)) static void start(void) {
    const char *fifo = getenv("HEAPPROBE_FIFO");
    const char *out = getenv("HEAPPROBE_OUT");
    if (fifo == NULL || out == NULL) return;
    questions = open(fifo, O_RDWR | O_CLOEXEC);
    answers = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (questions < 0 || answers < 0) {
        fprintf(stderr, "heapprobe: cannot open %s or %s\n", fifo, out);
        return;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, answer, NULL) == 0) {
        pthread_setname_np(thread, "heapprobe");
        pthread_detach(thread);
    }
}
