// glibc's malloc_trim(3) and mallopt(3), which Swift's Glibc module does not include; used only by
// ProcessMemory. On a C library without them (musl), nothing is given back or changed and 0 is returned.
#if defined(__GLIBC__) || defined(__linux__)
#include <features.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
static inline int blebridge_malloc_trim(void) { return malloc_trim(0); }
#define BLEBRIDGE_TRIM_THRESHOLD (1024 * 1024)
// One arena for every thread, a fixed mmap threshold (glibc's default, 128 KiB) and a fixed trim
// threshold of 1 MiB: fixing them turns off glibc's dynamic threshold, which after one large block
// was freed keeps up to twice its size at an arena's top and puts later large blocks into the
// arena instead of mmap. At the default trim threshold (128 KiB) a free() at the heap's top called
// brk(2) under the one arena's lock dozens of times a minute (the D-Bus thread grows the top by
// 100-170 kB, a Swift pool thread gives it back), and every thread's malloc waited behind that
// system call (docs/testing.md, "The ninth thread"). Returns 1 when all three were accepted.
static inline int blebridge_malloc_compact(void) {
    return mallopt(M_ARENA_MAX, 1) && mallopt(M_TRIM_THRESHOLD, BLEBRIDGE_TRIM_THRESHOLD) && mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}
#else
static inline int blebridge_malloc_trim(void) { return 0; }
static inline int blebridge_malloc_compact(void) { return 0; }
#endif
