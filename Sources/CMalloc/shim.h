// glibc's malloc_trim(3) and mallopt(3), which Swift's Glibc module does not include; used only by
// ProcessMemory. On a C library without them (musl), nothing is given back or changed and 0 is returned.
#if defined(__GLIBC__) || defined(__linux__)
#include <features.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
static inline int blebridge_malloc_trim(void) { return malloc_trim(0); }
// The gateway's trim threshold (below) and glibc's default top pad, set back by
// blebridge_malloc_trim_top after it changed them.
#define BLEBRIDGE_TRIM_THRESHOLD (1024 * 1024)
#define BLEBRIDGE_GLIBC_TOP_PAD (128 * 1024)
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
// Gives back the free memory at the heap's top beyond `keep` bytes (brk), and nothing else:
// malloc_trim also gives back the free pages inside the heap, which the steady traffic touches
// again within seconds. glibc has no call for the top alone; free() trims it when it frees a
// block of 64 KiB or more and the top is at least the trim threshold, down to the top pad. So:
// both set to `keep` for one such free, then set back (the 1 MiB threshold above, glibc's
// default pad of 128 KiB). Returns 1 when the top was over `keep` (+ two pages).
static inline int blebridge_malloc_trim_top(size_t keep) {
    struct mallinfo2 info = mallinfo2();
    if (info.keepcost <= keep + 8192) return 0;
    if (!mallopt(M_TOP_PAD, (int)keep) || !mallopt(M_TRIM_THRESHOLD, (int)keep)) return 0;
    // volatile: a compiler removes a malloc/free pair whose block is never used.
    void *volatile block = malloc(64 * 1024);
    free(block);
    mallopt(M_TRIM_THRESHOLD, BLEBRIDGE_TRIM_THRESHOLD);
    mallopt(M_TOP_PAD, BLEBRIDGE_GLIBC_TOP_PAD);
    return 1;
}
// The free memory at the main arena's top (mallinfo2's keepcost), in bytes.
static inline size_t blebridge_malloc_top(void) { return mallinfo2().keepcost; }
#else
static inline size_t blebridge_malloc_top(void) { return 0; }
static inline int blebridge_malloc_trim_top(size_t keep) { (void)keep; return 0; }
static inline int blebridge_malloc_trim(void) { return 0; }
static inline int blebridge_malloc_compact(void) { return 0; }
#endif
