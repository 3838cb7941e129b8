/* bigmem.h: big arrays that the system backs with huge pages and that a
 * later run reuses (bigmem.c): a replay's per-task arrays, a collective's
 * transfers over a million GPUs. Thread-safe. Its first call sets, for
 * the whole process, how glibc's heap keeps smaller arrays between runs
 * (bigmem.c, heap_keep: M_MMAP_THRESHOLD 512 KiB, M_TRIM_THRESHOLD
 * 64 MiB). */
#ifndef PLANSIM_BASE_BIGMEM_H
#define PLANSIM_BASE_BIGMEM_H

#include <glib.h>

/* `bytes` of uninitialised memory (16-byte aligned), freed with
 * bigmem_free. Every request is sized against the input caps before it is
 * made, and the biggest asked of the system first (bigmem_check): refused
 * after that, the spares are given back and the system asked again; refused
 * again, the system lost the memory it had: one line on stderr and exit
 * status 1 (never an abort). */
void *bigmem_alloc(gsize bytes);

/* Whether the system maps `bytes` more now, as bigmem_alloc maps them:
 * they are mapped and given back at once, untouched, in microseconds. So
 * the limits on a process's address space (ulimit -v) and the kernel's
 * overcommit check refuse a run too big for the machine before it starts,
 * not in the middle. FALSE and `error` set (PS_ERROR_INPUT: "mapping N
 * bytes failed (the system's reason)", for the caller to prefix with what
 * needed them) when it refuses. */
gboolean bigmem_check(gsize bytes, GError **error);

/* The same, zeroed. */
void *bigmem_alloc0(gsize bytes);

/* `p` (from bigmem_alloc, or NULL) moved into an array of `new_bytes`, its
 * first `old_bytes` kept. */
void *bigmem_grow(void *p, gsize old_bytes, gsize new_bytes);

void bigmem_free(void *p);

/* Gives the freed arrays kept for reuse back to the system (a benchmark
 * measuring the memory of one run after another's). */
void bigmem_release(void);

#endif
