/* metrics.h: what a replayed step tells a person, as plain numbers.
 *
 * Definitions (the README's report section repeats them):
 *   step_time_s     when the last task of the step ends;
 *   compute_s       time the critical rank's compute stream spends computing
 *                   (the critical rank is the one whose compute stream ends
 *                   last, the lowest-numbered on ties);
 *   recompute_s     the part of compute_s spent replaying forwards;
 *   exposed_comm_s  time that rank's compute stream spends in, or waiting
 *                   for, communication other than pipeline transfers;
 *   comm            per purpose (tp, dp, pp, zero) and collective, on that
 *                   rank: collectives joined, bytes it sent, their time,
 *                   and the part of it exposed (as in exposed_comm_s);
 *   bubble_fraction over the forward-backward phase (the first forward's
 *                   start to the last backward's end, on any rank), the
 *                   mean over ranks of the time a rank's compute stream
 *                   spends neither on forward, backward or replay work nor
 *                   in or waiting for its own communication (waiting for
 *                   another stage; an optimizer step that falls inside the
 *                   phase counts as waiting), divided by the phase;
 *   stages          per pipeline stage, on its first rank (tp 0, dp 0): its
 *                   layers, busy and bubble time, peak memory, bytes sent to
 *                   other stages;
 *   links           per link class (NVLink, NIC, spine) the busiest link:
 *                   bytes carried over the step, and utilization (those
 *                   bytes over capacity x step time); and the hottest links
 *                   with the bytes each purpose moved over them (link
 *                   contention only: alone, transfers use no links);
 *   mfu, hfu        model (no recomputation) and executed matrix-multiply
 *                   FLOPs per second, over the GPUs' dense peak in the
 *                   plan's dtype (so at most 1); the model FLOPs also as
 *                   Megatron-Bridge counts them (causal_model_flops);
 *   memory          the highest per-GPU peak, with its breakdown by kind
 *                   (model states, activations, buffers, and the GPU's
 *                   runtime reserve, which counts toward fitting). */
#ifndef PLANSIM_METRICS_METRICS_H
#define PLANSIM_METRICS_METRICS_H

#include "core/graph.h"
#include "engine/engine.h"
#include "layout/layout.h"
#include "net/topology.h"
#include "strategy/emit.h"

/* One kind of collective on one rank, over a step. */
typedef struct {
    int count;           /* collectives joined */
    double bytes;        /* bytes the rank sent, by the algorithm that ran */
    double time_s;       /* their summed durations */
    double exposed_s;    /* the part the compute stream spent in or waiting on */
    unsigned algorithms; /* bit a: some ran CollAlgorithm a */
} CommStat;

/* A link, as the links report names it. */
typedef struct {
    char name[48]; /* "node 0 nic 3 out"; empty when none */
    LinkClass link_class;
    double bytes;             /* carried over the step */
    double utilization;       /* bytes / (capacity x step time) */
    double by_tag[TAG_KINDS]; /* bytes per purpose (TAG_TP .. TAG_AMAX) */
} LinkStat;

#define METRICS_HOT_LINKS 5

/* One pipeline stage, seen on its first rank. */
typedef struct {
    int layers;                   /* transformer layers, all its chunks */
    gboolean embedding, head;     /* whether it holds them */
    double busy_s;                /* computing */
    double bubble_s;              /* waiting for other stages, in the phase */
    double peak_bytes;            /* its memory peak */
    double peak_split[MEM_KINDS]; /* by kind at that peak */
    double p2p_bytes;             /* sent to other stages */
} StageStat;

typedef struct {
    double step_time_s;
    double tokens_per_s;
    double model_flops;    /* per step, no recomputation */
    double hardware_flops; /* per step, executed */
    double causal_model_flops; /* per step, attention's causal half (Megatron-Bridge's) */
    double peak_flops;         /* a GPU's dense peak in the plan's dtype */
    double bf16_peak_flops;    /* and in bf16 */
    double mfu, hfu;           /* over peak_flops */
    double compute_s;
    double recompute_s;
    double exposed_comm_s;
    CommStat comm[TAG_KINDS][COLL_N_OPS]; /* by purpose (TAG_TP .. TAG_AMAX) and op */
    double bubble_fraction;
    StageStat *stages; /* pp entries, owned */
    int n_stages;
    LinkStat busiest[LINK_CLASSES];      /* per class, the most utilized */
    LinkStat hottest[METRICS_HOT_LINKS]; /* the most utilized of all */
    int n_hottest;
    double peak_bytes;
    double capacity_bytes;
    /* host memory of the most loaded node: what offload keeps there
     * (offload.h), and the node's capacity (0 when not given) */
    double host_bytes;
    double host_capacity_bytes;
    gboolean fits; /* the GPU's peak within its capacity, and the host's */
    int peak_rank;
    double peak_split[MEM_KINDS]; /* bytes of each kind at that peak */
    guint64 events;               /* the step's: replayed, or a steady state's skipped (engine.h) */
    guint64 events_skipped;       /* of them, skipped */
    guint64 flows_apart;          /* flows replayed without the share (engine.h) */
    int simulated_ranks; /* ranks replayed: all, or one per symmetric orbit or cell */
    char symmetry[40];   /* "tp x dp", "tp", "dp" or "none", with what a what-if did */
    int critical_rank;
    int critical_stage; /* its pipeline stage */
} Metrics;

/* `x`, a difference of a step's sums (a wait, a bubble), or 0 when it is
 * within 1e-12 of `whole` (the step, the phase) of zero: what rounding
 * leaves of sums that cancel, whichever way they were added (a replay, or
 * its steady state's periods counted as many times as they run). */
double metrics_settled(double x, double whole);

/* Whether a rank that peaks at `gpu_bytes` on its GPU and keeps
 * `host_bytes` on its host (0: nothing) fits `cluster`'s memory: the one
 * verdict, for a replayed peak (Metrics.fits) and for a lower bound of
 * one (a sweep's and advice's pre-checks: a bound over the memory does
 * not fit). */
gboolean metrics_fits(const ClusterSpec *cluster, double gpu_bytes, double host_bytes);

/* Reads the metrics off a replay `r` of `g`, built for `step` laid out as
 * `layout`, its ranks those `sym` simulates, each standing for its orbit
 * or cell (symmetry_weight).
 * metrics_clear frees what they own. */
void metrics_compute(const Graph *g, const Replay *r, const Layout *layout, const Symmetry *sym,
                     const Step *step, Metrics *out);
void metrics_clear(Metrics *m);

/* Model TFLOP/s a GPU as Megatron-Bridge prints it: its FLOPs
 * (causal_model_flops) per second over `gpus`; 0 before a step time. */
double metrics_model_tflops_per_gpu(const Metrics *m, int gpus);

#endif
