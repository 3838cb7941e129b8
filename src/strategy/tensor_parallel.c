/* tensor_parallel.c: Megatron-LM tensor parallelism, with or without
 * sequence parallelism (Shoeybi et al. 2019; Korthikanti et al. 2022).
 *
 * Each GPU of a group of t computes 1/t of every GEMM (QKV and MLP up by
 * column, projection and MLP down by row) and holds 1/t of the weights;
 * the embedding and the logits are split by vocabulary (transformer.c has
 * the shares). The collectives run on the compute stream, in its critical
 * path, over the t ranks, each of b s h bf16 elements:
 *   - every block's forward and backward ends with an all-reduce (the
 *     row-parallel output's sum, the column-parallel input gradient's sum):
 *     4 per layer per micro-batch, 6 when full recomputation replays the
 *     forward; the embedding's forward and the head's backward end with
 *     one too (vocabulary-parallel lookup and output layer);
 *   - with sequence parallelism each all-reduce becomes a reduce-scatter at
 *     the same place and an all-gather at its mirror place (the start of
 *     the piece in the other direction), the same volume in all. */
#include "strategy/strategy.h"
#include "base/error.h"

static gboolean active(const PlanSpec *plan)
{
    return plan->tp > 1;
}

static int piece_tasks(const PlanSpec *plan)
{
    (void)plan;
    return 2; /* a sum, and with sequence parallelism a gather */
}

static gboolean divides(const PlanSpec *plan, int size, const char *what, GError **error)
{
    if (size % plan->tp == 0)
        return TRUE;
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected a divisor of %s = %d, got %d",
                plan_field_origin(plan, PLAN_TP), what, size, plan->tp);
    return FALSE;
}

static gboolean check(const PlanSpec *plan, const ModelSpec *m, GError **error)
{
    if (plan->sequence_parallel && plan->tp == 1)
        return plan_field_fail(error, plan, PLAN_SEQUENCE_PARALLEL,
                               "false when tp = 1 (it splits the sequence over the "
                               "tensor-parallel group)");
    if (!divides(plan, m->attention_heads, "attention_heads", error) ||
        !divides(plan, m->ffn_hidden_size, "ffn_hidden_size", error))
        return FALSE;
    /* fewer KV heads than GPUs: Megatron replicates each over t / kv GPUs */
    if (m->kv_heads % plan->tp != 0 && plan->tp % m->kv_heads != 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected a divisor or a multiple of kv_heads = %d, got %d",
                    plan_field_origin(plan, PLAN_TP), m->kv_heads, plan->tp);
        return FALSE;
    }
    return TRUE;
}

/* Whether a piece ends with the group's sum (an all-reduce, or with
 * sequence parallelism a reduce-scatter), and whether it starts with the
 * mirror all-gather of sequence parallelism. */
static void places(const PieceRef *p, gboolean *sums_at_end, gboolean *gathers_at_start)
{
    gboolean forward = p->phase != PHASE_BACKWARD;
    *sums_at_end = *gathers_at_start = FALSE;
    switch (p->segment->kind) {
    case SEGMENT_EMBEDDING:
        *sums_at_end = forward;
        *gathers_at_start = !forward;
        break;
    case SEGMENT_HEAD:
        *sums_at_end = !forward;
        *gathers_at_start = forward;
        break;
    case SEGMENT_LAYER: /* a partial replay (the attention core) needs none */
        *sums_at_end = !p->partial;
        *gathers_at_start = !p->partial;
        break;
    }
}

static void collective(Emit *e, const PieceRef *p, CollOp op)
{
    static const char *const names[COLL_N_OPS] = {
        [COLL_ALL_REDUCE] = "tp all_reduce mb%d L%d",
        [COLL_ALL_GATHER] = "tp all_gather mb%d L%d",
        [COLL_REDUCE_SCATTER] = "tp reduce_scatter mb%d L%d",
    };
    const ModelSpec *m = emit_model(e);
    double bytes = 2.0 * emit_plan(e)->micro_batch_size * m->seq_length * m->hidden_size;
    emit_collective(e, GROUP_TP, STREAM_COMPUTE, op, bytes, TAG_TP,
                    (TaskName){.fmt = names[op], .a = p->micro_batch, .b = p->segment->layer});
}

static void piece_begin(Emit *e, void *state, const PieceRef *p)
{
    (void)state;
    gboolean sums, gathers;
    places(p, &sums, &gathers);
    if (gathers && emit_plan(e)->sequence_parallel)
        collective(e, p, COLL_ALL_GATHER);
}

static void piece_end(Emit *e, void *state, const PieceRef *p, TaskId task)
{
    (void)state;
    (void)task;
    gboolean sums, gathers;
    places(p, &sums, &gathers);
    if (sums)
        collective(e, p, emit_plan(e)->sequence_parallel ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE);
}

const Strategy strategy_tensor_parallel = {
    .name = "tensor_parallel",
    .active = active,
    .check = check,
    .piece_tasks = piece_tasks,
    .piece_begin = piece_begin,
    .piece_end = piece_end,
};
