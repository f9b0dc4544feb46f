/*
 * mem.h - hints to the allocator and the kernel: large tables accessed at random, and memory
 * kept for the next run.
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
#if defined(__GLIBC__)
#include <malloc.h>
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

/* For a process that simulates many runs one after the other (sweep, tune, check): keep the
   memory it frees. glibc maps each block of 128 KiB or more apart and unmaps it when freed, and
   gives the top of its heap back past twice that free; the threshold rises to the largest mapped
   block freed, but a small scenario's blocks keep it low, so every run faulted its pools and
   calendar in again: 386 pages a run, at about 7 us a fault on a virtual machine, half of a
   sweep's CPU. Blocks up to 32 MiB (glibc's most on 64-bit) then come from the heap, which keeps
   up to 64 MiB free at its top: a sweep of 729 runs took 281,579 faults and 3.5 s of CPU, then
   3,128 and 0.4 s (docs/performance.md). Not for a process of one long run (a naive flagship
   hour peaked at 42 MiB instead of 34), one whose arrays grow by realloc (a mapped block grows in
   place, a heap block by a copy that leaves a hole: the import's records), or a server whose
   memory bound counts on what it frees going back (the mock's --max-memory). Call it before the
   first allocation it should cover; elsewhere than glibc it does nothing. */
static inline void util_mem_keep_freed(void) {
#if defined(__GLIBC__)
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20); /* a hint: without it, only slower */
    (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

#endif /* UTIL_MEM_H */
