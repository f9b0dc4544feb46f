/*
 * mem.h - a hint for large tables accessed at random.
 *
 * The simulator's pools (requests, attempts) and its calendar's nodes are a
 * few to tens of MiB read at random, one entry per event: with 4 KiB pages
 * most of those reads also miss the TLB. Linux backs a range advised with
 * MADV_HUGEPAGE with 2 MiB pages when transparent huge pages are set to
 * "madvise" (Debian's kernels) or "always"; elsewhere this does nothing. The
 * advice changes no byte of any result, only how fast it comes
 * (docs/performance.md).
 */
#ifndef UTIL_MEM_H
#define UTIL_MEM_H

#include <stddef.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define UTIL_MEM_HUGE (2u << 20) /* a huge page: the advice covers the whole ones in a block */

/* Advise the huge pages wholly inside [p, p + n); nothing for blocks under two of them. */
static inline void util_mem_huge(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p == NULL || n < 2 * (size_t)UTIL_MEM_HUGE) return;
    uintptr_t a = ((uintptr_t)p + UTIL_MEM_HUGE - 1) & ~(uintptr_t)(UTIL_MEM_HUGE - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)(UTIL_MEM_HUGE - 1);
    if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* a hint: its failure is harmless */
#else
    (void)p;
    (void)n;
#endif
}

#endif /* UTIL_MEM_H */
