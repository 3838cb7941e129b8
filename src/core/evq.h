/* evq.h: the event queue, a binary min-heap of (time, sequence) keys.
 *
 * Events with equal times pop in the order they were pushed (the sequence
 * number breaks ties), so a replay is deterministic bit for bit. The heap is
 * one flat array; it doubles when full, so pushing allocates only while
 * the queue grows past its largest size so far. */
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

/* Pops the earliest event (lowest time, then lowest sequence) into *out;
 * FALSE when the queue is empty. */
gboolean evq_pop(EventQueue *q, Event *out);

gsize evq_size(const EventQueue *q);

/* Empties the queue (its room stays). */
void evq_clear(EventQueue *q);

#endif
