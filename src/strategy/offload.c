/* offload.c: ZeRO-Offload, the optimizer on the host (offload.h). */
#include "strategy/offload.h"

#include "strategy/strategy.h"
#include "strategy/zero.h"

/* The parameters of the optimizer shard of a rank holding `params`. */
static double shard_params(const PlanSpec *plan, double params)
{
    int shards[MEM_KINDS];
    zero_state_shards(plan, shards);
    return params / shards[MEM_OPTIMIZER];
}

double offload_pcie_bytes_per_param(void)
{
    return dtype_bytes(DTYPE_BF16);
}

double offload_host_bytes(const PlanSpec *plan, double params)
{
    if (plan->offload != OFFLOAD_OPTIMIZER)
        return 0;
    return (ZERO_OPTIMIZER_BYTES + offload_pcie_bytes_per_param()) * shard_params(plan, params);
}

double offload_cpu_adam_s(const ClusterSpec *cluster, const PlanSpec *plan, double params)
{
    return shard_params(plan, params) * cluster->gpus_per_node / cluster->cpu_adam_params_s;
}

static gboolean active(const PlanSpec *plan)
{
    return plan->offload == OFFLOAD_OPTIMIZER;
}

/* A task of `seconds` on the offload stream, after `after`. */
static TaskId offload_task(Emit *e, double seconds, TaskId after, const char *name)
{
    TaskId t = emit_background(e, STREAM_OFFLOAD, seconds, TAG_OFFLOAD, (TaskName){.fmt = name});
    emit_wait(e, after, t);
    return t;
}

/* A PCIe transfer of the bf16 shard of `params` parameters, after `after`. */
static TaskId transfer(Emit *e, double params, TaskId after, const char *name)
{
    double bytes = offload_pcie_bytes_per_param() * shard_params(emit_plan(e), params);
    return offload_task(e, bytes / emit_gpu(e)->pcie_Bps, after, name);
}

/* The last micro-batch's backward sends each segment's gradient shard
 * down once the segment has produced it and the reductions launched so
 * far have ended. */
static void segment_end(Emit *e, void *state, const Unit *u, const Segment *seg, TaskId last)
{
    (void)state;
    if (u->forward || u->micro_batch != emit_micro_batches(e) - 1)
        return;
    TaskId down = transfer(e, seg->params, last, "offload grads down");
    emit_wait(e, emit_last(e, STREAM_COMM), down);
}

/* The host's Adam step after the last gradients came down, then the
 * parameters up; the GPU's optimizer step (next on the compute stream)
 * waits for them. */
static void step_end(Emit *e, void *state)
{
    (void)state;
    double adam_s = offload_cpu_adam_s(emit_cluster(e), emit_plan(e), emit_params(e));
    TaskId adam = offload_task(e, adam_s, emit_last(e, STREAM_COMM), "offload cpu adam");
    emit_gate(e, transfer(e, emit_params(e), adam, "offload params up"));
}

const Strategy strategy_offload = {
    .name = "offload",
    .active = active,
    .step_end = step_end,
    .segment_end = segment_end,
};
