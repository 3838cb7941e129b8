/* engine.h: the discrete-event replay of a task graph.
 *
 * The engine pops "task ends" events from its queue in (time, sequence)
 * order and lets the network (net.h) process its own instants in between;
 * when a task's last dependency ends, the task starts at once: compute ends
 * after its duration, a marker at once, a collective when the network says
 * it has ended. Memory operations apply at a task's start or end, and each
 * rank's peak (with its breakdown by category) is recorded. A GPU whose
 * spec has comm_compute_interference computes that much slower while any
 * collective it joins is running, its compute task's end moving as
 * collectives start and end. The engine knows tasks, resources and time,
 * nothing of transformers. */
#ifndef PLANSIM_ENGINE_ENGINE_H
#define PLANSIM_ENGINE_ENGINE_H

#include <glib.h>

#include "core/graph.h"
#include "net/net.h"

typedef struct {
    gsize tasks;
    int ranks;
    double *start_s;    /* per task */
    double *end_s;      /* per task */
    TaskId *critical;   /* per task: the dependency that ended last (TASK_NONE if none) */
    uint8_t *algorithm; /* per task: a collective's CollAlgorithm */
    double makespan_s;  /* when the last task ends */
    guint64 events;     /* events processed: task ends and network instants */
    double *peak_bytes; /* per rank: the most memory in use at any instant */
    double *peak_split; /* per rank, GRAPH_MEM_CATEGORIES each: in use at that peak */
} Replay;

/* Replays a sealed graph on `net`; compute on rank r slows by `interference`
 * while r communicates. Fails (PS_ERROR_STUCK) when some task can never
 * start (a cycle), naming the first such tasks. */
Replay *engine_run(const Graph *g, Net *net, double interference, GError **error);
void replay_free(Replay *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Replay, replay_free)

#endif
