/* step.h: a resolved step, made once.
 *
 * The model, the cluster and a resolved, checked plan (strategy_resolve),
 * with what the layers above them derive from the three: the GPU as the
 * plan runs it, one GPU's shard of a micro-batch and the micro-batches a
 * pipeline runs, and how the step holds its model states. A command, a
 * sweep's candidate or advice's makes one where it resolves a plan
 * (step_of, strategy.h), and passes it down instead of the three: to the strategies' bounds
 * (Strategy.block_bound, stream_bound_s; estimate.h), the emitter (emit_step), the metrics and a
 * run's totals (metrics_compute, runplan_compute). A value that owns
 * nothing: it lives no longer than the three it points at, and a change
 * to the plan needs a new one. */
#ifndef PLANSIM_STRATEGY_STEP_H
#define PLANSIM_STRATEGY_STEP_H

#include "cost/transformer.h"
#include "spec/cluster.h"
#include "spec/model.h"
#include "spec/plan.h"

/* Memory by kind: model states (states.h), activations, communication
 * buffers, and the GPU's runtime reserve (CUDA context, NCCL's buffers,
 * allocator fragmentation: GpuSpec.reserve_bytes, held all step). */
typedef enum {
    MEM_PARAMS,
    MEM_GRADS,
    MEM_OPTIMIZER,
    MEM_ACTIVATIONS,
    MEM_BUFFERS,
    MEM_RESERVE,
    MEM_KINDS
} MemKind;

/* How a step holds its model states (states.h sizes them by it): the
 * bytes one parameter's state of each kind takes on the GPU, unsplit
 * (MEM_PARAMS, MEM_GRADS, MEM_OPTIMIZER; 0: it is not on the GPU), the
 * bytes of a transformer layer's parameter as held, how the optimizer
 * keeps its states, and the ranks each
 * kind is split over, of the dense parameters' states and of the routed
 * experts' (1: not split). states_rule gives every plan's; each active
 * strategy's `states` hook then sets what it owns (zero.c the split,
 * offload.c the optimizer on the host; strategy_states_rule). */
typedef struct {
    double bytes_per_param[MEM_KINDS];
    double layer_param_bytes;
    int shards[MEM_KINDS], expert_shards[MEM_KINDS];
    OptimizerStates optimizer; /* how Adam keeps them (the plan's optimizer_states) */
} StatesRule;

typedef struct {
    const ModelSpec *model;
    const ClusterSpec *cluster;
    const PlanSpec *plan; /* resolved */
    GpuSpec gpu;          /* the cluster's GPU as the plan runs it (plan_spec_run_gpu) */
    Shard shard;          /* one GPU's share of a micro-batch (transformer_shard) */
    int micro_batches;    /* per pipeline and step (plan_spec_micro_batches) */
    StatesRule states;    /* strategy_states_rule */
} Step;

#endif
