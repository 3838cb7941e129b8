/* step.h: a resolved step, made once.
 *
 * The model, the cluster and a resolved, checked plan (strategy_resolve),
 * with what the layers above them derive from the three: the GPU as the
 * plan runs it, one GPU's shard of a micro-batch and the micro-batches a
 * pipeline runs. A command, a sweep's candidate or advice's makes one
 * where it resolves a plan (step_of), and passes it down instead of the
 * three: to the strategies' bounds (Strategy.block_bound,
 * stream_bound_s; estimate.h), the emitter (emit_step), the metrics and a
 * run's totals (metrics_compute, runplan_compute). A value that owns
 * nothing: it lives no longer than the three it points at, and a change
 * to the plan needs a new one. */
#ifndef PLANSIM_STRATEGY_STEP_H
#define PLANSIM_STRATEGY_STEP_H

#include "cost/transformer.h"
#include "spec/cluster.h"
#include "spec/model.h"
#include "spec/plan.h"

typedef struct {
    const ModelSpec *model;
    const ClusterSpec *cluster;
    const PlanSpec *plan; /* resolved */
    GpuSpec gpu;          /* the cluster's GPU as the plan runs it (plan_spec_run_gpu) */
    Shard shard;          /* one GPU's share of a micro-batch (transformer_shard) */
    int micro_batches;    /* per pipeline and step (plan_spec_micro_batches) */
} Step;

/* The step of a resolved plan. */
Step step_of(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan);

#endif
