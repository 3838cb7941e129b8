/* evq.c: a binary min-heap and a sorted run, ordered by (key, seq).
 *
 * Events compare by key and then by the strictly increasing push sequence,
 * so no two keys are equal and the pop order is a total order. An event no
 * earlier than the last one in the run joins the run's end, and one
 * strictly earlier than the first joins its front (an event that happens
 * at once, say): the run, a ring, is sorted by construction, and a
 * simulation's events mostly come in time order (every rank's next task
 * ends a step later), so most pushes and pops cost O(1). Other events go to
 * the heap. A pop takes the earlier of the run's first event and the
 * heap's root.
 *
 * Heap invariant: for every i > 0, key(heap[(i - 1) / 2]) <= key(heap[i]).
 * A heap pop moves the hole at the root down to a leaf along the smaller
 * children, then lifts the last event into it from there (Floyd's way):
 * one comparison a level on the way down, and the last event, a late one,
 * rarely rises far. */
#include "core/evq.h"

#include <math.h>

struct EventQueue {
    Event *heap;
    gsize size, capacity;
    Event *run;               /* a ring: run[head], then the next (mod room) */
    gsize head, length, room; /* room: a power of two */
    uint64_t next_seq;
};

EventQueue *evq_new(gsize capacity)
{
    EventQueue *q = g_new0(EventQueue, 1);
    q->capacity = MAX(capacity, 1);
    q->heap = g_new(Event, q->capacity);
    q->room = 1;
    while (q->room < capacity)
        q->room *= 2;
    q->run = g_new(Event, q->room);
    return q;
}

void evq_free(EventQueue *q)
{
    if (!q)
        return;
    g_free(q->heap);
    g_free(q->run);
    g_free(q);
}

/* Whether an event of key (key, seq) pops before `b`; without
 * branches, which the heap's comparisons, near coin tosses, would
 * mispredict. */
static int key_before(double key, uint64_t seq, const Event *b)
{
    return (key < b->key) | ((key == b->key) & (seq < b->seq));
}

static int before(const Event *a, const Event *b)
{
    return key_before(a->key, a->seq, b);
}

static Event *run_at(const EventQueue *q, gsize i)
{
    return &q->run[(q->head + i) & (q->room - 1)];
}

/* The run's room doubled, its events first. Here and below, what is rare
 * or slow stays out of line, so that the common path (an event joining or
 * leaving the run) is a few instructions. */
static G_GNUC_NO_INLINE void run_grow(EventQueue *q)
{
    Event *run = g_new(Event, 2 * q->room);
    for (gsize i = 0; i < q->length; i++)
        run[i] = *run_at(q, i);
    g_free(q->run);
    q->run = run;
    q->head = 0;
    q->room *= 2;
}

/* The slot after the run's last event, taken. The pushes below write an
 * event's fields into its slot: an event built on the stack and copied
 * would be read back before its stores are done, a stall each push. */
static Event *run_append(EventQueue *q)
{
    if (q->length == q->room)
        run_grow(q);
    return run_at(q, q->length++);
}

/* The slot before the run's first event, taken. */
static Event *run_prepend(EventQueue *q)
{
    if (q->length == q->room)
        run_grow(q);
    q->head = (q->head - 1) & (q->room - 1);
    q->length++;
    return &q->run[q->head];
}

static G_GNUC_NO_INLINE void heap_push(EventQueue *q, double key, uint64_t seq, int32_t payload,
                                       uint32_t aux)
{
    if (q->size == q->capacity) {
        q->capacity *= 2;
        q->heap = g_renew(Event, q->heap, q->capacity);
    }
    gsize i = q->size++;
    while (i > 0) {
        gsize parent = (i - 1) / 2;
        if (!key_before(key, seq, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = (Event){.key = key, .seq = seq, .payload = payload, .aux = aux};
}

static G_GNUC_NO_INLINE void heap_pop(EventQueue *q)
{
    gsize n = --q->size, i = 0;
    if (n == 0)
        return;
    for (gsize child; (child = 2 * i + 1) < n; i = child) { /* the hole down */
        if (child + 1 < n)
            child += before(&q->heap[child + 1], &q->heap[child]);
        q->heap[i] = q->heap[child];
    }
    Event last = q->heap[n];
    while (i > 0 && before(&last, &q->heap[(i - 1) / 2])) { /* the last event up */
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = last;
}

void evq_push(EventQueue *q, double key, int32_t payload, uint32_t aux)
{
    uint64_t seq = q->next_seq++;
    Event *slot;
    if (q->length == 0 || key >= run_at(q, q->length - 1)->key)
        slot = run_append(q); /* after the run's last: its seq is larger */
    else if (key < q->run[q->head].key)
        slot = run_prepend(q); /* strictly earlier than the run's first */
    else {
        heap_push(q, key, seq, payload, aux);
        return;
    }
    *slot = (Event){.key = key, .seq = seq, .payload = payload, .aux = aux};
}

/* The earliest event, or NULL. */
static const Event *earliest(const EventQueue *q)
{
    if (q->length == 0)
        return q->size ? &q->heap[0] : NULL;
    const Event *first = &q->run[q->head];
    return q->size && before(&q->heap[0], first) ? &q->heap[0] : first;
}

gboolean evq_pop(EventQueue *q, Event *out)
{
    return evq_pop_until(q, INFINITY, out);
}

/* Pops the first event into *out if its key is `key` or less (strictly
 * less if `strictly`). */
static gboolean pop_if(EventQueue *q, double key, gboolean strictly, Event *out)
{
    const Event *e = earliest(q);
    if (!e || e->key > key || (strictly && e->key == key))
        return FALSE;
    *out = *e;
    if (e == &q->heap[0]) {
        heap_pop(q);
    } else {
        q->head = (q->head + 1) & (q->room - 1);
        q->length--;
    }
    return TRUE;
}

gboolean evq_pop_until(EventQueue *q, double key, Event *out)
{
    return pop_if(q, key, FALSE, out);
}

gboolean evq_pop_before(EventQueue *q, double key, Event *out)
{
    return pop_if(q, key, TRUE, out);
}

gboolean evq_peek(const EventQueue *q, Event *out)
{
    const Event *e = earliest(q);
    if (e)
        *out = *e;
    return e != NULL;
}

double evq_next_s(const EventQueue *q)
{
    const Event *e = earliest(q);
    return e ? e->key : INFINITY;
}

gsize evq_size(const EventQueue *q)
{
    return q->size + q->length;
}

void evq_clear(EventQueue *q)
{
    q->size = 0;
    q->length = 0;
}
