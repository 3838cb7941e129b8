/* bigmem.c: big arrays, each mapped on its own, and kept for reuse.
 *
 * Touching a fresh 4 KiB page costs a fault of microseconds, and a replay
 * touches tens to hundreds of MiB: an array of a quarter of a huge page or
 * more is mapped on its own, aligned to huge pages, and the system asked to
 * back it with them (Linux's transparent huge pages; elsewhere, or when
 * refused, plain pages). Being its own mapping, it goes back to the system
 * when freed (after a stay among the spares), instead of staying in the C
 * library's heap, where runs of different sizes one after another (a
 * sweep's, a benchmark's) would pile up. A smaller array comes from the C
 * library, behind the same header. A request too big for the machine is
 * found before it is made: bigmem_check maps the bytes as bigmem_alloc
 * would, and gives them back untouched (no page is cleared).
 *
 * The smaller arrays stay in the C library's heap between runs too (see
 * heap_keep). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise (huge pages), before any include */

#include "base/bigmem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/error.h"

#define HUGE_PAGE  ((gsize)2 << 20)
#define SMALL_PAGE ((gsize)4096)

/* What bigmem_free needs to know of an array, just before its first byte. */
typedef struct {
    gsize mapped; /* bytes mapped from the page holding this header on; 0: from g_malloc */
    gsize pad;    /* keeps the array 16-byte aligned */
} BigHead;

/* Mappings freed lately, kept for the next replay's arrays: the system
 * clears every page it hands out (a tenth of a big replay's time), and a
 * benchmark's or a sweep's replays ask for arrays of the sizes the one
 * before freed. At most SPARE_MAPS of them and SPARE_BYTES in all (the
 * biggest go back to the system first), so that they never pile up.
 * Shared by a sweep's threads, under a lock. */
#define SPARE_MAPS  32
#define SPARE_BYTES ((gsize)512 << 20)
static struct {
    GMutex lock;
    char *data[SPARE_MAPS]; /* the arrays' first bytes, as bigmem_alloc returned them */
    int n;
    gsize bytes; /* mapped by them */
} spare;

/* The bytes mapped for spare i. */
static gsize spare_size(int i)
{
    return ((BigHead *)spare.data[i])[-1].mapped;
}

/* Takes spare i out of the list; returns its array. */
static char *spare_take(int i)
{
    char *p = spare.data[i];
    spare.bytes -= spare_size(i);
    spare.data[i] = spare.data[--spare.n];
    return p;
}

/* Unmaps spare i, taking it out of the list. */
static void give_back(int i)
{
    gsize size = spare_size(i);
    munmap(spare_take(i) - SMALL_PAGE, size);
}

/* The smallest spare mapping for an array of `rounded` bytes (whole huge
 * pages), or NULL when none holds it. One more than twice as big gives
 * its tail back to the system: kept whole, it would stay resident beside
 * the fresh mappings of a replay's bigger arrays, none of which it holds,
 * while an array it held grew up from fresh pages. */
static void *reuse(gsize rounded)
{
    g_mutex_lock(&spare.lock);
    int best = -1;
    gsize best_size = G_MAXSIZE;
    for (int i = 0; i < spare.n; i++) {
        gsize size = spare_size(i) - SMALL_PAGE; /* the array's, past its header's page */
        if (size >= rounded && size < best_size) {
            best = i;
            best_size = size;
        }
    }
    char *found = best >= 0 ? spare_take(best) : NULL;
    g_mutex_unlock(&spare.lock);
    if (found && best_size > 2 * rounded) {
        munmap(found + rounded, best_size - rounded);
        ((BigHead *)found)[-1].mapped = SMALL_PAGE + rounded;
    }
    return found;
}

/* Keeps bigmem_alloc's array `p` among the spares, giving the biggest back
 * to the system while there are too many. */
static void spare_keep(char *p)
{
    g_mutex_lock(&spare.lock);
    spare.data[spare.n++] = p; /* there is room: the list is never full between calls */
    spare.bytes += spare_size(spare.n - 1);
    while (spare.n == SPARE_MAPS || spare.bytes > SPARE_BYTES) {
        int biggest = 0;
        for (int i = 1; i < spare.n; i++)
            if (spare_size(i) > spare_size(biggest))
                biggest = i;
        give_back(biggest);
    }
    g_mutex_unlock(&spare.lock);
}

void bigmem_release(void)
{
    g_mutex_lock(&spare.lock);
    while (spare.n > 0)
        give_back(0);
    g_mutex_unlock(&spare.lock);
}

/* `span` bytes newly mapped. Refused, the spares go back to the system and
 * it is asked again; refused again, the system has lost memory since the
 * run was sized (bigmem_check): one line and exit status 1, as a failed
 * write ends, never an abort. */
#ifdef MAP_ANONYMOUS
static char *map_fresh(gsize span)
{
    char *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        bigmem_release();
        map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (map == MAP_FAILED) {
        fprintf(stderr,
                "plansim: out of memory: the system refused %zu bytes more (%s), though the run "
                "was sized to fit before it started: free memory, or give it a smaller step\n",
                span, g_strerror(errno));
        exit(1);
    }
    return map;
}
#endif

/* The free top of the C library's heap kept for the next run's smaller
 * arrays. */
#define HEAP_KEPT ((gsize)64 << 20)

/* Keeps the arrays under a quarter of a huge page, which come from the C
 * library, in its heap between runs. By default glibc gives the heap's
 * free top back to the system past 128 KiB (M_TRIM_THRESHOLD) and maps an
 * array of 128 KiB or more on its own (M_MMAP_THRESHOLD) until it adjusts
 * both to what was freed: so each estimate of a sweep or a benchmark
 * grew the heap again and faulted its pages in afresh (44 faults an
 * estimate of GPT-3 175B, 15 % of its time in the kernel on a virtual
 * machine; docs/benchmarks.md). Set once, for the whole process: arrays
 * under a quarter of a huge page from the heap, and up to HEAP_KEPT of its
 * free top kept; bigmem's own mappings are not the heap's. Elsewhere than
 * glibc, nothing. */
static void heap_keep(void)
{
#ifdef __GLIBC__
    static gsize kept;
    if (g_once_init_enter(&kept)) {
        mallopt(M_MMAP_THRESHOLD, (int)(HUGE_PAGE / 4));
        mallopt(M_TRIM_THRESHOLD, (int)HEAP_KEPT);
        g_once_init_leave(&kept, 1);
    }
#endif
}

void *bigmem_alloc(gsize bytes)
{
    heap_keep();
#ifdef MAP_ANONYMOUS
    if (bytes >= HUGE_PAGE / 4) {
        gsize rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        void *again = reuse(rounded);
        if (again)
            return again;
        gsize span = rounded + HUGE_PAGE; /* room to align, with the header's page */
        char *map = map_fresh(span);
        char *data = (char *)(((guintptr)map + SMALL_PAGE + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
        char *head = data - SMALL_PAGE;
        if (head > map) /* keep the header's page, the array and nothing else */
            munmap(map, (gsize)(head - map));
        if (map + span > data + rounded)
            munmap(data + rounded, (gsize)(map + span - (data + rounded)));
#ifdef MADV_HUGEPAGE
        madvise(data, rounded, MADV_HUGEPAGE);
#endif
        ((BigHead *)data)[-1] = (BigHead){.mapped = SMALL_PAGE + rounded};
        return data;
    }
#endif
    BigHead *h = g_malloc(sizeof(BigHead) + MAX(bytes, 1));
    *h = (BigHead){0};
    return h + 1;
}

gboolean bigmem_check(gsize bytes, GError **error)
{
#ifdef MAP_ANONYMOUS
    gsize span = bytes + HUGE_PAGE; /* as bigmem_alloc maps it */
    int reason = ENOMEM;            /* past gsize: no system maps that */
    if (span > bytes) {
        void *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map != MAP_FAILED) {
            munmap(map, span);
            return TRUE;
        }
        reason = errno;
    }
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "mapping %zu bytes failed (%s)", bytes,
                g_strerror(reason));
    return FALSE;
#else
    (void)bytes;
    (void)error;
    return TRUE; /* plain C library memory: nothing to ask first */
#endif
}

void bigmem_free(void *p)
{
    if (!p)
        return;
    BigHead *h = (BigHead *)p - 1;
    if (!h->mapped) {
        g_free(h);
        return;
    }
    spare_keep(p);
}

void *bigmem_alloc0(gsize bytes)
{
    return memset(bigmem_alloc(bytes), 0, MAX(bytes, 1));
}

void *bigmem_grow(void *p, gsize old_bytes, gsize new_bytes)
{
    g_assert(new_bytes >= old_bytes);
    void *bigger = bigmem_alloc(new_bytes);
    if (p)
        memcpy(bigger, p, old_bytes);
    bigmem_free(p);
    return bigger;
}
