/* recompute.c: activation recomputation (Korthikanti et al. 2022), and
 * FlashAttention's own.
 *
 * Under "full" a layer keeps only its input from the forward and replays
 * its whole forward, tensor-parallel collectives included, right before
 * its backward; under "selective" it keeps everything but what the plan's
 * recompute_modules make (Megatron-Core's): core_attn, standard
 * attention's core (scores, softmax, dropout, score x V), and replays
 * that; layernorm, mla_up_proj and moe_act their operations' outputs
 * (docs/model.md, "Recomputation by module"). FlashAttention keeps no
 * core, only the softmax statistics, and its backward kernel recomputes
 * the scores itself, so core_attn replays nothing under it: Megatron-LM's
 * selective granularity checkpoints only its core attention, which
 * --use-flash-attn replaces by the fused kernel, unchecked (docs/model.md,
 * "FlashAttention"). What is kept and replayed is transformer.c's
 * (transformer_block_replay_ops); this module tells the emitter what each block's
 * forward keeps and what the replay re-creates (the backward frees both),
 * and adds the replay at the start of each layer's backward (a split
 * backward's B: zero-bubble schedules), after any
 * gather of the layer's parameters: one TAG_RECOMPUTE piece per block that
 * replays anything, the piece hooks seeing PHASE_RECOMPUTE (a partial
 * replay, without the block's collectives, unless "full"). With
 * FlashAttention, whatever the recomputation, a TAG_BACKWARD piece follows:
 * the fused backward's work beyond the twice-the-forward the emitter
 * charges (its recomputation of QK^T, counted in hardware FLOPs, and its
 * lower efficiency).
 *
 * A partial recomputation (recompute.h: full for the first
 * recompute_num_layers layers of each model chunk) keeps, and replays, per
 * layer: the others keep every activation and replay nothing. */
#include "strategy/recompute.h"

#include "layout/chunks.h"
#include "strategy/strategy.h"

/* The replay of one kind of block, the same for every layer that has it,
 * and FlashAttention's backward rest (transformer.h, transformer_block_replay_ops). */
typedef struct {
    double seconds, flops, bytes; /* the replay's time, FLOPs and the activations it re-creates */
    double kept;                  /* the activations its forward keeps */
    gboolean replays;             /* whether it replays anything */
    double rest_seconds, rest_flops; /* the rest, when rest_ops > 0 */
    int rest_ops;
} BlockReplay;

typedef struct {
    BlockReplay block[LAYER_WAYS][TRANSFORMER_BLOCK_KINDS]; /* by LayerWay; a kind no layer
                                                               * has: zero */
    int first; /* the first layer of the unit's model chunk (partial only) */
} RecomputeState;

LayerWay recompute_layer_way(const PlanSpec *plan, int index)
{
    return recompute_some_layers(plan) && index >= plan->recompute_num_layers ? LAYER_WHOLE
                                                                         : LAYER_REPLAYED;
}

Recompute recompute_of_layer(const PlanSpec *plan, int index)
{
    return recompute_layer_way(plan, index) == LAYER_WHOLE ? RECOMPUTE_NONE : plan->recompute;
}

gboolean recompute_some_layers(const PlanSpec *plan)
{
    return plan->recompute == RECOMPUTE_FULL && plan->recompute_num_layers > 0;
}

static gboolean active(const PlanSpec *plan)
{
    return plan->recompute != RECOMPUTE_NONE || plan->attention == ATTENTION_FLASH;
}

static int piece_tasks(const PlanSpec *plan)
{
    (void)plan;
    return 1; /* a replay, and FlashAttention's rest: at most 3 a layer, which has 4 pieces */
}

/* The replay and FlashAttention's backward rest: transformer_block_replay_split. */
static void block_replay(Emit *e, Block b, Recompute rc, BlockReplay *r)
{
    const ModelSpec *m = emit_model(e);
    const GpuSpec *gpu = emit_gpu(e);
    Shard sh = emit_shard(e);
    OpList ops, rest;
    transformer_block_replay_split(m, b, sh, rc, &ops, &rest);
    r->replays = ops.n > 0;
    r->seconds = transformer_ops_s(gpu, &ops);
    r->flops = transformer_ops_hardware_flops(&ops);
    r->bytes = transformer_block_replay_bytes(m, b, sh, rc);
    r->kept = transformer_block_activation_bytes(m, b, sh, rc);
    r->rest_ops = rest.n;
    r->rest_seconds = transformer_ops_s(gpu, &rest);
    r->rest_flops = transformer_ops_hardware_flops(&rest);
}

/* Every layer's blocks alike, unless partial: then segment_begin says
 * what each layer's keep. */
static void step_begin(Emit *e, void *state)
{
    RecomputeState *st = state;
    const PlanSpec *plan = emit_plan(e);
    int layers[TRANSFORMER_BLOCK_KINDS];
    transformer_block_counts(emit_model(e), layers);
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++) {
        if (layers[b] == 0)
            continue;
        BlockReplay *r = &st->block[LAYER_REPLAYED][b];
        block_replay(e, (Block)b, plan->recompute, r);
        if (recompute_some_layers(plan))
            block_replay(e, (Block)b, RECOMPUTE_NONE, &st->block[LAYER_WHOLE][b]);
        emit_keep_activations(e, (Block)b, r->kept, r->bytes);
    }
}

static void unit_begin(Emit *e, void *state, const Unit *u)
{
    RecomputeState *st = state;
    if (recompute_some_layers(emit_plan(e)))
        st->first = chunks_first_layer(emit_plan(e), emit_model_chunk(e, u));
}

/* Before a layer's backward: each block's replay (TAG_RECOMPUTE, partial
 * unless "full"), then FlashAttention's backward rest, which belongs to
 * the attention block's backward (TAG_BACKWARD, partial: no collectives). */
static void segment_begin(Emit *e, void *state, const Unit *u, const Segment *seg)
{
    const RecomputeState *st = state;
    if (seg->kind != SEGMENT_LAYER)
        return;
    static const char *const names[TRANSFORMER_BLOCK_KINDS] = {
        "recompute mb%d L%d attn", "recompute mb%d L%d mlp", "recompute mb%d L%d mlp",
        "recompute mb%d L%d attn", "recompute mb%d L%d mamba"};
    static const char *const rest_names[TRANSFORMER_BLOCK_KINDS] = {
        "bwd mb%d L%d attn flash rest", "bwd mb%d L%d mlp rest", "bwd mb%d L%d mlp rest",
        "bwd mb%d L%d attn flash rest", "bwd mb%d L%d mamba rest"};
    const PlanSpec *plan = emit_plan(e);
    gboolean partial = plan->recompute != RECOMPUTE_FULL;
    const BlockReplay *way = st->block[recompute_layer_way(plan, seg->layer - st->first)];
    Block blocks[TRANSFORMER_BLOCKS];
    int n = transformer_layer_blocks(emit_model(e), seg->layer);
    for (int i = 0; i < n; i++) {
        blocks[i] = transformer_layer_block(emit_model(e), seg->layer, i);
        if (recompute_some_layers(plan)) /* this layer's, forward and backward */
            emit_keep_activations(e, blocks[i], way[blocks[i]].kept, way[blocks[i]].bytes);
    }
    if (!unit_passes_gradients(u))
        return;
    for (int i = 0; i < n; i++) {
        Block b = blocks[i];
        const BlockReplay *r = &way[b];
        if (!r->replays)
            continue;
        PieceRef p = {.segment = seg,
                      .block = b,
                      .phase = PHASE_RECOMPUTE,
                      .micro_batch = u->micro_batch,
                      .partial = partial};
        TaskName name = {.fmt = names[b], .a = u->micro_batch, .b = seg->layer};
        emit_piece(e, &p, r->seconds, r->flops, TAG_RECOMPUTE, name, r->bytes);
    }
    for (int i = 0; i < n; i++) {
        Block b = blocks[i];
        const BlockReplay *r = &way[b];
        if (r->rest_ops == 0)
            continue;
        PieceRef p = {.segment = seg,
                      .block = b,
                      .phase = PHASE_BACKWARD,
                      .micro_batch = u->micro_batch,
                      .partial = TRUE};
        TaskName name = {.fmt = rest_names[b], .a = u->micro_batch, .b = seg->layer};
        emit_piece(e, &p, r->rest_seconds, r->rest_flops, TAG_BACKWARD, name, 0);
    }
}

/* A block's replay, and FlashAttention's backward rest, add to its
 * backward their roofline time on the compute stream (segment_begin's
 * pieces, whose operations transformer_block_replay_ops lists, the two
 * together): the emitter charges them exactly that, before the block's
 * own backward. */
static BlockBound block_bound(const Step *step, Block block, const OpList *ops)
{
    (void)ops;
    OpList replay;
    transformer_block_replay_ops(step->model, block, step->shard, step->plan->recompute, &replay);
    return (BlockBound){.backward_s = transformer_ops_s(&step->gpu, &replay)};
}

static const int CORE_ATTN = 1 << RECOMPUTE_CORE_ATTN;

/* recompute_num_layers counts the layers of a full recomputation. More
 * than a chunk's layers is every layer of it, as in Megatron-LM.
 * recompute_modules are a selective recomputation's, as Megatron-Core's. */
static gboolean check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    (void)model;
    if (plan->recompute_num_layers > 0 && plan->recompute != RECOMPUTE_FULL)
        return plan_field_fail(error, plan, PLAN_RECOMPUTE_NUM_LAYERS,
                               "0 unless recompute is full (the layers it replays)");
    if (plan->recompute_modules != CORE_ATTN && plan->recompute != RECOMPUTE_SELECTIVE)
        return plan_field_fail(error, plan, PLAN_RECOMPUTE_MODULES,
                               "core_attn unless recompute is selective (the modules it replays)");
    return TRUE;
}

/* core_attn replays nothing under FlashAttention (above): "selective" of
 * it alone is "none". recompute_num_layers of at least every chunk's
 * layers is every layer, 0 (once the layers are split). */
static void normalize(PlanSpec *plan, const ModelSpec *model)
{
    (void)model;
    if (plan->attention == ATTENTION_FLASH && plan->recompute == RECOMPUTE_SELECTIVE &&
        plan->recompute_modules == CORE_ATTN)
        plan->recompute = RECOMPUTE_NONE;
    if (recompute_some_layers(plan) && plan->layers_per_stage.v &&
        plan->recompute_num_layers >= recompute_most_chunk_layers(plan))
        plan->recompute_num_layers = 0;
}

int recompute_most_chunk_layers(const PlanSpec *plan)
{
    int most = 0;
    for (int g = 0; g < chunks_count(plan); g++)
        most = MAX(most, chunks_layers(plan, g));
    return most;
}

const Strategy strategy_recompute = {
    .name = "recompute",
    .active = active,
    .piece_tasks = piece_tasks,
    .state_size = sizeof(RecomputeState),
    .check = check,
    .check_reads = PLAN_BIT(RECOMPUTE) | PLAN_BIT(RECOMPUTE_MODULES) | PLAN_BIT(RECOMPUTE_NUM_LAYERS),
    .step_begin = step_begin,
    .unit_begin = unit_begin,
    .segment_begin = segment_begin,
    .normalize = normalize,
    .block_bound = block_bound,
};
