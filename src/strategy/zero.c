/* zero.c: ZeRO (Rajbhandari et al., SC'20) stages 1 to 3; stage 3 is FSDP.
 *
 * Model states are sharded over the data-parallel group of d ranks, with
 * its context-parallel ranks d x c (Megatron-Core's distributed optimizer):
 * stage 1 the optimizer states, stage 2 also the gradients, stage 3 also
 * the parameters (emit_shard_state). The gradient reduce-scatter is data
 * parallelism's (data_parallel.c). Here:
 *   - stages 1 and 2: after the optimizer step, an all-gather of the
 *     updated bf16 parameters, so every rank has them all again;
 *   - stage 3: before each segment's forward and backward, an all-gather
 *     of its parameters on the communication stream, the segment's compute
 *     waiting for it. The gather of the next segment is issued one segment
 *     ahead (it waits only for the end of the segment before this one), so
 *     it runs while this one computes and at most two gathered copies live
 *     at once; each is a buffer from its gather's start to its segment's
 *     end.
 * Per step and GPU, in parameter elements: stages 1 and 2 move 2 Psi
 * (reduce-scatter and all-gather), stage 3 3 Psi per micro-batch (two
 * gathers and a reduce-scatter). The model states' bytes per parameter and
 * their split are zero.h's, here whether or not the plan uses ZeRO. */
#include "strategy/zero.h"

#include "strategy/strategy.h"

double zero_bytes_per_param(const PlanSpec *plan, MemKind kind)
{
    switch (kind) {
    case MEM_PARAMS:
        return dtype_bytes(DTYPE_BF16);
    case MEM_GRADS:
        return plan->grad_accum_dtype == GRAD_ACCUM_FP32 ? 4 : dtype_bytes(DTYPE_BF16);
    case MEM_OPTIMIZER:
        return plan->offload == OFFLOAD_OPTIMIZER ? 0 : ZERO_OPTIMIZER_BYTES;
    default:
        return 0;
    }
}

void zero_state_shards(const PlanSpec *plan, int shards[MEM_KINDS])
{
    for (int k = 0; k < MEM_KINDS; k++)
        shards[k] = 1;
    if (plan->zero_stage >= 1)
        shards[MEM_OPTIMIZER] = plan->dp * plan->cp;
    if (plan->zero_stage >= 2)
        shards[MEM_GRADS] = plan->dp * plan->cp;
    if (plan->zero_stage >= 3)
        shards[MEM_PARAMS] = plan->dp * plan->cp;
}

double zero_optimizer_s(const GpuSpec *gpu, const PlanSpec *plan, double params)
{
    if (plan->offload == OFFLOAD_OPTIMIZER)
        return 0;
    int shards[MEM_KINDS];
    zero_state_shards(plan, shards);
    OpList ops;
    tf_optimizer_ops(params / shards[MEM_OPTIMIZER], &ops);
    return tf_ops_s(gpu, &ops);
}

double zero_states_bytes(const PlanSpec *plan, double params)
{
    int shards[MEM_KINDS];
    zero_state_shards(plan, shards);
    double bytes = 0;
    for (int k = MEM_PARAMS; k <= MEM_OPTIMIZER; k++)
        bytes += zero_bytes_per_param(plan, (MemKind)k) * params / shards[k];
    return bytes;
}

typedef struct {
    const Segment *ahead; /* the segment gathered ahead, or NULL */
    TaskId ahead_task;    /* its gather */
    TaskId prev_end;      /* the last compute of the segment before */
} ZeroState;

static gboolean active(const PlanSpec *plan)
{
    return plan->zero_stage > 0;
}

static int piece_tasks(const PlanSpec *plan)
{
    return plan->zero_stage == 3; /* a gather per segment */
}

static void step_begin(Emit *e, void *state)
{
    ZeroState *st = state;
    st->ahead_task = TASK_NONE;
    st->prev_end = TASK_NONE;
    int shards[MEM_KINDS];
    zero_state_shards(emit_plan(e), shards);
    for (int k = MEM_PARAMS; k <= MEM_OPTIMIZER; k++)
        emit_shard_state(e, (MemKind)k, shards[k]);
}

static TaskId gather(Emit *e, const Unit *u, const Segment *seg, TaskId after)
{
    static const char *const names[] = {
        [SEGMENT_EMBEDDING] = "zero all_gather mb%d embedding",
        [SEGMENT_LAYER] = "zero all_gather mb%d L%d",
        [SEGMENT_HEAD] = "zero all_gather mb%d head",
    };
    /* the bf16 parameters the segment computes with, whole */
    double bytes = zero_bytes_per_param(emit_plan(e), MEM_PARAMS) * seg->uses;
    TaskId t =
        emit_collective(e, GROUP_DP_CP, STREAM_COMM, COLL_ALL_GATHER, bytes, TAG_ZERO,
                        (TaskName){.fmt = names[seg->kind], .a = u->micro_batch, .b = seg->layer});
    emit_wait(e, after, t);
    emit_mem(e, t, MEM_BUFFERS, bytes, FALSE);
    return t;
}

static void segment_begin(Emit *e, void *state, const Unit *u, const Segment *seg)
{
    ZeroState *st = state;
    if (emit_plan(e)->zero_stage < 3)
        return;
    TaskId mine = st->ahead == seg ? st->ahead_task : gather(e, u, seg, TASK_NONE);
    emit_gate(e, mine);
    const Segment *next = emit_segment_next(e, u, seg);
    st->ahead = next;
    st->ahead_task = next ? gather(e, u, next, st->prev_end) : TASK_NONE;
}

static void segment_end(Emit *e, void *state, const Unit *u, const Segment *seg, TaskId last)
{
    ZeroState *st = state;
    (void)u;
    if (emit_plan(e)->zero_stage < 3)
        return;
    if (emit_plan(e)->dp * emit_plan(e)->cp > 1)
        emit_mem(e, last, MEM_BUFFERS, -zero_bytes_per_param(emit_plan(e), MEM_PARAMS) * seg->uses,
                 TRUE);
    st->prev_end = last;
}

static void after_optimizer(Emit *e, void *state, TaskId optimizer)
{
    (void)state;
    if (emit_plan(e)->zero_stage >= 3)
        return; /* parameters stay sharded */
    TaskId t = emit_collective(e, GROUP_DP_CP, STREAM_COMM, COLL_ALL_GATHER,
                               zero_bytes_per_param(emit_plan(e), MEM_PARAMS) * emit_params(e),
                               TAG_ZERO, (TaskName){.fmt = "zero all_gather params"});
    emit_wait(e, optimizer, t);
}

const Strategy strategy_zero = {
    .name = "zero",
    .active = active,
    .piece_tasks = piece_tasks,
    .state_size = sizeof(ZeroState),
    .step_begin = step_begin,
    .segment_begin = segment_begin,
    .segment_end = segment_end,
    .after_optimizer = after_optimizer,
};
