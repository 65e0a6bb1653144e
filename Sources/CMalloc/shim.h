// glibc's malloc_trim(3), which Swift's Glibc module does not include; used only by ProcessMemory.
// On a C library without it (musl), nothing is given back and 0 is returned.
#if defined(__GLIBC__) || defined(__linux__)
#include <features.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
static inline int blebridge_malloc_trim(void) { return malloc_trim(0); }
#else
static inline int blebridge_malloc_trim(void) { return 0; }
#endif
