/* evq.c: binary min-heap ordered by (time_s, seq).
 *
 * Invariant: for every i > 0, key(heap[(i - 1) / 2]) <= key(heap[i]), where
 * keys compare by time and then by the strictly increasing push sequence,
 * so no two keys are equal and the pop order is a total order. */
#include "core/evq.h"

struct EventQueue {
    Event *heap;
    gsize size, capacity;
    uint64_t next_seq;
};

EventQueue *evq_new(gsize capacity)
{
    EventQueue *q = g_new0(EventQueue, 1);
    q->capacity = MAX(capacity, 1);
    q->heap = g_new(Event, q->capacity);
    return q;
}

void evq_free(EventQueue *q)
{
    if (!q)
        return;
    g_free(q->heap);
    g_free(q);
}

static gboolean before(const Event *a, const Event *b)
{
    return a->time_s < b->time_s || (a->time_s == b->time_s && a->seq < b->seq);
}

void evq_push(EventQueue *q, double time_s, int32_t payload, uint32_t aux)
{
    if (q->size == q->capacity) {
        q->capacity *= 2;
        q->heap = g_renew(Event, q->heap, q->capacity);
    }
    Event ev = {time_s, q->next_seq++, payload, aux};
    gsize i = q->size++;
    while (i > 0) {
        gsize parent = (i - 1) / 2;
        if (!before(&ev, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = ev;
}

gboolean evq_pop(EventQueue *q, Event *out)
{
    if (q->size == 0)
        return FALSE;
    *out = q->heap[0];
    Event last = q->heap[--q->size];
    gsize i = 0, n = q->size;
    for (;;) {
        gsize child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && before(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!before(&q->heap[child], &last))
            break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (n > 0)
        q->heap[i] = last;
    return TRUE;
}

gboolean evq_peek(const EventQueue *q, Event *out)
{
    if (q->size == 0)
        return FALSE;
    *out = q->heap[0];
    return TRUE;
}

gsize evq_size(const EventQueue *q)
{
    return q->size;
}

void evq_clear(EventQueue *q)
{
    q->size = 0;
}
