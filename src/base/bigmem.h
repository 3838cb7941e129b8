/* bigmem.h: big arrays that the system backs with huge pages and that a
 * later run reuses (bigmem.c): a replay's per-task arrays, a collective's
 * transfers over a million GPUs. Thread-safe. */
#ifndef PLANSIM_BASE_BIGMEM_H
#define PLANSIM_BASE_BIGMEM_H

#include <glib.h>

/* `bytes` of uninitialised memory (16-byte aligned), freed with
 * bigmem_free; aborts when the system has none. */
void *bigmem_alloc(gsize bytes);

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
