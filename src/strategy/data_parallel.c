/* data_parallel.c: data parallelism with gradient accumulation.
 *
 * Schedule: the step's m = B / (b d) micro-batches one after the other,
 * each forward then backward; gradients accumulate locally. Only the last
 * micro-batch's gradients are reduced over the data-parallel group, by ring
 * all-reduce on the communication stream (2 bytes per bf16 gradient):
 *   - overlap_grad_reduce: in buckets of ddp_bucket_size parameters, each
 *     launched as soon as backward has produced all of its gradients, so
 *     the reduction hides behind the rest of backward (Megatron-LM's
 *     distributed optimizer buckets, PyTorch DDP's bucketing);
 *   - otherwise: one all-reduce of every gradient after backward.
 * The optimizer step waits for the last reduction (emit.c). */
#include "strategy/strategy.h"

typedef struct {
    double pending;   /* parameters whose gradients wait for a bucket */
    TaskId producer;  /* the task that produced the last of them */
    int buckets;      /* launched so far */
} DpState;

static gboolean active(const PlanSpec *plan)
{
    (void)plan;
    return TRUE; /* every plan has a data-parallel dimension, even of size 1 */
}

static void schedule(Emit *e, GArray *units)
{
    for (int mb = 0; mb < emit_micro_batches(e); mb++) {
        Unit fwd = {mb, TRUE}, bwd = {mb, FALSE};
        g_array_append_val(units, fwd);
        g_array_append_val(units, bwd);
    }
}

static void all_reduce(Emit *e, DpState *st, double params)
{
    TaskId ar = emit_collective(e, GROUP_DP, STREAM_COMM, COLL_ALL_REDUCE, 2 * params, TAG_DP,
                                (TaskName){.fmt = "dp all_reduce bucket %d", .a = st->buckets++});
    emit_wait(e, st->producer, ar);
}

static void grads_ready(Emit *e, void *state, const Unit *u, TaskId producer, double params)
{
    DpState *st = state;
    if (u->micro_batch != emit_micro_batches(e) - 1)
        return; /* accumulated locally */
    st->producer = producer;
    st->pending += params;
    if (emit_plan(e)->overlap_grad_reduce && st->pending >= emit_plan(e)->ddp_bucket_size) {
        all_reduce(e, st, st->pending);
        st->pending = 0;
    }
}

static void step_end(Emit *e, void *state)
{
    DpState *st = state;
    if (st->pending > 0)
        all_reduce(e, st, st->pending);
}

const Strategy strategy_data_parallel = {
    .name = "data_parallel",
    .active = active,
    .state_size = sizeof(DpState),
    .schedule = schedule,
    .grads_ready = grads_ready,
    .step_end = step_end,
};
