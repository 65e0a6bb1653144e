// The gateway's own executor for Swift's global concurrent work: a fixed number of threads
// instead of libdispatch's pool, which grows when a worker sleeps at its once-a-second check
// (docs/testing.md, "The ninth thread"). Used by TaskPool only.
#ifndef BLEBRIDGE_CTASKPOOL_H
#define BLEBRIDGE_CTASKPOOL_H

// Starts `threads` worker threads (`blebridge.pool`) and one timer thread (`blebridge.timer`),
// and points the Swift runtime's global-executor hooks (enqueue, enqueue after a delay, enqueue
// at a deadline) at them. Call it once, before any task runs on the global executor. Returns 0,
// or an errno when a thread could not be started (then nothing is installed).
int blebridge_task_pool_install(int threads);

// Jobs run by the pool's threads since the install (a test's proof that the hooks are used).
unsigned long long blebridge_task_pool_jobs_run(void);

// Jobs the timer thread moved to the queue at their deadline since the install.
unsigned long long blebridge_task_pool_timers_fired(void);

// Is the pool installed (blebridge_task_pool_install returned 0)?
int blebridge_task_pool_installed(void);

// Calls `callback(context)` on the timer thread once `delay` nanoseconds (CLOCK_MONOTONIC) have
// passed: the gateway's sleeps (Swift 6.2 and later schedule `Clock.sleep` on their own global
// executor's timer, past the runtime's hooks). Returns an id for blebridge_task_pool_cancel; 0 when
// the pool is not installed (nothing is scheduled).
typedef void (*blebridge_timer_callback)(void *context);
unsigned long long blebridge_task_pool_schedule(
    unsigned long long delay, blebridge_timer_callback callback, void *context);

// Forgets a scheduled callback: 1 when it had not run and never will, 0 when it ran or is running.
int blebridge_task_pool_cancel(unsigned long long id);

#endif
