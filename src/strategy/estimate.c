/* estimate.c: step-time and memory lower bounds from the cost model
 * (estimate.h says why they are bounds).
 *
 * Per micro-batch, a piece of kind k costs the roofline time of its
 * forward operations and twice that backward, and recomputation replays
 * tf_block_replay_ops before each layer block's backward: exactly the
 * tasks emit.c and recompute.c write, summed per model chunk. */
#include "strategy/estimate.h"

#include "net/net.h"
#include "strategy/offload.h"

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

/* Visits the segments a rank of stage `stage` holds (states_segment), in
 * model order as emit.c walks them: the embedding, each chunk's layers,
 * the head. A layer's segment depends only on whether it is MoE: each
 * kind's is made once. */
static void stage_segments(const ModelSpec *model, const PlanSpec *plan, int stage,
                           void (*visit)(const Segment *seg, void *ctx), void *ctx)
{
    int chunks = plan->layers_per_stage.n;
    Segment layer[2];
    gboolean made[2] = {FALSE, FALSE};
    for (int c = 0; c < plan->virtual_stages; c++) {
        int g = c * plan->pp + stage, first = estimate_chunk_first_layer(plan, g);
        if (g == 0) {
            Segment embedding = states_segment(model, plan, SEGMENT_EMBEDDING, -1);
            visit(&embedding, ctx);
        }
        for (int i = first; i < first + plan->layers_per_stage.v[g]; i++) {
            int moe = tf_layer_moe(model, i);
            if (!made[moe])
                layer[moe] = states_segment(model, plan, SEGMENT_LAYER, i);
            made[moe] = TRUE;
            visit(&layer[moe], ctx);
        }
        if (g == chunks - 1) {
            Segment head = states_segment(model, plan, SEGMENT_HEAD, -1);
            visit(&head, ctx);
        }
    }
}

/* The parameters a rank of stage `stage` holds, and of them those on the
 * expert-data-parallel group and its layers', each summed segment by
 * segment in model order as emit.c sums them. */
typedef struct {
    double params, experts, layers;
} StageParams;

static void add_params(const Segment *seg, void *ctx)
{
    StageParams *p = ctx;
    p->params += seg->params;
    if (seg->kind != SEGMENT_LAYER)
        return;
    p->layers += seg->params;
    p->experts += seg->expert_params;
}

static StageParams stage_params(const ModelSpec *model, const PlanSpec *plan, int stage)
{
    StageParams p = {0, 0, 0};
    stage_segments(model, plan, stage, add_params, &p);
    return p;
}

double estimate_stage_params(const ModelSpec *model, const PlanSpec *plan, int stage)
{
    return stage_params(model, plan, stage).params;
}

double estimate_stage_expert_params(const ModelSpec *model, const PlanSpec *plan, int stage)
{
    return stage_params(model, plan, stage).experts;
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
    double exchanges_s;         /* a MoE block's token exchanges, each pass (expert_parallel.c) */
    gboolean replays_exchanges; /* a full recomputation replays them too */
} PieceCosts;

/* A lower bound of a collective of `bytes` over n ranks (as
 * emit_collective takes them; collective.h), whatever its op: an
 * all-gather brings every other rank's shard in, a reduce-scatter or an
 * all-to-all sends the rank's data for every other out (an all-reduce
 * does both), (n - 1) / n of the bytes, which pass the rank's links of
 * that direction: its NVLink's and its NIC's (topology.c). 0 for a
 * collective that may be latency-bound (its shards within a packet,
 * net.h), which loads no link. */
static double exchange_lower_bound_s(const ClusterSpec *cluster, double bytes, int n)
{
    if (n < 2 || bytes / n <= NET_PACKET_BYTES)
        return 0;
    int nics;
    double links = cluster->intra.bandwidth_Bps + topology_nic_capacity(cluster, &nics);
    return bytes * (n - 1) / n / links;
}

/* The most members of a group of `n` ranks one `stride` apart in dp x cp
 * (1: dp x cp's own, ep for an expert group's) on one node: a node's GPUs;
 * with the default numbering and tp dividing them, dp x cp's members lie
 * tp apart, node / tp of them at most, and every stride-th of those. */
static int most_on_a_node(const ClusterSpec *cluster, const PlanSpec *plan, int n, int stride)
{
    int node = cluster->gpus_per_node;
    if (plan->rank_order != RANK_ORDER_TP_DP_PP || node % plan->tp != 0)
        return MIN(n, node);
    return MIN(n, (node / plan->tp + stride - 1) / stride);
}

/* A lower bound of an expert-parallel token exchange of `bytes` a rank
 * over the plan's ep ranks, consecutive in dp x cp: the exchange's bound,
 * and for an all-to-all (its direct plan: bytes / ep to every member) the
 * bytes for ranks on other nodes (all but most_on_a_node of them), which
 * leave through the rank's NIC (topology.c's paths). A ring's all-gather
 * crosses nodes through a few members only. */
static double ep_exchange_lower_bound_s(const ClusterSpec *cluster, const PlanSpec *plan,
                                        double bytes)
{
    int n = plan->ep, nics;
    double alone = exchange_lower_bound_s(cluster, bytes, n);
    if (alone == 0 || plan->moe_dispatcher != MOE_DISPATCHER_ALL_TO_ALL)
        return alone;
    double across = bytes * (n - most_on_a_node(cluster, plan, n, 1)) / n;
    return MAX(alone, across / topology_nic_capacity(cluster, &nics));
}

static void piece_costs(const ModelSpec *m, const ClusterSpec *cluster, const GpuSpec *gpu,
                        const PlanSpec *plan, PieceCosts *c)
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
    /* expert parallelism's dispatch and combine, on the compute stream, in
     * each pass of a MoE block */
    if (plan->ep > 1 && tf_moe(m))
        c->exchanges_s = 2 * ep_exchange_lower_bound_s(
                                 cluster, plan, tf_moe_dispatch_bytes(m, sh, plan->moe_dispatcher));
    c->replays_exchanges = plan->recompute == RECOMPUTE_FULL;
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
    double exchanges = moe * c->exchanges_s;
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
    return (ChunkCost){forward + exchanges,
                       2 * forward + replays_s + exchanges * (c->replays_exchanges ? 2 : 1),
                       (first ? c->embedding_kept : 0) + blocks_kept + (last ? c->head_kept : 0)};
}

double estimate_stage_held(const PlanSpec *plan, int s, const double *per_chunk)
{
    StageWork w = {plan_spec_micro_batches(plan), plan->pp, plan->virtual_stages, s};
    const GArray *units = schedule_units(plan->schedule, &w);
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
static double stage_activations(const PieceCosts *c, const PlanSpec *plan, int s)
{
    g_autofree double *kept = g_new(double, plan->virtual_stages);
    for (int k = 0; k < plan->virtual_stages; k++) {
        int g = k * plan->pp + s, first = estimate_chunk_first_layer(plan, g);
        kept[k] = chunk_cost(c, plan, g).kept;
        /* offloaded activations leave as soon as they may (offload.h) */
        for (int l = first; l < first + plan->layers_per_stage.v[g]; l++)
            kept[k] -= offload_layer_bytes(c->model, plan, l);
    }
    return estimate_stage_held(plan, s, kept);
}

double estimate_peak_lower_bound_bytes(const ModelSpec *model, const ClusterSpec *cluster,
                                       const PlanSpec *plan)
{
    PieceCosts c;
    GpuSpec gpu = gpu_for_plan(&cluster->gpu, plan);
    piece_costs(model, cluster, &gpu, plan, &c);
    double most = 0;
    for (int s = 0; s < plan->pp; s++)
        most = MAX(most, held_bytes(model, cluster, plan, s) + stage_activations(&c, plan, s));
    return most * (1 - MEMORY_SLACK);
}

double estimate_optimizer_s(const ModelSpec *model, const GpuSpec *gpu, const PlanSpec *plan, int s)
{
    StageParams p = stage_params(model, plan, s);
    return states_optimizer_s(gpu, plan,
                              states_shard_params(plan, MEM_OPTIMIZER, p.params, p.experts));
}

/* Adds `times` a collective of `bytes` over a group of n to *sum, if its
 * shards exceed a packet: a smaller one may be latency-bound (net.h) and
 * load no link. */
static void add_big(double *sum, double times, double bytes, int n)
{
    if (bytes / n > NET_PACKET_BYTES)
        *sum += times * bytes;
}

/* The bytes of a rank of stage `stage`'s data-parallel collectives in a
 * step, [0] over dp x cp (n[0] ranks) and [1] the routed experts' over
 * expert data parallel (n[1]): data_parallel.c's gradient reductions (a
 * bucket holds whole segments) and zero.c's gathers, as they emit them,
 * each counted only if every one of its kind is large (add_big). */
typedef struct {
    const PlanSpec *plan;
    const int *n;
    double *bytes, grad, reductions, gathers;
} DpBytes;

static void add_dp_bytes(const Segment *seg, void *ctx)
{
    const DpBytes *d = ctx;
    double per = states_param_bytes(d->plan, seg->kind);
    add_big(&d->bytes[0], d->reductions, d->grad * (seg->params - seg->expert_params), d->n[0]);
    add_big(&d->bytes[1], d->reductions, d->grad * seg->expert_params, d->n[1]);
    double gathered = d->plan->zero_stage == 3 ? seg->uses : seg->params;
    add_big(&d->bytes[0], d->gathers, per * (gathered - seg->expert_params), d->n[0]);
    add_big(&d->bytes[1], d->gathers, per * seg->expert_params, d->n[1]);
}

static void stage_dp_bytes(const ModelSpec *model, const PlanSpec *plan, int stage, const int n[2],
                           double bytes[2])
{
    int m = plan_spec_micro_batches(plan);
    bytes[0] = bytes[1] = 0;
    /* gradients reduced every micro-batch from ZeRO-2 on; ZeRO-1 and 2
     * gather the updated parameters once, ZeRO-3 each segment's for every
     * forward and every backward that makes input gradients, 2 m of them */
    DpBytes d = {plan,
                 n,
                 bytes,
                 states_bytes_per_param(plan, MEM_GRADS),
                 plan->zero_stage >= 2 ? m : 1,
                 plan->zero_stage == 3  ? 2.0 * m
                 : plan->zero_stage > 0 ? 1
                                        : 0};
    stage_segments(model, plan, stage, add_dp_bytes, &d);
}

double estimate_comm_lower_bound_s(const ModelSpec *model, const ClusterSpec *cluster,
                                   const PlanSpec *plan)
{
    int nics;
    double nic_Bps = topology_nic_capacity(cluster, &nics);
    int n[2] = {plan->dp * plan->cp, plan->dp * plan->cp / plan->ep};
    int here[2] = {most_on_a_node(cluster, plan, n[0], 1),
                   most_on_a_node(cluster, plan, n[1], plan->ep)};
    double most = 0;
    for (int s = 0; s < plan->pp; s++) {
        double bytes[2], comm = 0;
        stage_dp_bytes(model, plan, s, n, bytes);
        for (int k = 0; k < 2; k++) {
            /* the node's NICs, or the rank's own links, whichever is slower */
            double across = (double)(n[k] - here[k]) / n[k] / (MIN(here[k], nics) * nic_Bps);
            comm += MAX(across * bytes[k], exchange_lower_bound_s(cluster, bytes[k], n[k]));
        }
        most = MAX(most, MAX(comm, offload_stream_s(model, cluster, plan, s)));
    }
    return most * (1 - TIME_SLACK);
}

double estimate_step_lower_bound_s(const ModelSpec *model, const ClusterSpec *cluster,
                                   const PlanSpec *plan)
{
    GpuSpec plan_gpu = gpu_for_plan(&cluster->gpu, plan);
    const GpuSpec *gpu = &plan_gpu;
    PieceCosts c;
    piece_costs(model, cluster, gpu, plan, &c);
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
    /* one micro-batch in the pipeline at a time: m chains through every
     * chunk, forward then back, then stage 0's optimizer step */
    if (pipeline_schedules[plan->schedule]->one_at_a_time) {
        double chain = 0;
        for (int g = 0; g < plan->layers_per_stage.n; g++) {
            ChunkCost cc = chunk_cost(&c, plan, g);
            chain += cc.forward_s + cc.backward_s;
        }
        most = MAX(most, m * chain + opt0);
    }
    return MAX(most * (1 - TIME_SLACK), estimate_comm_lower_bound_s(model, cluster, plan));
}
