// See include/CTaskPool.h. The Swift runtime consults its hooks before its own (libdispatch)
// global executor: swift_task_enqueueGlobal_hook for ready jobs, ..._WithDelay_hook (Task.sleep)
// and ..._WithDeadline_hook (Clock.sleep) for timed ones. A job is run as the runtime's own
// dispatch callback does: swift_job_run(job, generic executor), the generic executor being two
// null words. The hooks and swift_job_run use the Swift calling convention (swiftcall).
#define _GNU_SOURCE
#include "CTaskPool.h"

#if defined(__linux__)

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SWIFTCC __attribute__((swiftcall))

typedef struct BlebridgeSwiftJob BlebridgeSwiftJob;  // swift::Job, opaque here

typedef SWIFTCC void (*enqueue_original)(BlebridgeSwiftJob *job);
typedef SWIFTCC void (*delay_original)(unsigned long long delay, BlebridgeSwiftJob *job);
typedef SWIFTCC void (*deadline_original)(
    long long seconds, long long nanoseconds, long long toleranceSeconds, long long toleranceNanoseconds, int clock,
    BlebridgeSwiftJob *job);

extern SWIFTCC void (*swift_task_enqueueGlobal_hook)(BlebridgeSwiftJob *job, enqueue_original original);
extern SWIFTCC void (*swift_task_enqueueGlobalWithDelay_hook)(
    unsigned long long delay, BlebridgeSwiftJob *job, delay_original original);
extern SWIFTCC void (*swift_task_enqueueGlobalWithDeadline_hook)(
    long long seconds, long long nanoseconds, long long toleranceSeconds, long long toleranceNanoseconds, int clock,
    BlebridgeSwiftJob *job, deadline_original original);
extern SWIFTCC void swift_job_run(BlebridgeSwiftJob *job, void *executorIdentity, uintptr_t executorImplementation);
// The runtime's clocks (1 continuous, 2 suspending), read as it reads them for a deadline.
extern SWIFTCC void swift_get_time(long long *seconds, long long *nanoseconds, int clock);

// One lock for the ready queue (a ring that doubles when full) and the timer heap.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready;  // a job was queued (workers wait here)
static pthread_cond_t timerChanged;  // an earlier deadline, or the first (CLOCK_MONOTONIC)
static BlebridgeSwiftJob **ring;
static size_t ringCapacity, ringHead, ringCount;
static unsigned idleWorkers;

// A job queued at its deadline, or a callback called then; both null once cancelled.
typedef struct {
    uint64_t due;  // CLOCK_MONOTONIC nanoseconds
    uint64_t order;  // first come first served among equal deadlines; the id of a callback
    BlebridgeSwiftJob *job;
    blebridge_timer_callback callback;
    void *context;
} Timed;
static Timed *heap;
static size_t heapCapacity, heapCount;
static uint64_t nextOrder;

static int installed;
static unsigned long long jobsRun, timersFired;  // under `lock` (timersFired) or atomic (jobsRun)

static uint64_t monotonicNow(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// Out of memory for the queue: there is no way to refuse a job, so stop like the runtime would.
static void *grown(void *old, size_t bytes) {
    void *grownBlock = realloc(old, bytes);
    if (!grownBlock) abort();
    return grownBlock;
}

static void pushReadyLocked(BlebridgeSwiftJob *job) {
    if (ringCount == ringCapacity) {
        size_t capacity = ringCapacity ? ringCapacity * 2 : 256;
        BlebridgeSwiftJob **bigger = grown(NULL, capacity * sizeof *bigger);
        for (size_t i = 0; i < ringCount; i++) bigger[i] = ring[(ringHead + i) % ringCapacity];
        free(ring);
        ring = bigger;
        ringCapacity = capacity;
        ringHead = 0;
    }
    ring[(ringHead + ringCount) % ringCapacity] = job;
    ringCount++;
    if (idleWorkers) pthread_cond_signal(&ready);
}

static int earlier(const Timed *a, const Timed *b) {
    return a->due < b->due || (a->due == b->due && a->order < b->order);
}

static uint64_t pushTimedLocked(uint64_t due, BlebridgeSwiftJob *job, blebridge_timer_callback callback, void *context) {
    if (heapCount == heapCapacity) {
        heapCapacity = heapCapacity ? heapCapacity * 2 : 64;
        heap = grown(heap, heapCapacity * sizeof *heap);
    }
    size_t at = heapCount++;
    uint64_t order = ++nextOrder;
    heap[at] = (Timed){due, order, job, callback, context};
    while (at > 0 && earlier(&heap[at], &heap[(at - 1) / 2])) {
        Timed parent = heap[(at - 1) / 2];
        heap[(at - 1) / 2] = heap[at];
        heap[at] = parent;
        at = (at - 1) / 2;
    }
    if (at == 0) pthread_cond_signal(&timerChanged);
    return order;
}

static Timed popTimedLocked(void) {
    Timed first = heap[0];
    heap[0] = heap[--heapCount];
    size_t at = 0;
    for (;;) {
        size_t smallest = at, left = 2 * at + 1, right = left + 1;
        if (left < heapCount && earlier(&heap[left], &heap[smallest])) smallest = left;
        if (right < heapCount && earlier(&heap[right], &heap[smallest])) smallest = right;
        if (smallest == at) break;
        Timed swap = heap[at];
        heap[at] = heap[smallest];
        heap[smallest] = swap;
        at = smallest;
    }
    return first;
}

static SWIFTCC void enqueueHook(BlebridgeSwiftJob *job, enqueue_original original) {
    (void)original;
    pthread_mutex_lock(&lock);
    pushReadyLocked(job);
    pthread_mutex_unlock(&lock);
}

static void enqueueAt(uint64_t due, BlebridgeSwiftJob *job) {
    pthread_mutex_lock(&lock);
    pushTimedLocked(due, job, NULL, NULL);
    pthread_mutex_unlock(&lock);
}

static SWIFTCC void delayHook(unsigned long long delay, BlebridgeSwiftJob *job, delay_original original) {
    (void)original;
    uint64_t now = monotonicNow();
    enqueueAt(delay > UINT64_MAX - now ? UINT64_MAX : now + delay, job);
}

static SWIFTCC void deadlineHook(
    long long seconds, long long nanoseconds, long long toleranceSeconds, long long toleranceNanoseconds, int clock,
    BlebridgeSwiftJob *job, deadline_original original) {
    (void)toleranceSeconds;
    (void)toleranceNanoseconds;
    (void)original;
    long long nowSeconds = 0, nowNanoseconds = 0;
    swift_get_time(&nowSeconds, &nowNanoseconds, clock);
    // The deadline on the job's clock, as a delay from now, then on CLOCK_MONOTONIC.
    long double left = (long double)(seconds - nowSeconds) * 1e9L + (long double)(nanoseconds - nowNanoseconds);
    uint64_t now = monotonicNow();
    uint64_t due = left <= 0 ? now : left >= (long double)(UINT64_MAX - now) ? UINT64_MAX : now + (uint64_t)left;
    enqueueAt(due, job);
}

// Workers take no asynchronous signal, as libdispatch's do: the `blebridge.signals` thread and the
// main thread get them.
static void blockAsynchronousSignals(void) {
    sigset_t mask;
    sigfillset(&mask);
    int synchronous[] = {SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGBUS, SIGSEGV, SIGSYS, SIGPIPE, SIGPROF};
    for (size_t i = 0; i < sizeof synchronous / sizeof *synchronous; i++) sigdelset(&mask, synchronous[i]);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
}

static void *worker(void *unused) {
    (void)unused;
    blockAsynchronousSignals();
    pthread_setname_np(pthread_self(), "blebridge.pool");
    for (;;) {
        pthread_mutex_lock(&lock);
        while (ringCount == 0) {
            idleWorkers++;
            pthread_cond_wait(&ready, &lock);
            idleWorkers--;
        }
        BlebridgeSwiftJob *job = ring[ringHead];
        ringHead = (ringHead + 1) % ringCapacity;
        ringCount--;
        pthread_mutex_unlock(&lock);
        swift_job_run(job, NULL, 0);
        __atomic_fetch_add(&jobsRun, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void *timer(void *unused) {
    (void)unused;
    blockAsynchronousSignals();
    pthread_setname_np(pthread_self(), "blebridge.timer");
    pthread_mutex_lock(&lock);
    for (;;) {
        if (heapCount == 0) {
            pthread_cond_wait(&timerChanged, &lock);
            continue;
        }
        uint64_t now = monotonicNow();
        if (heap[0].due > now) {
            struct timespec until = {(time_t)(heap[0].due / 1000000000u), (long)(heap[0].due % 1000000000u)};
            pthread_cond_timedwait(&timerChanged, &lock, &until);
            continue;
        }
        Timed due = popTimedLocked();
        if (due.job) {
            pushReadyLocked(due.job);
            timersFired++;
        } else if (due.callback) {
            timersFired++;
            // Outside the lock: the callback resumes a task, which enqueues a job here.
            pthread_mutex_unlock(&lock);
            due.callback(due.context);
            pthread_mutex_lock(&lock);
        }
    }
    return NULL;
}

int blebridge_task_pool_installed(void) {
    return __atomic_load_n(&installed, __ATOMIC_ACQUIRE);
}

unsigned long long blebridge_task_pool_schedule(
    unsigned long long delay, blebridge_timer_callback callback, void *context) {
    if (!blebridge_task_pool_installed()) return 0;
    uint64_t now = monotonicNow();
    pthread_mutex_lock(&lock);
    uint64_t id = pushTimedLocked(delay > UINT64_MAX - now ? UINT64_MAX : now + delay, NULL, callback, context);
    pthread_mutex_unlock(&lock);
    return id;
}

int blebridge_task_pool_cancel(unsigned long long id) {
    int found = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < heapCount; i++) {
        if (heap[i].order == id && heap[i].callback) {
            heap[i].callback = NULL;  // stays in the heap until its deadline, then is dropped
            heap[i].context = NULL;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

int blebridge_task_pool_install(int threads) {
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&timerChanged, &monotonic);
    pthread_condattr_destroy(&monotonic);
    pthread_cond_init(&ready, NULL);
    pthread_t thread;
    int failed = pthread_create(&thread, NULL, timer, NULL);
    if (failed) return failed;
    pthread_detach(thread);
    for (int i = 0; i < (threads > 0 ? threads : 1); i++) {
        failed = pthread_create(&thread, NULL, worker, NULL);
        // At least one worker runs: install with what started (jobs still run, on fewer threads).
        if (failed && i == 0) return failed;
        if (failed) break;
        pthread_detach(thread);
    }
    swift_task_enqueueGlobalWithDelay_hook = delayHook;
    swift_task_enqueueGlobalWithDeadline_hook = deadlineHook;
    swift_task_enqueueGlobal_hook = enqueueHook;
    __atomic_store_n(&installed, 1, __ATOMIC_RELEASE);
    return 0;
}

unsigned long long blebridge_task_pool_jobs_run(void) {
    return __atomic_load_n(&jobsRun, __ATOMIC_RELAXED);
}

unsigned long long blebridge_task_pool_timers_fired(void) {
    pthread_mutex_lock(&lock);
    unsigned long long fired = timersFired;
    pthread_mutex_unlock(&lock);
    return fired;
}

#else  // Elsewhere the runtime's own global executor stays (CLOCK_MONOTONIC condition variables and
       // pthread_setname_np(thread, name) are Linux's).
#include <errno.h>
int blebridge_task_pool_install(int threads) {
    (void)threads;
    return ENOSYS;
}
unsigned long long blebridge_task_pool_jobs_run(void) { return 0; }
unsigned long long blebridge_task_pool_timers_fired(void) { return 0; }
int blebridge_task_pool_installed(void) { return 0; }
unsigned long long blebridge_task_pool_schedule(
    unsigned long long delay, blebridge_timer_callback callback, void *context) {
    (void)delay;
    (void)callback;
    (void)context;
    return 0;
}
int blebridge_task_pool_cancel(unsigned long long id) {
    (void)id;
    return 0;
}
#endif
