/* context_parallel.c: context parallelism, the sequence split over the cp
 * ranks of a CP group (docs/model.md, "Context parallelism").
 *
 * Every rank of a CP group holds s/c tokens of each sequence of the same
 * micro-batch: its activations, GEMMs, norms and tensor-parallel
 * collectives shrink by c (cost/transformer.c, `Shard.cp`), and its
 * attention computes its queries against the whole sequence's keys, 1/c of
 * the causal scores whichever rank, since causal load balancing gives rank
 * i the sequence's chunks i and 2c - 1 - i of 2c (Megatron-Core). The
 * ranks' gradients reduce over dp x c (data_parallel.c, zero.c). Around
 * each layer's attention block, per cp_algorithm:
 *   - ring (ring attention, Megatron-Core's CP over Transformer Engine's
 *     attn_forward_func_with_cp): the K and V of each rank's s/c tokens go
 *     around the ring in c - 1 exchanges, each rank sending its neighbour
 *     the block it holds (transformer_kv_bytes) while attention computes with the
 *     one before; the exchanges run on the CP stream beside the block's
 *     compute, and the next piece waits for the last. Backward sends K and
 *     V again with their gradients dK and dV: c - 1 exchanges of twice the
 *     bytes. Both belong to the input gradients (B under a zero-bubble
 *     schedule): attention has no weights, so a W exchanges nothing. The overlap is taken at the
 * block's granularity: the block is one task (or tensor parallelism's parts), not c steps;
 *   - all_to_all (DeepSpeed-Ulysses, Jacobs et al. 2023, arXiv 2309.14509,
 *     section 3.1): an all-to-all of Q, K and V before attention turns the
 *     sequence split into a head split (each rank then holds the whole
 *     sequence of a/(t c) heads), and one of the output after turns it
 *     back; backward mirrors them (the output's gradient before, Q's, K's
 *     and V's after). Attention waits for them: they run on the compute
 *     stream. */
#include "strategy/strategy.h"

#include "base/error.h"

typedef struct {
    TaskId exchanged; /* the last ring exchange of the piece being emitted */
} CpState;

static gboolean active(const PlanSpec *plan)
{
    return plan->cp > 1;
}

/* Tasks per piece: a ring's c - 1 exchanges, or two all-to-alls. */
static int piece_tasks(const PlanSpec *plan)
{
    return plan->cp_algorithm == CP_RING ? plan->cp - 1 : 2;
}

/* Fails on cp unless `count` (the model's `what`) divides by tp x cp. */
static gboolean heads_divide(const PlanSpec *plan, int count, const char *what, GError **error)
{
    if (count % (plan->tp * plan->cp) == 0)
        return TRUE;
    return plan_field_fail(error, plan, PLAN_CP,
                           "a size for which tp x cp = %d x %d divides %s = %d (DeepSpeed-Ulysses' "
                           "all-to-all scatters the heads over the tp x cp GPUs)",
                           plan->tp, plan->cp, what, count);
}

static gboolean check_model(const PlanSpec *plan, const ModelSpec *m, GError **error)
{
    if (plan->cp == 1)
        return TRUE;
    /* the SSD scan carries its state along the whole sequence: plansim
     * models no context parallelism of it */
    if (transformer_block_layers(m, BLOCK_MAMBA) > 0)
        return plan_field_fail(error, plan, PLAN_CP,
                               "1 for a model with Mamba-2 layers (plansim does not split "
                               "their scan over a context-parallel group)");
    if (plan->cp_algorithm == CP_ALL_TO_ALL)
        return heads_divide(plan, m->attention_heads, "attention_heads", error) &&
               heads_divide(plan, m->kv_heads, "kv_heads", error) &&
               (m->seq_length % plan->cp == 0 ||
                plan_field_fail(error, plan, PLAN_CP, "a divisor of seq_length = %d",
                                m->seq_length));
    if (m->seq_length % (2 * plan->cp) != 0)
        return plan_field_fail(error, plan, PLAN_CP,
                               "a size for which 2 x cp divides seq_length = %d (causal load "
                               "balancing cuts each sequence into 2 x cp chunks)",
                               m->seq_length);
    return TRUE;
}

static gboolean attention_piece(const PieceRef *p)
{
    return p->segment->kind == SEGMENT_LAYER && transformer_block_attends(p->block) && !p->partial;
}

/* An all-to-all over the CP group, on the compute stream, of one rank's
 * `bytes` (its send buffer). */
static void all_to_all(Emit *e, const PieceRef *p, double bytes)
{
    emit_collective(
        e, GROUP_CP, STREAM_COMPUTE, COLL_ALL_TO_ALL, bytes, TAG_CP,
        (TaskName){.fmt = "cp all_to_all mb%d L%d", .a = p->micro_batch, .b = p->segment->layer});
}

static void piece_begin(Emit *e, void *state, const PieceRef *p)
{
    CpState *st = state;
    if (!attention_piece(p))
        return;
    const ModelSpec *m = emit_model(e);
    Shard sh = emit_shard(e);
    gboolean backward = emit_piece_backward(p);
    if (emit_plan(e)->cp_algorithm == CP_ALL_TO_ALL) {
        /* forward: Q, K and V; backward: the output's gradient */
        all_to_all(e, p,
                   backward ? transformer_out_bytes(m, sh)
                            : transformer_q_bytes(m, sh) + transformer_kv_bytes(m, sh));
        return;
    }
    double bytes = (backward ? 2 : 1) * transformer_kv_bytes(m, sh); /* K, V (and dK, dV) */
    TaskId after = emit_unit_last(e);
    for (int i = 0; i < emit_plan(e)->cp - 1; i++) {
        st->exchanged = emit_collective(e, GROUP_CP, STREAM_CP, COLL_RING_EXCHANGE, bytes, TAG_CP,
                                        (TaskName){.fmt = "cp ring_exchange mb%d L%d",
                                                   .a = p->micro_batch,
                                                   .b = p->segment->layer});
        emit_wait(e, after, st->exchanged);
    }
}

static void piece_end(Emit *e, void *state, const PieceRef *p, TaskId task)
{
    const CpState *st = state;
    (void)task;
    if (!attention_piece(p))
        return;
    const ModelSpec *m = emit_model(e);
    Shard sh = emit_shard(e);
    if (emit_plan(e)->cp_algorithm == CP_ALL_TO_ALL)
        /* forward: the output; backward: the gradients of Q, K and V */
        all_to_all(e, p,
                   emit_piece_backward(p) ? transformer_q_bytes(m, sh) + transformer_kv_bytes(m, sh)
                                          : transformer_out_bytes(m, sh));
    else
        emit_gate(e, st->exchanged);
}

/* Without context parallelism its algorithm changes nothing: the default. */
static void normalize(PlanSpec *plan, const ModelSpec *model)
{
    (void)model;
    if (plan->cp == 1)
        plan->cp_algorithm = CP_RING;
}

const Strategy strategy_context_parallel = {
    .name = "context_parallel",
    .active = active,
    .check_model = check_model,
    .check_model_reads = PLAN_BIT(TP) | PLAN_BIT(CP) | PLAN_BIT(CP_ALGORITHM),
    .piece_tasks = piece_tasks,
    .state_size = sizeof(CpState),
    .streams = 1u << STREAM_CP,
    .piece_passes = PASS_FORWARD | PASS_INPUT_GRAD, /* attention has no weights */
    .piece_begin = piece_begin,
    .piece_end = piece_end,
    .normalize = normalize,
};
