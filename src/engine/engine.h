/* engine.h: the discrete-event replay of a task graph.
 *
 * The engine pops "task ends" events from its queue in (time, sequence)
 * order and lets the network (net.h) process its own instants in between;
 * when a task's last dependency ends, the task starts at once: compute ends
 * after its duration, a marker at once, a collective or a copy when the
 * network says it has ended (a copy is a transfer between a GPU and its
 * host, over the host path's links, net/topology.h). Memory operations
 * apply at a task's start or end, and each rank's peak (with its breakdown
 * by category) is recorded. With an interference (the GPU spec's
 * comm_interference, say) a GPU computes that much slower while any
 * collective it joins is running, its compute task's end moving as
 * collectives start and end. The engine knows tasks,
 * resources and time, nothing of transformers. It builds the network from a
 * description (EngineNet) and keeps it with the replay, which answers for
 * it what the reports need (the bytes each rank sent, the links' load); its
 * users never see it.
 *
 * A graph built short (graph.h, graph_fold) stands for a step whose last
 * period built runs `repeats` more times. Its replay stands for that step
 * when the periods built repeat: every task of a period starts and ends
 * one same interval, the period, after its counterpart in the period
 * before (the k-th task of each, in the order they were added, within
 * 1e-12 of the period), has the same kind, owner, stream, duration or
 * bytes, tag and memory operations, its successors the counterparts of
 * its counterpart's, and from the third period on waits last for the
 * counterpart of what its counterpart waited for; every dependency goes
 * forward through the periods; no
 * task after them waits last for one before them; each rank allocates
 * what it frees in a period. A deterministic replay that
 * has reached such a state repeats it as long as its program does, so the
 * copies would run one period apart and the tasks after them that much
 * later: the replay then says how much each task counts (replay_weight)
 * and how much later it ends in the step (replay_shift_s), and its
 * makespan, events and links' bytes are the step's: each copy's events
 * counted as a period's, those between the instants the last two periods'
 * first tasks start at (events_skipped in all; about as many as a replay
 * of them all counts: where the rounding of times puts two ends a hair
 * apart in one period and together in another, two instants or one). The periods
 * are found in the tasks and their times alone, whatever they stand for. */
#ifndef PLANSIM_ENGINE_ENGINE_H
#define PLANSIM_ENGINE_ENGINE_H

#include <glib.h>

#include "core/graph.h"
#include "net/symmetry.h"
#include "net/topology.h"
#include "spec/cluster.h"

/* The network a replay runs its collectives on: the first `gpus` GPUs of
 * `cluster`, each graph rank on its GPU (graph_gpu). With a symmetry the
 * graph holds the programs of its simulated ranks only (symmetry.h), each
 * standing for its orbit (its cell, symmetry_new_cells), and their
 * collectives for their images (their group's instances). */
typedef struct {
    const ClusterSpec *cluster;
    int gpus;                 /* 0: as many as the graph has ranks */
    const Symmetry *symmetry; /* NULL: the graph holds every rank */
    CollAlgorithm algorithm;  /* forced on every collective; AUTO: the cluster's
                               * choice, else the fastest alone (net.h) */
    gboolean contention;      /* transfers share links max-min fairly; else each
                               * collective takes its time alone */
    gboolean apart;           /* with contention, the flows no other meets run
                               * without the share (net.h's routes apart): the
                               * same replay, cheaper; FALSE for the reference */
    int tags;                 /* task tags, for the links' bytes per purpose */
    double interference;      /* compute on rank r slows by this fraction while r
                               * communicates */
    const double *link_scale; /* per link of the topology (topology.h), the fraction
                               * of its capacity it runs at; NULL: all whole. Only
                               * without a symmetry, or with cells around the
                               * links it slows (symmetry_new_cells) */
    unsigned *broken;         /* out, if not NULL: the symmetry's generators some
                               * collective broke (net_broken), when the replay
                               * fails with PS_ERROR_ASYMMETRIC */
    GArray *marks;            /* out, if not NULL: then also the members the
                               * routes single out (net_marks), SymmetryMark's
                               * appended */
} EngineNet;

/* What a replay found of one task; together, since the replay writes them
 * at about the same time. */
typedef struct {
    double start_s, end_s;
    TaskId critical; /* the dependency that ended last (TASK_NONE if none); of those that
                      * ended together (engine.c's TIE), the first in engine.c's order */
    int32_t waiting; /* the replay's count of its dependencies not yet ended:
                      * 0 once it has started */
} ReplayTask;

typedef struct {
    gsize tasks;
    int ranks;
    ReplayTask *task;   /* per task */
    uint8_t *algorithm; /* per task: a collective's CollAlgorithm */
    double makespan_s;  /* when the last task ends */
    guint64 events;     /* events processed: task ends and network instants */
    guint64 flows_apart; /* flows replayed without the share (EngineNet.apart) */
    double *peak_bytes; /* per rank: the most memory in use at any instant */
    double *peak_split; /* per rank, GRAPH_MEM_CATEGORIES each: in use at that peak */
    /* a graph built short whose periods repeated: */
    int repeats;            /* copies of the last period the step runs besides it (0: none) */
    double period_s;        /* how long a period lasts */
    guint64 events_skipped; /* of `events`, the copies': not replayed */
    const int8_t *period;   /* per task, its period (graph_periods); NULL: none */
    int last_period;        /* the one repeated */
} Replay;

/* How many of task `id` the step runs: 1, or for a task of the repeated
 * period 1 + repeats. */
static inline double replay_weight(const Replay *r, TaskId id)
{
    return r->repeats && r->period[id] == r->last_period ? 1.0 + r->repeats : 1.0;
}

/* How much later than replayed task `id` starts and ends in the step: 0,
 * or for a task after the periods the copies' repeats x period_s (the
 * repeated period's own tasks are its first copy). */
static inline double replay_shift_s(const Replay *r, TaskId id)
{
    return r->repeats && r->period[id] > r->last_period ? r->repeats * r->period_s : 0.0;
}

/* Replays a sealed graph on the network `desc` describes. Fails
 * (PS_ERROR_STUCK) when some task can never start (a cycle), naming the
 * first such tasks; with a symmetry, (PS_ERROR_ASYMMETRIC) as soon as a
 * collective breaks it; for a graph built short, (PS_ERROR_NO_PERIOD)
 * when its periods do not repeat, saying how. */
Replay *engine_run(const Graph *g, const EngineNet *desc, GError **error);
void engine_replay_free(Replay *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Replay, engine_replay_free)

/* Bytes `rank` sent in collective task `id` of the replayed graph `g`, by
 * the algorithm that ran it. */
double engine_sent_bytes(const Replay *r, const Graph *g, TaskId id, int rank);

/* The network's links, and the bytes each carried over the replay: in all,
 * and labelled `tag`. */
const Topology *engine_topology(const Replay *r);
double engine_link_bytes(const Replay *r, int link);
double engine_link_tag_bytes(const Replay *r, int link, int tag);

#endif
