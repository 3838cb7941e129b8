/* breakdown.h: where one micro-batch's compute goes on a pipeline stage,
 * by kernel class, as a profiler's kernel table groups it (simulate
 * --breakdown; docs/report.md, "Breakdown").
 *
 * A rank of stage `stage` runs the forward of its model chunks' layers
 * (and the embedding on the first stage, the head on the last) once per
 * micro-batch, and their backward: twice each forward operation (its input
 * and weight gradients), then what its recomputation replays and the rest
 * of FlashAttention's backward kernel (transformer.h) — the same
 * operations, at the same costs, as the emitter charges. Attention counts
 * as forward or backward by the pass it runs in; a replay's attention
 * core, run before the backward, counts as backward. The optimizer step
 * is per step. */
#ifndef PLANSIM_METRICS_BREAKDOWN_H
#define PLANSIM_METRICS_BREAKDOWN_H

#include <glib.h>

#include "strategy/step.h"

/* The rows of the table: GEMMs, attention's forward and backward, the
 * memory-bound rest. */
typedef enum {
    BREAKDOWN_GEMM,
    BREAKDOWN_ATTENTION_FORWARD,
    BREAKDOWN_ATTENTION_BACKWARD,
    BREAKDOWN_MEMORY,
    BREAKDOWN_CLASSES
} BreakdownClass;
extern const char *const breakdown_class_names[]; /* "gemm", "attention_forward", ... */

typedef struct {
    int stage;
    double seconds[BREAKDOWN_CLASSES]; /* per micro-batch, forward and backward */
    double kernels[BREAKDOWN_CLASSES]; /* kernels per micro-batch */
    double recompute_s;                /* of the seconds, recomputation's replays */
    double launch_s;                   /* of the seconds, the kernels' launch costs */
    double optimizer_s;                /* per step: gradient norm and Adam */
} Breakdown;

/* The breakdown of a rank of pipeline stage `stage` of the step. */
void breakdown_compute(const Step *step, int stage, Breakdown *out);

/* Its compute per micro-batch: the sum of its classes. */
double breakdown_micro_batch_s(const Breakdown *b);

#endif
