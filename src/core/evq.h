/* evq.h: the event queue, ordered by (key, sequence).
 *
 * The key is what orders the events: the time of an event for the engine
 * and the network. Events with equal keys pop in the order they
 * were pushed (the sequence number breaks ties), so a replay is
 * deterministic bit for bit. Storage is
 * two flat arrays, a min-heap and a sorted run for events pushed in time
 * order (evq.c); each doubles when full, so pushing allocates only while
 * the queue first grows. */
#ifndef PLANSIM_CORE_EVQ_H
#define PLANSIM_CORE_EVQ_H

#include <glib.h>
#include <stdint.h>

typedef struct {
    double key;      /* the order: a time in seconds */
    uint64_t seq;    /* push order, the tie-breaker */
    int32_t payload; /* what happens: for the engine, the task that ends */
    uint32_t aux;    /* the pusher's own: a kind, a version */
} Event;

typedef struct EventQueue EventQueue;

/* An empty queue with room for `capacity` events before it first grows. */
EventQueue *evq_new(gsize capacity);
void evq_free(EventQueue *q);

/* Pushes an event of key `key`. */
void evq_push(EventQueue *q, double key, int32_t payload, uint32_t aux);

/* The first event (lowest key, then lowest sequence), without popping it;
 * FALSE when the queue is empty. */
gboolean evq_peek(const EventQueue *q, Event *out);

/* The first event's key (the next time, for a queue of times); INFINITY
 * when the queue is empty. */
double evq_next_s(const EventQueue *q);

/* Pops the first event into *out; FALSE when the queue is empty. */
gboolean evq_pop(EventQueue *q, Event *out);

/* The same, if that event's key is `key` or less; else FALSE. */
gboolean evq_pop_until(EventQueue *q, double key, Event *out);

/* The same, if that event's key is strictly less than `key`. */
gboolean evq_pop_before(EventQueue *q, double key, Event *out);

gsize evq_size(const EventQueue *q);

/* Empties the queue (its room stays). */
void evq_clear(EventQueue *q);

#endif
