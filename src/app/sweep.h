/* sweep.h: every plan of a space, ranked by branch and bound on a thread pool.
 *
 * The space's combinations (its cluster sizes times its grid, app/space.h)
 * are numbered in a fixed order (the axes' values in the order given, the
 * last axis fastest); combination i is applied over the base plan (the
 * flags), its dp filled from the GPU count, resolved and checked. Those
 * the walk's rules refuse (space.h) are invalid and counted, without a
 * row; each other gets a row, in combination order, with a status
 * (report.h's ReportStatus):
 *   - invalid: the plan does not resolve or is not supported (its reason);
 *   - does_not_fit: its memory lower bound (strategy/estimate.h) exceeds
 *     the GPU's memory, so its replayed peak would too: not replayed;
 *   - simulated: replayed, the row exactly the CSV row `plansim simulate
 *     --format csv` prints for that plan;
 *   - pruned: its score's upper bound (its score, SweepRank, at its
 *     step-time lower bound) cannot beat the top_k-th best simulated plan
 *     that fits: not replayed, its bound in the row.
 * The other plans are replayed in increasing order of their step-time lower
 * bound (ties: combination number), in waves of a fixed size (from top_k,
 * not the threads); before each wave every remaining plan that cannot beat
 * the best top_k so far (sweep_best's order: score, then the earlier
 * combination) is pruned. So the top_k best plans that fit are exactly
 * those an exhaustive replay ranks first, and the rows do not depend on the
 * thread count. `exhaustive` replays every valid plan: no pre-check, no
 * pruning. A shard K of N takes the combinations that sweep_shard_of gives
 * K and prunes within them: its best top_k are the shard's, and the best
 * top_k of the shards' best are the whole grid's. */
#ifndef PLANSIM_APP_SWEEP_H
#define PLANSIM_APP_SWEEP_H

#include <glib.h>

#include "app/whatif.h"
#include "metrics/runplan.h"
#include "output/report.h"
#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"
#include "spec/grid.h"

/* What a sweep ranks plans by: tokens/s (the default), or, for a run of
 * SweepSpec.tokens tokens (metrics/training.h), its wall time or its
 * GPU-hours (the cost's order, whatever the price). With the GPU count
 * fixed, GPU-hours follow the wall time; across GPU counts (a grid over
 * dp) the cheapest run is the one of most tokens/s per GPU. Or the run's
 * mean wall-clock time with failures, checkpoints and restarts
 * (metrics/runplan.h, SweepSpec.run): a plan of bigger checkpoints or
 * more nodes can lose to a slower one. */
typedef enum {
    SWEEP_RANK_TOKENS_PER_S,
    SWEEP_RANK_TIME,
    SWEEP_RANK_COST,
    SWEEP_RANK_RUN_TIME
} SweepRank;
extern const char *const sweep_rank_names[]; /* "tokens_per_s", "time", "cost", "run-time",
                                              * NULL */

/* The most plans a sweep runs: combinations its space's rules admit. */
#define SWEEP_MAX_PLANS 10000000

/* The most plans an exhaustive sweep replays unless told more
 * (SweepSpec.max_plans, --max-plans): each is a replay, where branch and
 * bound replays a few dozen of any space. */
#define SWEEP_EXHAUSTIVE_PLANS 1000

/* The best plans a sweep ranks unless told otherwise. */
#define SWEEP_DEFAULT_TOP 10

typedef struct {
    const ModelSpec *model;
    const ClusterSpec *cluster;         /* the cluster (with clusters: the first) */
    const ClusterSpec *const *clusters; /* the cluster sizes swept (--nodes 64,128),
                                         * n_clusters of them; NULL: cluster alone */
    int n_clusters;
    const PlanSpec *base; /* fixed fields; its dp, if 0, is filled per plan */
    const PlanGrid *grid;
    int gpus; /* GPUs a plan uses (dp = gpus / (tp x cp x pp)); 0: its cluster's */
    int threads;
    int shard, shards;     /* 1-based shard of `shards` */
    gboolean progress;     /* a progress line on stderr */
    volatile gint *stop;   /* set (by a signal handler) to stop early */
    int top;               /* K, the best plans kept exact; 0: SWEEP_DEFAULT_TOP */
    gboolean exhaustive;   /* replay every valid plan */
    gint64 max_plans;      /* exhaustive: the most plans of the shard (those the space's
                            * rules admit); 0: SWEEP_EXHAUSTIVE_PLANS */
    double tokens;         /* of the training run, for its totals; 0: none */
    SweepRank rank_by;     /* time, cost and run-time need tokens */
    const RunChoice *run;  /* run-time's trials, seed and checkpoints */
    const WhatIf *whatif;  /* applied to every plan (whatif.h); NULL: none */
    gboolean csv;          /* every row's CSV (for -o); else only the simulated rows' */
} SweepSpec;

typedef struct {
    char *csv; /* the row, with its newline; NULL unless simulated or SweepSpec.csv */
    ReportStatus status;
    gint64 combination;
    double tokens_per_s; /* simulated */
    double mfu;          /* simulated: model FLOPs over the GPUs' peak in the plan's dtype */
    double tflops;       /* simulated: model TFLOP/s a GPU, Megatron-Bridge's */
    double score;        /* simulated: the figure ranked by (rank_by), larger better */
    double step_time_s;  /* simulated; pruned: the bound */
    double bound_s;      /* the step-time lower bound; 0 for an invalid plan */
    double peak_bytes;   /* simulated; does_not_fit: the memory bound (without a CSV, its
                          * model states' alone when they pass the GPU's memory) */
    gboolean fits;       /* simulated and fits */
    gint64 twin_of;      /* a twin (sweep.c): the row of the first plan of its normal
                          * form, whose figures it has; -1 otherwise */
} SweepRow;

typedef struct {
    GArray *rows;                  /* SweepRow, one per combination the walk visits
                                    * (app/space.h), in combination order */
    char *header;                  /* the CSV header line */
    gint64 combinations;           /* in this shard: its rows, and with shard 1 the
                                    * combinations refused by the walk's rules */
    gint64 count[REPORT_STATUSES]; /* combinations per status: refused ones invalid */
    gint64 refused;                /* invalid without a row: refused by the walk */
    gint64 replayed;               /* replays run: the simulated rows less the twins
                                    * (sweep.c) that took a replay's figures */
    GHashTable *reasons;           /* char * reason -> gint64 * count, of the invalid */
    gboolean stopped;              /* the stop flag was set: rows are incomplete */
} SweepResult;

/* The shard (1 .. shards) of combination number `combination`: the same
 * on every machine, every combination in exactly one. */
int sweep_shard_of(gint64 combination, int shards);

/* Runs the sweep. Fails (PS_ERROR_INPUT) on a grid too large, a shard out
 * of range, or an exhaustive sweep over more than max_plans plans, before
 * any is made (naming --exhaustive, or --jitter, whose noise makes a sweep
 * exhaustive, and --max-plans). */
SweepResult *sweep_run(const SweepSpec *spec, GError **error);
void sweep_result_free(SweepResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SweepResult, sweep_result_free)

/* Indices of the best `k` simulated rows that fit, by their score (ties:
 * the earlier), twins left out (each normal form once: the row it took
 * the figures of); returns how many (fewer when fewer fit). */
int sweep_best(const SweepResult *r, int k, guint *best);

/* Plans whose throughputs are within this share of each other and that
 * differ only in virtual stages, the micro-batch size or the offload of
 * activations are near-twins: one choice, not two answers
 * (sweep_best_distinct). */
#define SWEEP_NEAR 0.005

/* The best `k` groups of simulated rows that fit (sweep_best's order),
 * each of near-twins: rows that differ only in chunks, micro-batches or
 * the activations' offload,
 * each within SWEEP_NEAR of the group's row just above it, so that the
 * groups of the same plan otherwise are more than SWEEP_NEAR apart. Each
 * group as the row of its simplest plan (no offload of activations, then
 * the fewest chunks, then the largest micro-batch) among those within SWEEP_NEAR of its best, into
 * `best`, and the group's other rows, best first, into near[i] (new arrays
 * of guint, the caller's); returns how many groups. No two rows of `best`
 * that differ only so are within SWEEP_NEAR. */
int sweep_best_distinct(const SweepSpec *spec, const SweepResult *r, int k, guint *best,
                        GArray **near);

/* The sweep's CSV (SweepSpec.csv), for a spreadsheet: the header with a
 * `rank` column first, then the rows that were simulated and fit, best
 * first, each with its rank (sweep_best's order, 1 the best; a twin has
 * its first's rank and follows it); with `all_rows`, every other row
 * after them, in combination order, its rank blank. The ranks are those
 * of sweep_best down to SweepSpec.top; below it, among the plans the
 * sweep replayed. Newly allocated. */
char *sweep_csv(const SweepResult *r, gboolean all_rows);

/* The plan of a valid row's combination, resolved, as the sweep ran it. */
PlanSpec *sweep_plan(const SweepSpec *spec, const SweepRow *row);

/* The cluster a row's plan runs on, and its index in SweepSpec.clusters
 * (0 without them). */
const ClusterSpec *sweep_cluster(const SweepSpec *spec, const SweepRow *row);
int sweep_cluster_index(const SweepSpec *spec, const SweepRow *row);

/* A valid row's plan in one line: "tp 8 x pp 4 x dp 32, batch ...". */
char *sweep_summary(const SweepSpec *spec, const SweepRow *row);

/* What an axis of the grid bought the winner: the best plan that fits
 * with the axis's field at its default value (plan_fields.def). The best
 * the sweep replayed at the default first; then the rows it pruned at the
 * default, the winner's own at it first, the rest in order of their
 * bound, each replayed unless its bound cannot beat the best so far: the
 * search ends exact when none is left that could, or after
 * SWEEP_GAIN_REPLAYS replays, when the best found may fall short of the
 * true best at the default (`exact` FALSE: the gain is at most the
 * winner's over it).
 * `row` is that plan's row, its `score` its figure (0: none fits). */
#define SWEEP_GAIN_REPLAYS 4
/* The same for the best on another cluster (sweep_cluster_bests), a
 * whole space of its own whose bounds are looser. */
#define SWEEP_CLUSTER_REPLAYS 16
typedef struct {
    PlanField field; /* PLAN_N_FIELDS: a cluster (sweep_cluster_bests) */
    int value;       /* the default (a cluster: its index) */
    gint64 row; /* -1: no plan fits with it */
    double score;
    gboolean exact;
} SweepAxisGain;

/* The gains of the axes on which the winner (row `winner`, simulated)
 * has not the default value, into `out` (room for one per axis of the
 * grid); returns how many. */
int sweep_axis_gains(const SweepSpec *spec, const SweepResult *r, guint winner, SweepAxisGain *out);

/* The best plan that fits on each cluster of the space but the winner's
 * (SweepSpec.clusters, in order), found as sweep_axis_gains finds an
 * axis's, the winner's own plan on that cluster first: `value` is the
 * cluster's index in SweepSpec.clusters, `field` PLAN_N_FIELDS. Into
 * `out` (room for n_clusters - 1); returns how many. */
int sweep_cluster_bests(const SweepSpec *spec, const SweepResult *r, guint winner,
                        SweepAxisGain *out);

#endif
