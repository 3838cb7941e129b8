/* sweep.h: every plan of a grid, simulated on a thread pool.
 *
 * The grid's combinations are numbered in a fixed order (the axes' values
 * in the order given, the last axis fastest); combination i is applied over
 * the base plan (the flags), its dp filled from the GPU count, resolved and
 * checked: invalid ones are skipped and counted by reason, the others
 * simulated. Rows come back in combination order, each exactly the CSV row
 * `plansim simulate --format csv` prints for that plan, so the output does
 * not depend on the thread count. A shard K of N takes the combinations
 * that sweep_shard_of gives K. */
#ifndef PLANSIM_APP_SWEEP_H
#define PLANSIM_APP_SWEEP_H

#include <glib.h>

#include "spec/spec.h"

typedef struct {
    const ModelSpec *model;
    const ClusterSpec *cluster;
    const PlanSpec *base; /* fixed fields; its dp, if 0, is filled per plan */
    const PlanGrid *grid;
    int gpus; /* GPUs a plan uses: dp = gpus / (tp x pp) */
    int threads;
    int shard, shards;   /* 1-based shard of `shards` */
    gboolean progress;   /* a progress line on stderr */
    volatile gint *stop; /* set (by a signal handler) to stop early */
} SweepSpec;

typedef struct {
    char *csv;     /* the row, with its newline */
    char *summary; /* "tp 8 pp 4 dp 32 mbs 1 zero 1 ..." */
    double tokens_per_s;
    double step_time_s;
    double peak_bytes;
    gboolean fits;
} SweepRow;

typedef struct {
    GArray *rows;        /* SweepRow, in combination order */
    char *header;        /* the CSV header line */
    gint64 combinations; /* in this shard */
    int skipped;
    GHashTable *reasons; /* char * reason -> count (GINT_TO_POINTER) */
    gboolean stopped;    /* the stop flag was set: rows are incomplete */
} SweepResult;

/* The shard (1 .. shards) of combination number `combination`: the same
 * on every machine, every combination in exactly one. */
int sweep_shard_of(gint64 combination, int shards);

/* Runs the sweep. Fails (PS_ERROR_INPUT) on a grid too large or a shard
 * out of range. */
SweepResult *sweep_run(const SweepSpec *spec, GError **error);
void sweep_result_free(SweepResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SweepResult, sweep_result_free)

/* Indices of the best `k` rows that fit, by tokens/s (ties: the earlier);
 * returns how many (fewer when fewer fit). */
int sweep_best(const SweepResult *r, int k, guint *best);

#endif
