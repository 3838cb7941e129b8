/* evq.h: the event queue, a binary min-heap of (time, sequence) keys.
 *
 * Events with equal times pop in the order they were pushed (the sequence
 * number breaks ties), so a replay is deterministic bit for bit. The heap is
 * one flat array sized up front: pushing never allocates. */
#ifndef PLANSIM_CORE_EVQ_H
#define PLANSIM_CORE_EVQ_H

#include <glib.h>
#include <stdint.h>

typedef struct {
    double time_s;
    uint64_t seq;    /* push order, the tie-breaker */
    int32_t payload; /* what happens: for the engine, the task that ends */
} Event;

typedef struct EventQueue EventQueue;

/* A queue that holds at most `capacity` events at once. */
EventQueue *evq_new(gsize capacity);
void evq_free(EventQueue *q);

/* Pushes an event at `time_s`; the queue must not be full. */
void evq_push(EventQueue *q, double time_s, int32_t payload);

/* Pops the earliest event (lowest time, then lowest sequence) into *out;
 * FALSE when the queue is empty. */
gboolean evq_pop(EventQueue *q, Event *out);

gsize evq_size(const EventQueue *q);

#endif
