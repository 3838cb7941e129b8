/* recompute.c: activation recomputation (Korthikanti et al. 2022).
 *
 * Under "full" a layer keeps only its input from the forward and replays
 * its whole forward, tensor-parallel collectives included, right before
 * its backward; under "selective" it keeps everything but the attention
 * core (scores, softmax, dropout, score x V) and replays that. What is kept
 * and replayed is transformer.c's; this module tells the emitter what each
 * block's forward keeps and what the replay re-creates (the backward frees
 * both), and adds the replay at the start of each layer's backward, after
 * any gather of the layer's parameters: one TAG_RECOMPUTE piece per block
 * that replays anything, the piece hooks seeing PHASE_RECOMPUTE (a partial
 * replay under "selective"). */
#include "strategy/strategy.h"

/* The replay of one block, the same for every layer. */
typedef struct {
    double seconds, flops, bytes; /* its time, FLOPs and the activations it re-creates */
    gboolean replays;             /* whether it replays anything */
} BlockReplay;

typedef struct {
    BlockReplay block[TF_BLOCKS];
} RecomputeState;

static gboolean active(const PlanSpec *plan)
{
    return plan->recompute != RECOMPUTE_NONE;
}

static int piece_tasks(const PlanSpec *plan)
{
    (void)plan;
    return 1; /* the replay */
}

static void step_begin(Emit *e, void *state)
{
    RecomputeState *st = state;
    const ModelSpec *m = emit_model(e);
    Recompute rc = emit_plan(e)->recompute;
    Shard sh = emit_shard(e);
    for (int b = 0; b < TF_BLOCKS; b++) {
        BlockReplay *r = &st->block[b];
        OpList ops;
        tf_block_replay_ops(m, (Block)b, sh, rc, &ops);
        r->replays = ops.n > 0;
        r->seconds = tf_ops_s(emit_gpu(e), &ops);
        r->flops = tf_ops_flops(&ops, TRUE);
        r->bytes = tf_block_replay_bytes(m, (Block)b, sh, rc);
        emit_keep_activations(e, (Block)b, tf_block_activation_bytes(m, (Block)b, sh, rc),
                              r->bytes);
    }
}

static void segment_begin(Emit *e, void *state, const Unit *u, const Segment *seg)
{
    const RecomputeState *st = state;
    if (u->forward || seg->kind != SEGMENT_LAYER)
        return;
    static const char *const names[TF_BLOCKS] = {"recompute mb%d L%d attn",
                                                 "recompute mb%d L%d mlp"};
    gboolean partial = emit_plan(e)->recompute == RECOMPUTE_SELECTIVE;
    for (int b = 0; b < TF_BLOCKS; b++) {
        const BlockReplay *r = &st->block[b];
        if (!r->replays)
            continue;
        PieceRef p = {seg, (Block)b, PHASE_RECOMPUTE, u->micro_batch, partial};
        TaskName name = {.fmt = names[b], .a = u->micro_batch, .b = seg->layer};
        emit_piece(e, &p, r->seconds, r->flops, TAG_RECOMPUTE, name, r->bytes);
    }
}

const Strategy strategy_recompute = {
    .name = "recompute",
    .active = active,
    .piece_tasks = piece_tasks,
    .state_size = sizeof(RecomputeState),
    .step_begin = step_begin,
    .segment_begin = segment_begin,
};
