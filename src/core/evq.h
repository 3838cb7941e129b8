/* evq.h: the event queue, ordered by (time, sequence) keys.
 *
 * Events with equal times pop in the order they were pushed (the sequence
 * number breaks ties), so a replay is deterministic bit for bit. Storage is
 * two flat arrays, a min-heap and a sorted run for events pushed in time
 * order (evq.c); each doubles when full, so pushing allocates only while
 * the queue first grows. */
#ifndef PLANSIM_CORE_EVQ_H
#define PLANSIM_CORE_EVQ_H

#include <glib.h>
#include <stdint.h>

typedef struct {
    double time_s;
    uint64_t seq;    /* push order, the tie-breaker */
    int32_t payload; /* what happens: for the engine, the task that ends */
    uint32_t aux;    /* the pusher's own: a kind, a version */
} Event;

typedef struct EventQueue EventQueue;

/* An empty queue with room for `capacity` events before it first grows. */
EventQueue *evq_new(gsize capacity);
void evq_free(EventQueue *q);

/* Pushes an event at `time_s`. */
void evq_push(EventQueue *q, double time_s, int32_t payload, uint32_t aux);

/* The earliest event, without popping it; FALSE when the queue is empty. */
gboolean evq_peek(const EventQueue *q, Event *out);

/* The earliest event's time; INFINITY when the queue is empty. */
double evq_next_s(const EventQueue *q);

/* Pops the earliest event (lowest time, then lowest sequence) into *out;
 * FALSE when the queue is empty. */
gboolean evq_pop(EventQueue *q, Event *out);

/* The same, if that event's time is `time_s` or earlier; else FALSE. */
gboolean evq_pop_until(EventQueue *q, double time_s, Event *out);

/* The same, if that event's time is strictly earlier than `time_s`. */
gboolean evq_pop_before(EventQueue *q, double time_s, Event *out);

gsize evq_size(const EventQueue *q);

/* Empties the queue (its room stays). */
void evq_clear(EventQueue *q);

#endif
