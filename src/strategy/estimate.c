/* estimate.c: step-time and memory lower bounds from the cost model
 * (estimate.h says why they are bounds).
 *
 * Per micro-batch, a piece of kind k costs the roofline time of its
 * forward operations and twice that backward, and recomputation replays
 * tf_block_replay_ops before each layer block's backward: exactly the
 * tasks emit.c and recompute.c write, summed per model chunk. */
#include "strategy/estimate.h"

#include "strategy/schedule.h"
#include "strategy/states.h"

/* Slack for the rounding of long sums (estimate.h). */
#define TIME_SLACK   1e-6
#define MEMORY_SLACK 1e-9

int estimate_chunk_first_layer(const PlanSpec *plan, int g)
{
    int first = 0;
    for (int k = 0; k < g; k++)
        first += plan->layers_per_stage.v[k];
    return first;
}

/* The parameters a rank of stage `stage` holds, and of them those on the
 * expert-data-parallel group and its layers', each summed segment by
 * segment (states_segment) in model order as emit.c sums them. */
typedef struct {
    double params, experts, layers;
} StageParams;

static StageParams stage_params(const ModelSpec *model, const PlanSpec *plan, int stage)
{
    int chunks = plan->layers_per_stage.n;
    StageParams p = {0, 0, 0};
    for (int c = 0; c < plan->virtual_stages; c++) {
        int g = c * plan->pp + stage, first = estimate_chunk_first_layer(plan, g);
        if (g == 0)
            p.params += states_segment(model, plan, SEGMENT_EMBEDDING, -1).params;
        for (int i = 0; i < plan->layers_per_stage.v[g]; i++) {
            Segment layer = states_segment(model, plan, SEGMENT_LAYER, first + i);
            p.params += layer.params;
            p.layers += layer.params;
            p.experts += layer.expert_params;
        }
        if (g == chunks - 1)
            p.params += states_segment(model, plan, SEGMENT_HEAD, -1).params;
    }
    return p;
}

double estimate_stage_params(const ModelSpec *model, const PlanSpec *plan, int stage)
{
    return stage_params(model, plan, stage).params;
}

/* What a rank of stage s holds all step from "step begin": its model
 * states, then the GPU's runtime reserve, added in the order emit.c
 * allocates them. */
static double held_bytes(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                         int s)
{
    StageParams p = stage_params(model, plan, s);
    return states_total_bytes(plan, p.params, p.experts, p.layers) + cluster->gpu.reserve_bytes;
}

double estimate_states_bytes(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan)
{
    double most = 0;
    for (int s = 0; s < plan->pp; s++)
        most = MAX(most, held_bytes(model, cluster, plan, s));
    return most;
}

/* Per micro-batch on one GPU: the forward seconds and kept activation
 * bytes of the embedding, the head and each layer block, and the seconds
 * of each block's replay before its backward. */
typedef struct {
    const ModelSpec *model;
    double embedding_s, head_s, block_s[TF_BLOCK_KINDS], replay_s[TF_BLOCK_KINDS];
    double embedding_kept, head_kept, block_kept[TF_BLOCK_KINDS]; /* a kind no layer has: 0 */
} PieceCosts;

static void piece_costs(const ModelSpec *m, const GpuSpec *gpu, const PlanSpec *plan, PieceCosts *c)
{
    Shard sh = tf_shard(plan);
    OpList ops;
    *c = (PieceCosts){.model = m};
    tf_embedding_ops(m, sh, &ops);
    c->embedding_s = tf_ops_s(gpu, &ops);
    c->embedding_kept = tf_embedding_activation_bytes(m, sh);
    tf_head_ops(m, sh, &ops);
    c->head_s = tf_ops_s(gpu, &ops);
    c->head_kept = tf_head_activation_bytes(m, sh);
    for (int b = 0; b < TF_BLOCK_KINDS; b++) {
        if (tf_block_layers(m, (Block)b) == 0)
            continue;
        tf_block_ops(m, (Block)b, sh, &ops);
        c->block_s[b] = tf_ops_s(gpu, &ops);
        tf_block_replay_ops(m, (Block)b, sh, plan->recompute, &ops);
        c->replay_s[b] = tf_ops_s(gpu, &ops);
        c->block_kept[b] = tf_block_activation_bytes(m, (Block)b, sh, plan->recompute);
    }
}

/* One micro-batch through model chunk g: its forward seconds, its
 * backward's (with the replays) and the activations its forward keeps. */
typedef struct {
    double forward_s, backward_s, kept;
} ChunkCost;

static ChunkCost chunk_cost(const PieceCosts *c, const PlanSpec *plan, int g)
{
    /* its dense layers, then its MoE layers, each a sum of its blocks */
    int n = plan->layers_per_stage.v[g], from = estimate_chunk_first_layer(plan, g), moe = 0;
    for (int l = from; l < from + n; l++)
        moe += tf_layer_moe(c->model, l);
    int layers[2] = {n - moe, moe};
    gboolean first = g == 0, last = g == plan->layers_per_stage.n - 1;
    double blocks_s = 0, replays_s = 0, blocks_kept = 0;
    for (int k = 0; k < 2; k++) {
        double layer_s = 0, replay_s = 0, layer_kept = 0;
        for (int i = 0; i < TF_BLOCKS; i++) {
            Block b = i == 0 ? BLOCK_ATTENTION : k == 0 ? BLOCK_MLP : BLOCK_MOE;
            layer_s += c->block_s[b];
            replay_s += c->replay_s[b];
            layer_kept += c->block_kept[b];
        }
        blocks_s += layers[k] * layer_s;
        replays_s += layers[k] * replay_s;
        blocks_kept += layers[k] * layer_kept;
    }
    double forward = (first ? c->embedding_s : 0) + blocks_s + (last ? c->head_s : 0);
    return (ChunkCost){forward, 2 * forward + replays_s,
                       (first ? c->embedding_kept : 0) + blocks_kept + (last ? c->head_kept : 0)};
}

double estimate_stage_held(const PlanSpec *plan, int s, const double *per_chunk, GArray *units)
{
    StageWork w = {plan_spec_micro_batches(plan), plan->pp, plan->virtual_stages, s};
    g_array_set_size(units, 0);
    pipeline_schedules[plan->schedule]->order(&w, units);
    double held = 0, most = 0;
    for (guint i = 0; i < units->len; i++) {
        const Unit *u = &g_array_index(units, Unit, i);
        held += u->forward                   ? per_chunk[u->chunk]
                : emit_unit_ends_backward(u) ? -per_chunk[u->chunk]
                                             : 0;
        most = MAX(most, held);
    }
    return most;
}

/* The most activations a rank of stage s holds at the start of a forward
 * unit's last piece: its schedule's units in order, each forward keeping
 * its chunk's activations until that micro-batch's backward of the chunk. */
static double stage_activations(const PieceCosts *c, const PlanSpec *plan, int s, GArray *units)
{
    g_autofree double *kept = g_new(double, plan->virtual_stages);
    for (int k = 0; k < plan->virtual_stages; k++)
        kept[k] = chunk_cost(c, plan, k * plan->pp + s).kept;
    return estimate_stage_held(plan, s, kept, units);
}

double estimate_peak_lower_bound_bytes(const ModelSpec *model, const ClusterSpec *cluster,
                                       const PlanSpec *plan)
{
    PieceCosts c;
    GpuSpec gpu = gpu_for_plan(&cluster->gpu, plan);
    piece_costs(model, &gpu, plan, &c);
    GArray *units = g_array_new(FALSE, FALSE, sizeof(Unit));
    double most = 0;
    for (int s = 0; s < plan->pp; s++) {
        most =
            MAX(most, held_bytes(model, cluster, plan, s) + stage_activations(&c, plan, s, units));
    }
    g_array_free(units, TRUE);
    return most * (1 - MEMORY_SLACK);
}

double estimate_optimizer_s(const ModelSpec *model, const GpuSpec *gpu, const PlanSpec *plan, int s)
{
    StageParams p = stage_params(model, plan, s);
    return states_optimizer_s(gpu, plan,
                              states_shard_params(plan, MEM_OPTIMIZER, p.params, p.experts));
}

double estimate_step_lower_bound_s(const ModelSpec *model, const ClusterSpec *cluster,
                                   const PlanSpec *plan)
{
    GpuSpec plan_gpu = gpu_for_plan(&cluster->gpu, plan);
    const GpuSpec *gpu = &plan_gpu;
    PieceCosts c;
    piece_costs(model, gpu, plan, &c);
    int m = plan_spec_micro_batches(plan);
    double fill = 0, drain = 0; /* F(s), B(s): chunks 0 .. s - 1, one micro-batch */
    double opt0 = estimate_optimizer_s(model, gpu, plan, 0), most = 0;
    gboolean split = schedule_splits_backward(plan); /* no drain: see estimate.h */
    for (int s = 0; s < plan->pp; s++) {
        double busy = 0;
        for (int k = 0; k < plan->virtual_stages; k++) {
            ChunkCost cc = chunk_cost(&c, plan, k * plan->pp + s);
            busy += m * (cc.forward_s + cc.backward_s);
        }
        double opt = s == 0 ? opt0 : estimate_optimizer_s(model, gpu, plan, s);
        most = MAX(most, fill + busy + MAX(opt, drain + opt0));
        ChunkCost here = chunk_cost(&c, plan, s); /* chunk s, for the stages after */
        fill += here.forward_s;
        drain += split ? 0 : here.backward_s;
    }
    return most * (1 - TIME_SLACK);
}
