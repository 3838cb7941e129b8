/* data_parallel.c: data parallelism with gradient accumulation.
 *
 * Each rank runs the step's m = B / (b d) micro-batches (in the order
 * pipeline.c gives; on one stage, one after the other, each forward then
 * backward: gradient accumulation). Gradients are reduced over the
 * data-parallel group in the type they accumulate in (states.h: 4 bytes
 * each in fp32, as Megatron-LM reduces bf16 training's main gradients; 2
 * in bf16), over the data-parallel group with its context-parallel ranks
 * (dp x cp ranks hold the same parameters: Megatron-Core's data-parallel
 * group "with context parallel"), on the communication stream, as each backward segment finishes
 * producing them (a split backward's W segment: zero-bubble schedules):
 *   - overlap_grad_reduce: in buckets of at least ddp_bucket_size
 *     parameters (closed at a segment's end), each launched as soon as its
 *     gradients exist, hiding behind the rest of backward (Megatron-LM's
 *     buckets, PyTorch DDP's bucketing); the rest when the unit ends;
 *   - otherwise: everything in one reduction when the unit's backward ends.
 * Without ZeRO gradients accumulate locally and only the last micro-batch
 * reduces them, by all-reduce. With ZeRO the reduction is a reduce-scatter
 * (each rank keeps the shard its optimizer owns), and from stage 2, whose
 * gradients are sharded, every micro-batch reduces its own. With ep > 1
 * the routed experts' gradients reduce the same way over the
 * expert-data-parallel group instead (names "... expert ...", same tag).
 * The optimizer step waits for the last reduction (emit.c). */
#include "net/netbound.h"
#include "strategy/strategy.h"
#include "strategy/states.h"

typedef struct {
    double pending;  /* parameters whose gradients wait for a bucket */
    double experts;  /* of them, routed experts' of ep > 1, reduced over the
                      * expert-data-parallel group (Segment.expert_params) */
    TaskId producer; /* the task that produced the last of them */
    int buckets;     /* launched so far */
} DpState;

static gboolean active(const PlanSpec *plan)
{
    (void)plan;
    return TRUE; /* every plan has a data-parallel dimension, even of size 1 */
}

static void reduce(Emit *e, DpState *st)
{
    /* [zero][experts]: each reduction's name */
    static const char *const names[2][2] = {
        {"dp all_reduce bucket %d", "dp expert all_reduce bucket %d"},
        {"zero reduce_scatter bucket %d", "zero expert reduce_scatter bucket %d"}};
    gboolean zero = emit_plan(e)->zero_stage > 0;
    CollOp op = zero ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
    TaskTag tag = zero ? TAG_ZERO : TAG_DP;
    TaskName name = {.fmt = names[zero][0], .a = st->buckets++};
    double bytes_per_param = states_tensor_bytes(emit_plan(e), TENSOR_GRAD);
    TaskId t = emit_collective(e, GROUP_DP_CP, STREAM_COMM, op,
                               bytes_per_param * (st->pending - st->experts), tag, name);
    emit_wait(e, st->producer, t);
    if (st->experts > 0) {
        name.fmt = names[zero][1];
        t = emit_collective(e, GROUP_EDP, STREAM_COMM, op, bytes_per_param * st->experts, tag,
                            name);
        emit_wait(e, st->producer, t);
    }
    st->pending = 0;
    st->experts = 0;
}

static void segment_end(Emit *e, void *state, const Unit *u, const Segment *seg, TaskId last)
{
    DpState *st = state;
    const PlanSpec *plan = emit_plan(e);
    gboolean every_micro_batch = plan->zero_stage >= 2;
    if (!unit_ends_backward(u) ||
        (!every_micro_batch && u->micro_batch != emit_micro_batches(e) - 1))
        return; /* accumulated locally */
    st->producer = last;
    st->pending += seg->params;
    st->experts += seg->expert_params;
    gboolean unit_ends = emit_segment_next(e, u, seg) == NULL;
    if (unit_ends || (plan->overlap_grad_reduce && st->pending >= plan->ddp_bucket_size))
        reduce(e, st);
}

/* Exposed gradient reduction: overlap it with the backward, else give it
 * more compute to hide behind or fewer ranks. */
static char *comm_advice(TaskTag tag, const PlanSpec *plan, const ClusterSpec *cluster)
{
    (void)cluster;
    if (tag != TAG_DP)
        return NULL;
    if (!plan->overlap_grad_reduce)
        return g_strdup("overlap the gradient reduction with the backward (--overlap-grad-reduce)");
    return g_strdup("more micro-batches a step to hide it behind (--global-batch-size), or fewer "
                    "data-parallel ranks (more tp or pp)");
}

/* The gradients' reductions of `seg` that `times` micro-batches launch,
 * over dp x cp and the experts' over expert data parallel. */
static void reduced_bytes(const PlanSpec *plan, const Segment *seg, double times, double bytes[2])
{
    double grad = states_tensor_bytes(plan, TENSOR_GRAD);
    bytes[0] += netbound_loaded_bytes(times, grad * (seg->params - seg->expert_params),
                                      layout_plan_size(plan, GROUP_DP_CP));
    bytes[1] += netbound_loaded_bytes(times, grad * seg->expert_params,
                                      layout_plan_size(plan, GROUP_EDP));
}

/* In a step: every micro-batch's from ZeRO-2 on, else the last's (a
 * bucket holds whole segments). */
static void segment_comm_bytes(const PlanSpec *plan, const Segment *seg, double bytes[2])
{
    reduced_bytes(plan, seg, plan->zero_stage >= 2 ? plan_spec_micro_batches(plan) : 1, bytes);
}

/* The last micro-batch reduces every segment, each once its backward
 * produced the segment's gradients (segment_end), and the optimizer step
 * waits for the last reduction, the stream's. */
static void segment_reduce_bytes(const PlanSpec *plan, const Segment *seg, double bytes[2])
{
    reduced_bytes(plan, seg, 1, bytes);
}

const Strategy strategy_data_parallel = {
    .name = "data_parallel",
    .active = active,
    .state_size = sizeof(DpState),
    .segment_end = segment_end,
    .comm_advice = comm_advice,
    .segment_comm_bytes = segment_comm_bytes,
    .segment_reduce_bytes = segment_reduce_bytes,
};
