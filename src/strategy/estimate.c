/* estimate.c: step-time and memory lower bounds from the cost model
 * (estimate.h says why they are bounds).
 *
 * Per micro-batch, a piece of kind k costs the roofline time of its
 * forward operations and twice that backward, and recomputation replays
 * tf_block_replay_ops before each layer block's backward: exactly the
 * tasks emit.c and recompute.c write, summed per model chunk. A layer's
 * forward also waits for its tensor-parallel collectives, and its backward
 * for the prefetch of offloaded activations (estimate.h). */
#include "strategy/estimate.h"

#include <math.h>

#include "net/netbound.h"
#include "layout/chunks.h"
#include "strategy/offload.h"
#include "strategy/schedule.h"
#include "strategy/states.h"
#include "strategy/tensor_parallel.h"

/* Slack for the rounding of long sums (estimate.h). */
#define TIME_SLACK   1e-6
#define MEMORY_SLACK 1e-9

/* What a rank of stage s holds all step from "step begin": its model
 * states, then the GPU's runtime reserve, added in the order emit.c
 * allocates them. */
static double held_bytes(StageSegments *segs, const ClusterSpec *cluster, int s)
{
    StageParams p = states_stage_params(segs, s);
    return states_total_bytes(segs->plan, p.params, p.experts, p.layers) +
           cluster->gpu.reserve_bytes;
}

double estimate_states_bytes(const ModelSpec *model, const ClusterSpec *cluster,
                             const PlanSpec *plan)
{
    StageSegments segs = states_stage_segments(model, plan);
    double most = 0;
    for (int s = 0; s < plan->pp; s++)
        most = MAX(most, held_bytes(&segs, cluster, s));
    states_stage_segments_clear(&segs);
    return most;
}

/* Per micro-batch on one GPU: the forward seconds and kept activation
 * bytes of the embedding, the head and a layer of each kind (dense, MoE),
 * the layer's backward seconds with its replay and token exchanges, and
 * the first layer of each model chunk. The seconds only when piece_costs
 * is `timed`: the memory bound needs the bytes alone. */
typedef struct {
    const ModelSpec *model;
    const PlanSpec *plan;
    double embedding_s, head_s, layer_s[2], layer_backward_s[2];
    double embedding_kept, head_kept, layer_kept[2]; /* a kind no layer has: 0 */
    double pcie_Bps;                                 /* the host link, for offloaded activations */
    int *first;                                      /* per chunk, and the layers after the last */
} PieceCosts;

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
 * leave through the rank's NIC (topology.c's paths), after its latency
 * (across nodes when most_on_a_node is fewer than ep: its members cannot
 * all be on one node). A ring's all-gather crosses nodes through a few
 * members only. */
static double ep_exchange_lower_bound_s(const ClusterSpec *cluster, const PlanSpec *plan,
                                        double bytes)
{
    int n = plan->ep, here = most_on_a_node(cluster, plan, n, 1), nics;
    double alone = netbound_exchange_s(cluster, bytes, n);
    if (plan->moe_dispatcher != MOE_DISPATCHER_ALL_TO_ALL)
        return alone;
    double latency_s = netbound_all_to_all_latency_s(cluster, n, here < n);
    if (alone == 0) /* it may be latency-bound (net.h): its latency alone */
        return latency_s;
    double across = bytes * (n - here) / n / netbound_nic_payload_Bps(cluster, &nics);
    return latency_s + MAX(alone, across);
}

static void piece_costs(const ModelSpec *m, const ClusterSpec *cluster, const GpuSpec *gpu,
                        const PlanSpec *plan, gboolean timed, PieceCosts *c)
{
    Shard sh = tf_shard(plan);
    OpList ops;
    *c = (PieceCosts){.model = m, .plan = plan, .pcie_Bps = gpu->pcie_Bps};
    c->embedding_kept = tf_embedding_activation_bytes(m, sh);
    c->head_kept = tf_head_activation_bytes(m, sh);
    double block_s[TF_BLOCK_KINDS] = {0}, replay_s[TF_BLOCK_KINDS] = {0},
           block_kept[TF_BLOCK_KINDS] = {0}, block_waits_s[TF_BLOCK_KINDS] = {0};
    /* a tensor-parallel collective the forward waits for, at the least */
    double tp_wait_s =
        timed ? netbound_exchange_s(cluster, tp_layer_bytes(m, plan), plan->tp) : 0;
    for (int b = 0; b < TF_BLOCK_KINDS; b++) {
        if (tf_block_layers(m, (Block)b) == 0)
            continue;
        block_kept[b] = tf_block_activation_bytes(m, (Block)b, sh, plan->recompute);
        if (!timed)
            continue;
        tf_block_ops(m, (Block)b, sh, &ops);
        block_s[b] = tf_ops_s(gpu, &ops);
        block_waits_s[b] = tp_forward_waits(plan, &ops) * tp_wait_s;
        tf_block_replay_ops(m, (Block)b, sh, plan->recompute, &ops);
        replay_s[b] = tf_ops_s(gpu, &ops);
    }
    /* expert parallelism's dispatch and combine, on the compute stream, in
     * each pass of a MoE block, and again in a full recomputation's */
    double exchanges_s = 0;
    if (timed && plan->ep > 1 && tf_moe(m))
        exchanges_s = 2 * ep_exchange_lower_bound_s(
                              cluster, plan, tf_moe_dispatch_bytes(m, sh, plan->moe_dispatcher));
    for (int k = 0; k < 2; k++) {
        double layer_replay_s = 0, waits_s = 0;
        for (int i = 0; i < TF_BLOCKS; i++) {
            Block b = i == 0 ? BLOCK_ATTENTION : k == 0 ? BLOCK_MLP : BLOCK_MOE;
            c->layer_s[k] += block_s[b];
            layer_replay_s += replay_s[b];
            c->layer_kept[k] += block_kept[b];
            waits_s += block_waits_s[b];
        }
        double exchanges = k * exchanges_s;
        c->layer_backward_s[k] = 2 * c->layer_s[k] + layer_replay_s +
                                 exchanges * (plan->recompute == RECOMPUTE_FULL ? 2 : 1);
        c->layer_s[k] += exchanges + waits_s;
    }
    if (timed) {
        tf_embedding_ops(m, sh, &ops);
        c->embedding_s = tf_ops_s(gpu, &ops);
        tf_head_ops(m, sh, &ops);
        c->head_s = tf_ops_s(gpu, &ops);
    }
    c->first = chunks_firsts(plan);
}

static void piece_costs_clear(PieceCosts *c)
{
    g_free(c->first);
}

/* One micro-batch through model chunk g: its forward seconds, its
 * backward's (with the replays), as the stage's busy time counts it and as
 * a chain of stages waiting for each other's gradients does, and the
 * activations its forward keeps.
 *
 * With offloaded activations, layer l's backward starts the prefetch of
 * layer l - 1's (offload.c: once the compute before l's backward ended),
 * which l - 1's backward waits for. The span from that compute's end to
 * l - 1's backward holds l's backward and nothing else of the stage, so it
 * lasts at least the longer of the two, and such spans do not overlap: the
 * stage's busy time counts max(B(l), up(l - 1)) for B(l). In a chain the
 * unit's first layer (a chunk's last, but with the head after it) may wait
 * for its gradients while its prefetch runs, so the chain counts its pair
 * at B(l) alone. */
typedef struct {
    double forward_s, backward_s, chain_backward_s, kept;
} ChunkCost;

static ChunkCost chunk_cost(const PieceCosts *c, int g)
{
    const PlanSpec *plan = c->plan;
    int from = c->first[g], to = c->first[g + 1];
    int offloaded = c->pcie_Bps > 0 ? offload_chunk_layers(plan, g) : 0;
    gboolean first = g == 0, last = g == chunks_count(plan) - 1;
    double ends = 2 * ((first ? c->embedding_s : 0) + (last ? c->head_s : 0));
    ChunkCost cc = {.forward_s = first ? c->embedding_s : 0,
                    .backward_s = ends,
                    .chain_backward_s = ends,
                    .kept = first ? c->embedding_kept : 0};
    for (int l = from; l < to; l++) {
        int k = tf_layer_moe(c->model, l);
        cc.forward_s += c->layer_s[k];
        cc.kept += c->layer_kept[k];
        double up_s = l > from && l - 1 < from + offloaded
                          ? c->layer_kept[tf_layer_moe(c->model, l - 1)] / c->pcie_Bps
                          : 0;
        double b = c->layer_backward_s[k], waited = MAX(b, up_s);
        cc.backward_s += waited;
        cc.chain_backward_s += l == to - 1 && !last ? b : waited;
    }
    if (last) {
        cc.forward_s += c->head_s;
        cc.kept += c->head_kept;
    }
    return cc;
}

/* The most activations a rank of stage s holds at the start of a forward
 * unit's last piece: its schedule's units in order, each forward keeping
 * its chunk's activations until that micro-batch's backward of the chunk,
 * but for offloaded layers', which leave as soon as they may (offload.h). */
static double stage_activations(const PieceCosts *c, int s)
{
    const PlanSpec *plan = c->plan;
    g_autofree double *kept = g_new(double, plan->virtual_stages);
    for (int k = 0; k < plan->virtual_stages; k++) {
        int g = chunks_of_stage(plan, s, k);
        kept[k] = chunk_cost(c, g).kept - offload_chunk_bytes(c->model, plan, g);
    }
    return schedule_stage_held(plan, s, kept);
}

double estimate_peak_lower_bound_bytes_past(const ModelSpec *model, const ClusterSpec *cluster,
                                            const PlanSpec *plan, double limit)
{
    StageSegments segs = states_stage_segments(model, plan);
    g_autofree double *held = g_new(double, plan->pp);
    double most = 0;
    for (int s = 0; s < plan->pp; s++) {
        held[s] = held_bytes(&segs, cluster, s);
        most = MAX(most, held[s]);
    }
    states_stage_segments_clear(&segs);
    if (most * (1 - MEMORY_SLACK) > limit)
        return most * (1 - MEMORY_SLACK); /* the activations only add to it */
    PieceCosts c;
    GpuSpec gpu = gpu_for_plan(&cluster->gpu, plan);
    piece_costs(model, cluster, &gpu, plan, FALSE, &c);
    for (int s = 0; s < plan->pp; s++)
        most = MAX(most, held[s] + stage_activations(&c, s));
    piece_costs_clear(&c);
    return most * (1 - MEMORY_SLACK);
}

double estimate_peak_lower_bound_bytes(const ModelSpec *model, const ClusterSpec *cluster,
                                       const PlanSpec *plan)
{
    return estimate_peak_lower_bound_bytes_past(model, cluster, plan, INFINITY);
}

static double optimizer_s(StageSegments *segs, const GpuSpec *gpu, int s)
{
    StageParams p = states_stage_params(segs, s);
    return states_optimizer_s(gpu, segs->plan,
                              states_shard_params(segs->plan, MEM_OPTIMIZER, p.params, p.experts));
}

double estimate_optimizer_s(const ModelSpec *model, const GpuSpec *gpu, const PlanSpec *plan, int s)
{
    StageSegments segs = states_stage_segments(model, plan);
    double seconds = optimizer_s(&segs, gpu, s);
    states_stage_segments_clear(&segs);
    return seconds;
}

/* Adds `times` a collective of `bytes` over a group of n to *sum, if it
 * loads the links (netbound_loads_links). */
static void add_big(double *sum, double times, double bytes, int n)
{
    if (netbound_loads_links(bytes, n))
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

static void stage_dp_bytes(StageSegments *segs, int stage, const int n[2], double bytes[2])
{
    const PlanSpec *plan = segs->plan;
    int m = plan_spec_micro_batches(plan);
    bytes[0] = bytes[1] = 0;
    /* gradients reduced every micro-batch from ZeRO-2 on; ZeRO-1 and 2
     * gather the updated parameters once, ZeRO-3 each segment's for every
     * forward and every backward that makes input gradients, 2 m of them */
    DpBytes d = {.plan = plan,
                 .n = n,
                 .bytes = bytes,
                 .grad = states_bytes_per_param(plan, MEM_GRADS),
                 .reductions = plan->zero_stage >= 2 ? m : 1,
                 .gathers = plan->zero_stage == 3  ? 2.0 * m
                            : plan->zero_stage > 0 ? 1
                                                   : 0};
    states_stage_visit(segs, stage, add_dp_bytes, &d);
}

double estimate_comm_lower_bound_s(const ModelSpec *model, const ClusterSpec *cluster,
                                   const PlanSpec *plan)
{
    int nics;
    double nic_Bps = netbound_nic_payload_Bps(cluster, &nics);
    int n[2] = {layout_plan_size(plan, GROUP_DP_CP), layout_plan_size(plan, GROUP_EDP)};
    int here[2] = {most_on_a_node(cluster, plan, n[0], 1),
                   most_on_a_node(cluster, plan, n[1], plan->ep)};
    StageSegments segs = states_stage_segments(model, plan);
    double most = 0;
    for (int s = 0; s < plan->pp; s++) {
        double bytes[2], comm = 0;
        stage_dp_bytes(&segs, s, n, bytes);
        for (int k = 0; k < 2; k++) {
            /* the node's NICs, or the rank's own links, whichever is slower */
            double across = (double)(n[k] - here[k]) / n[k] / (MIN(here[k], nics) * nic_Bps);
            comm += MAX(across * bytes[k], netbound_exchange_s(cluster, bytes[k], n[k]));
        }
        most = MAX(most, MAX(comm, offload_stream_s(model, cluster, plan, s)));
    }
    states_stage_segments_clear(&segs);
    return most * (1 - TIME_SLACK);
}

double estimate_step_lower_bound_s(const ModelSpec *model, const ClusterSpec *cluster,
                                   const PlanSpec *plan)
{
    GpuSpec plan_gpu = gpu_for_plan(&cluster->gpu, plan);
    const GpuSpec *gpu = &plan_gpu;
    PieceCosts c;
    piece_costs(model, cluster, gpu, plan, TRUE, &c);
    int m = plan_spec_micro_batches(plan);
    double fill = 0, drain = 0; /* F(s), B(s): chunks 0 .. s - 1, one micro-batch */
    StageSegments segs = states_stage_segments(model, plan);
    double opt0 = optimizer_s(&segs, gpu, 0), most = 0;
    gboolean split = schedule_splits_backward(plan); /* no drain: see estimate.h */
    for (int s = 0; s < plan->pp; s++) {
        double busy = 0;
        ChunkCost here = {0}; /* chunk s, for the stages after */
        for (int k = 0; k < plan->virtual_stages; k++) {
            ChunkCost cc = chunk_cost(&c, chunks_of_stage(plan, s, k));
            busy += m * (cc.forward_s + cc.backward_s);
            if (k == 0)
                here = cc;
        }
        double opt = s == 0 ? opt0 : optimizer_s(&segs, gpu, s);
        most = MAX(most, fill + busy + MAX(opt, drain + opt0));
        fill += here.forward_s;
        drain += split ? 0 : here.chain_backward_s;
    }
    /* one micro-batch in the pipeline at a time: m chains through every
     * chunk, forward then back, then stage 0's optimizer step */
    if (pipeline_schedules[plan->schedule]->one_at_a_time) {
        double chain = 0;
        for (int g = 0; g < chunks_count(plan); g++) {
            ChunkCost cc = chunk_cost(&c, g);
            chain += cc.forward_s + cc.chain_backward_s;
        }
        most = MAX(most, m * chain + opt0);
    }
    states_stage_segments_clear(&segs);
    piece_costs_clear(&c);
    return MAX(most * (1 - TIME_SLACK), estimate_comm_lower_bound_s(model, cluster, plan));
}
