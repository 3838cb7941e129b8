/* engine.h: the discrete-event replay of a task graph.
 *
 * The engine pops "task ends" events from the queue in (time, sequence)
 * order; when a task's last dependency ends, the task starts at once and its
 * end is scheduled: compute after its duration, a collective after the time
 * the network model gives, a marker at once. Memory operations apply at a
 * task's start or end, and each rank's peak (with its breakdown by category)
 * is recorded. It knows tasks, resources and time, nothing of transformers. */
#ifndef PLANSIM_CORE_ENGINE_H
#define PLANSIM_CORE_ENGINE_H

#include <glib.h>

#include "core/graph.h"
#include "net/net.h"

typedef struct {
    gsize tasks;
    int ranks;
    double *start_s;    /* per task */
    double *end_s;      /* per task */
    TaskId *critical;   /* per task: the dependency that ended last (TASK_NONE if none) */
    double makespan_s;  /* when the last task ends */
    guint64 events;     /* events processed */
    double *peak_bytes; /* per rank: the most memory in use at any instant */
    double *peak_split; /* per rank, GRAPH_MEM_CATEGORIES each: in use at that peak */
} Replay;

/* Replays a sealed graph. Fails (PS_ERROR_STUCK) when some task can never
 * start (a cycle), naming the first such tasks. */
Replay *engine_run(const Graph *g, const Net *net, GError **error);
void replay_free(Replay *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Replay, replay_free)

#endif
