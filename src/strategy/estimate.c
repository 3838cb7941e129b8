/* estimate.c: step-time and memory lower bounds from the cost model
 * (estimate.h says why they are bounds).
 *
 * Per micro-batch, a piece of kind k costs the roofline time of its
 * forward operations and twice that backward: exactly the tasks emit.c
 * writes, summed per model chunk. A layer's passes also take what the
 * active strategies declare (their block_bound: recomputation's replays,
 * tensor parallelism's collectives, expert parallelism's exchanges), and
 * its backward waits for their prefetch (prefetch_s: offloaded
 * activations). */
#include "strategy/estimate.h"

#include <math.h>

#include "net/netbound.h"
#include "layout/chunks.h"
#include "strategy/pipeline.h"
#include "strategy/recompute.h"
#include "strategy/schedule.h"
#include "strategy/states.h"
#include "strategy/strategy.h"

/* Slack for the rounding of long sums (estimate.h). */
#define TIME_SLACK   1e-6
#define MEMORY_SLACK 1e-9

/* The most units (micro-batches x model chunks) the chain bound walks:
 * beyond, it is the fill, busy and drain bound (16 MB of ends). */
#define CHAIN_MOST_UNITS (1 << 20)

/* What a rank of stage s holds all step from "step begin": its model
 * states, then the GPU's runtime reserve, added in the order emit.c
 * allocates them. */
static double held_bytes(StageSegments *segs, const Step *step, int s)
{
    StageParams p = states_stage_params(segs, s);
    return states_total_bytes(&step->states, p.params, p.experts, p.layers) +
           step->cluster->gpu.reserve_bytes;
}

double estimate_states_bytes(const Step *step)
{
    StageSegments segs = states_stage_segments(step->model, step->plan);
    double most = 0;
    for (int s = 0; s < step->plan->pp; s++)
        most = MAX(most, held_bytes(&segs, step, s));
    states_stage_segments_clear(&segs);
    return most;
}

/* A backward's own compute split as a zero-bubble schedule splits it
 * (unit_work): B, the input gradients, and W, the weight gradients; what
 * the strategies add to it left out, so that each is at most its unit's. */
typedef struct {
    double input_s, weight_s;
} BackwardParts;

static BackwardParts backward_parts(const OpsWork *w)
{
    return (BackwardParts){.input_s = w->backward_seconds - w->wgrad_seconds,
                           .weight_s = w->wgrad_seconds};
}

static void add_parts(BackwardParts *to, BackwardParts p)
{
    to->input_s += p.input_s;
    to->weight_s += p.weight_s;
}

/* A whole backward of nothing but its own compute: B and W. */
static double parts_s(BackwardParts p)
{
    return p.input_s + p.weight_s;
}

/* Per micro-batch on one GPU: the forward seconds and kept activation
 * bytes of the embedding, the head, an MTP module's own operations and a
 * layer of each kind (transformer_layer_kind: full or windowed attention,
 * dense or MoE), the layer's backward seconds with what the strategies
 * add and its own compute split, and the first layer of each model chunk.
 * The seconds only when piece_costs is `timed`: the memory bound needs the
 * bytes alone. */
typedef struct {
    double s[TRANSFORMER_LAYER_KINDS], backward_s[TRANSFORMER_LAYER_KINDS];
    BackwardParts parts[TRANSFORMER_LAYER_KINDS];
    double kept[TRANSFORMER_LAYER_KINDS]; /* a kind no layer has: 0 */
} LayerCosts;

typedef struct {
    const Step *step;
    const ModelSpec *model;
    const PlanSpec *plan;
    double embedding_s, head_s, mtp_s;
    LayerCosts layer[LAYER_WAYS]; /* by LayerWay (recompute.h) */
    BackwardParts ends_parts[2];  /* the embedding's backward, the head's */
    BackwardParts mtp_parts;
    double embedding_kept, head_kept, mtp_kept;
    int *first;                                 /* per chunk, and the layers after the last */
    gboolean timed;                             /* the seconds too (piece_costs) */
} PieceCosts;

/* A layer of each kind, its blocks' with what the active strategies add. */
static void layer_costs(const Step *step, gboolean timed, LayerCosts *c)
{
    const ModelSpec *m = step->model;
    const PlanSpec *plan = step->plan;
    const GpuSpec *gpu = &step->gpu;
    Shard sh = step->shard;
    OpList ops;
    double block_s[TRANSFORMER_BLOCK_KINDS] = {0}, block_kept[TRANSFORMER_BLOCK_KINDS] = {0};
    double block_backward_s[TRANSFORMER_BLOCK_KINDS] = {0};
    BackwardParts block_parts[TRANSFORMER_BLOCK_KINDS] = {{0}};
    /* what each active strategy's tasks add to a block's passes, at the least */
    BlockBound added[STRATEGY_MAX][TRANSFORMER_BLOCK_KINDS] = {{{0}}};
    int layers[TRANSFORMER_BLOCK_KINDS];
    transformer_block_counts(m, layers);
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++) {
        if (layers[b] == 0)
            continue;
        block_kept[b] = transformer_block_activation_bytes(m, (Block)b, sh, plan->recompute);
        if (!timed)
            continue;
        transformer_block_ops(m, (Block)b, sh, &ops);
        OpsWork w = transformer_ops_work(gpu, &ops);
        block_s[b] = w.seconds;
        block_backward_s[b] = w.backward_seconds;
        block_parts[b] = backward_parts(&w);
        for (int k = 0; strategy_registry[k]; k++)
            if (strategy_registry[k]->block_bound && strategy_registry[k]->active(plan))
                added[k][b] = strategy_registry[k]->block_bound(step, (Block)b, &ops);
    }
    for (int k = 0; k < TRANSFORMER_LAYER_KINDS; k++) {
        double added_forward_s = 0, added_backward_s = 0;
        for (int i = 0; i < transformer_kind_blocks(k); i++) {
            Block b = transformer_kind_block(k, i);
            c->s[k] += block_s[b];
            c->backward_s[k] += block_backward_s[b];
            add_parts(&c->parts[k], block_parts[b]);
            c->kept[k] += block_kept[b];
        }
        /* a strategy's over the layer's blocks, then the strategies' */
        for (int s = 0; strategy_registry[s]; s++) {
            double forward_s = 0, backward_s = 0;
            for (int i = 0; i < transformer_kind_blocks(k); i++) {
                Block b = transformer_kind_block(k, i);
                forward_s += added[s][b].forward_s;
                backward_s += added[s][b].backward_s;
            }
            added_forward_s += forward_s;
            added_backward_s += backward_s;
        }
        c->backward_s[k] += added_backward_s;
        c->s[k] += added_forward_s;
    }
}

static void piece_costs(const Step *step, gboolean timed, PieceCosts *c)
{
    const ModelSpec *m = step->model;
    const PlanSpec *plan = step->plan;
    const GpuSpec *gpu = &step->gpu;
    Shard sh = step->shard;
    OpList ops;
    *c = (PieceCosts){.step = step, .model = m, .plan = plan, .timed = timed};
    c->embedding_kept = transformer_embedding_activation_bytes(m, sh);
    c->head_kept = transformer_head_activation_bytes(m, sh);
    c->mtp_kept = transformer_mtp_activation_bytes(m, sh);
    layer_costs(step, timed, &c->layer[LAYER_REPLAYED]);
    if (recompute_some_layers(plan)) { /* the same step, its plan recomputing nothing */
        PlanSpec whole = *plan;
        whole.recompute = RECOMPUTE_NONE;
        whole.recompute_num_layers = 0;
        Step whole_step = *step;
        whole_step.plan = &whole;
        layer_costs(&whole_step, timed, &c->layer[LAYER_WHOLE]);
    }
    if (timed) {
        transformer_embedding_ops(m, sh, &ops);
        OpsWork w = transformer_ops_work(gpu, &ops);
        c->embedding_s = w.seconds;
        c->ends_parts[0] = backward_parts(&w);
        transformer_head_ops(m, sh, &ops);
        w = transformer_ops_work(gpu, &ops);
        c->head_s = w.seconds;
        c->ends_parts[1] = backward_parts(&w);
        transformer_mtp_ops(m, sh, &ops);
        w = transformer_ops_work(gpu, &ops);
        c->mtp_s = w.seconds;
        c->mtp_parts = backward_parts(&w);
    }
    c->first = chunks_firsts(plan);
}

static void piece_costs_clear(PieceCosts *c)
{
    g_free(c->first);
}

/* The longest of the active strategies' prefetches before layer
 * `layer`'s backward (Strategy.prefetch_s). */
static double prefetch_s(const PieceCosts *c, int layer)
{
    double most = 0;
    for (const Strategy *const *s = strategy_registry; *s; s++)
        if ((*s)->prefetch_s && (*s)->active(c->plan))
            most = MAX(most, (*s)->prefetch_s(c->step, layer));
    return most;
}

/* What the active strategies release of chunk g's kept activations
 * (Strategy.released_bytes). */
static double released_bytes(const PieceCosts *c, int g)
{
    double bytes = 0;
    for (const Strategy *const *s = strategy_registry; *s; s++)
        if ((*s)->released_bytes && (*s)->active(c->plan))
            bytes += (*s)->released_bytes(c->step, g);
    return bytes;
}

/* One micro-batch through model chunk g: its forward seconds, its
 * backward's (with the replays), as the stage's busy time counts it and as
 * a chain of stages waiting for each other's gradients does, and the
 * activations its forward keeps.
 *
 * With a prefetch before a backward (Strategy.prefetch_s: offloaded
 * activations), layer l's backward starts the prefetch of layer l - 1's
 * (once the compute before l's backward ended), which l - 1's backward
 * waits for. The span from that compute's end to l - 1's backward holds
 * l's backward and nothing else of the stage, so it lasts at least the
 * longer of the two, and such spans do not overlap: the stage's busy time
 * counts max(B(l), up(l - 1)) for B(l). In a chain the unit's first layer
 * (a chunk's last, but with the head after it) may wait for its gradients
 * while its prefetch runs, so the chain counts its pair at B(l) alone.
 *
 * A zero-bubble schedule's B and W of the chunk are at least `parts`, the
 * compute of its pieces' passes (unit_work), without the replays, the
 * strategies' additions or the prefetches. */
typedef struct {
    double forward_s, backward_s, chain_backward_s, kept;
    BackwardParts parts;
} ChunkCost;

static ChunkCost chunk_cost(const PieceCosts *c, int g)
{
    const PlanSpec *plan = c->plan;
    int from = c->first[g], to = c->first[g + 1];
    gboolean first = g == 0, last = g == chunks_count(plan) - 1;
    BackwardParts ends = {0};
    if (first)
        add_parts(&ends, c->ends_parts[0]);
    if (last)
        add_parts(&ends, c->ends_parts[1]);
    ChunkCost cc = {.forward_s = first ? c->embedding_s : 0,
                    .backward_s = parts_s(ends),
                    .chain_backward_s = parts_s(ends),
                    .kept = first ? c->embedding_kept : 0,
                    .parts = ends};
    for (int l = from; l < to; l++) {
        int k = transformer_layer_kind(c->model, l);
        gboolean mtp = l >= c->model->layers; /* with its module's own piece */
        const LayerCosts *lc = &c->layer[recompute_layer_way(plan, l - from)];
        cc.forward_s += lc->s[k] + (mtp ? c->mtp_s : 0);
        cc.kept += lc->kept[k] + (mtp ? c->mtp_kept : 0);
        double mtp_backward_s = mtp ? parts_s(c->mtp_parts) : 0;
        cc.backward_s += mtp_backward_s;
        cc.chain_backward_s += mtp_backward_s;
        add_parts(&cc.parts, lc->parts[k]);
        if (mtp)
            add_parts(&cc.parts, c->mtp_parts);
        double up_s = l > from && c->timed ? prefetch_s(c, l - 1) : 0;
        double b = lc->backward_s[k], waited = MAX(b, up_s);
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
 * but for those that leave as soon as they may (released_bytes). */
static double stage_activations(const PieceCosts *c, int s)
{
    const PlanSpec *plan = c->plan;
    g_autofree double *kept = g_new(double, plan->virtual_stages);
    for (int k = 0; k < plan->virtual_stages; k++) {
        int g = chunks_of_stage(plan, s, k);
        kept[k] = chunk_cost(c, g).kept - released_bytes(c, g);
    }
    return schedule_stage_held(plan, s, kept);
}

double estimate_peak_lower_bound_bytes_past(const Step *step, double limit)
{
    const PlanSpec *plan = step->plan;
    StageSegments segs = states_stage_segments(step->model, plan);
    g_autofree double *held = g_new(double, plan->pp);
    double most = 0;
    for (int s = 0; s < plan->pp; s++) {
        held[s] = held_bytes(&segs, step, s);
        most = MAX(most, held[s]);
    }
    states_stage_segments_clear(&segs);
    if (most * (1 - MEMORY_SLACK) > limit)
        return most * (1 - MEMORY_SLACK); /* the activations only add to it */
    PieceCosts c;
    piece_costs(step, FALSE, &c);
    for (int s = 0; s < plan->pp; s++)
        most = MAX(most, held[s] + stage_activations(&c, s));
    piece_costs_clear(&c);
    return most * (1 - MEMORY_SLACK);
}

double estimate_peak_lower_bound_bytes(const Step *step)
{
    return estimate_peak_lower_bound_bytes_past(step, INFINITY);
}

static double optimizer_s(StageSegments *segs, const Step *step, int s)
{
    StageParams p = states_stage_params(segs, s);
    return states_optimizer_s(
        &step->gpu, &step->states,
        states_shard_params(&step->states, MEM_OPTIMIZER, p.params, p.experts));
}

double estimate_optimizer_s(const Step *step, int s)
{
    StageSegments segs = states_stage_segments(step->model, step->plan);
    double seconds = optimizer_s(&segs, step, s);
    states_stage_segments_clear(&segs);
    return seconds;
}

/* A stage's bytes on the communication stream, [0] over dp x cp and [1]
 * over expert data parallel, as the segments are visited: the active
 * strategies' segment_comm_bytes, or (`reduce`) segment_reduce_bytes,
 * found once a stage (a segment's visit is per layer). */
typedef void (*SegmentBytes)(const PlanSpec *plan, const Segment *seg, double bytes[2]);
typedef struct {
    const PlanSpec *plan;
    SegmentBytes add[STRATEGY_MAX];
    int n;
    double *bytes;
} CommBytes;

static void add_comm_bytes(const Segment *seg, void *ctx)
{
    const CommBytes *c = ctx;
    for (int i = 0; i < c->n; i++)
        c->add[i](c->plan, seg, c->bytes);
}

/* The least seconds the communication stream of a rank of a stage whose
 * segments are `segs` carries the bytes the strategies declare (`reduce`:
 * CommBytes), one collective after the other: over each group, the
 * node's NICs' share of them or the rank's own links, whichever is
 * slower. */
static double comm_s(StageSegments *segs, const Step *step, int stage, gboolean reduce)
{
    const ClusterSpec *cluster = step->cluster;
    const PlanSpec *plan = step->plan;
    int nics;
    double nic_Bps = netbound_nic_payload_Bps(cluster, &nics);
    int n[2] = {layout_plan_size(plan, GROUP_DP_CP), layout_plan_size(plan, GROUP_EDP)};
    int here[2] = {layout_plan_most_on_a_node(cluster, plan, n[0], plan->tp),
                   layout_plan_most_on_a_node(cluster, plan, n[1],
                                              layout_plan_size(plan, GROUP_ETP) * plan->ep)};
    double bytes[2] = {0, 0}, comm = 0;
    CommBytes c = {.plan = plan, .bytes = bytes};
    for (const Strategy *const *s = strategy_registry; *s; s++) {
        SegmentBytes add = reduce ? (*s)->segment_reduce_bytes : (*s)->segment_comm_bytes;
        if (add && (*s)->active(plan))
            c.add[c.n++] = add;
    }
    states_stage_visit(segs, stage, add_comm_bytes, &c);
    for (int k = 0; k < 2; k++) {
        double across = (double)(n[k] - here[k]) / n[k] / (MIN(here[k], nics) * nic_Bps);
        comm += MAX(across * bytes[k], netbound_exchange_s(cluster, bytes[k], n[k]));
    }
    return comm;
}

/* The least seconds the strategies' own streams are busy on a rank of
 * stage `stage` (Strategy.stream_bound_s), the longest. */
static double streams_s(const Step *step, int stage)
{
    double most = 0;
    for (const Strategy *const *s = strategy_registry; *s; s++)
        if ((*s)->stream_bound_s && (*s)->active(step->plan))
            most = MAX(most, (*s)->stream_bound_s(step, stage));
    return most;
}

/* What the strategies' tasks add between stage `stage`'s last unit and
 * its optimizer step (Strategy.tail_s). */
static double tail_s(const Step *step, int stage)
{
    double seconds = 0;
    for (const Strategy *const *s = strategy_registry; *s; s++)
        if ((*s)->tail_s && (*s)->active(step->plan))
            seconds += (*s)->tail_s(step, stage);
    return seconds;
}

double estimate_comm_lower_bound_s(const Step *step)
{
    StageSegments segs = states_stage_segments(step->model, step->plan);
    double most = 0;
    for (int s = 0; s < step->plan->pp; s++)
        most = MAX(most, MAX(comm_s(&segs, step, s, FALSE), streams_s(step, s)));
    states_stage_segments_clear(&segs);
    return most * (1 - TIME_SLACK);
}

double estimate_step_lower_bound_s(const Step *step)
{
    const PlanSpec *plan = step->plan;
    PieceCosts c;
    piece_costs(step, TRUE, &c);
    int m = step->micro_batches;
    double fill = 0, drain = 0; /* F(s), B(s): chunks 0 .. s - 1, one micro-batch */
    StageSegments segs = states_stage_segments(step->model, plan);
    double opt0 = optimizer_s(&segs, step, 0), most = 0;
    /* no drain: see estimate.h */
    gboolean split = schedule_splits_backward(plan) != SPLIT_NONE;
    for (int s = 0; s < plan->pp; s++) {
        double busy = 0;
        ChunkCost here = {0}; /* chunk s, for the stages after */
        for (int k = 0; k < plan->virtual_stages; k++) {
            ChunkCost cc = chunk_cost(&c, chunks_of_stage(plan, s, k));
            busy += m * (cc.forward_s + cc.backward_s);
            if (k == 0)
                here = cc;
        }
        double opt = s == 0 ? opt0 : optimizer_s(&segs, step, s);
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
    return MAX(most * (1 - TIME_SLACK), estimate_comm_lower_bound_s(step));
}

/* The chain bound's walk: each unit's end, at the least, per micro-batch
 * and model chunk, forward and backward (-1: not reached yet). */
typedef struct {
    const PlanSpec *plan;
    const ChunkCost *cost; /* per model chunk */
    double hop_s;          /* a transfer between stages, at the least */
    int chunks;            /* model chunks */
    double *end[2];        /* [1] forwards', [0] backwards': micro-batch x chunks + chunk */
} Chain;

/* When unit `u` of stage s (model chunk g) may start as its data goes:
 * the end of the unit it takes its input from, and a transfer if that ran
 * on another stage; -1 while that unit has not been reached. */
static double data_ready(const Chain *ch, int s, const Unit *u, int g)
{
    int from = u->forward ? g - 1 : g + 1;
    if (u->forward && g == 0)
        return 0;
    if (!u->forward && g == ch->chunks - 1) /* the loss: its own forward */
        return ch->end[1][u->micro_batch * ch->chunks + g];
    double end = ch->end[u->forward][u->micro_batch * ch->chunks + from];
    if (end < 0)
        return -1;
    return end + (chunks_stage(ch->plan, from) != s ? ch->hop_s : 0);
}

/* Walks the stages' units in their schedules' orders, each stage as far
 * as the units it waits for were reached, until all are; the latest end
 * of a stage's optimizer step: after its last unit, and after the
 * reductions its last micro-batch launches (their least time from the
 * start of that micro-batch's first backward unit on the stage: they all
 * wait for its backward), then what the strategies do between the two
 * (tail_s). 0 if the orders wait for each other (no replay of them would
 * end). */
static double chain_walk(Chain *ch, const Step *step, GArray *const *units)
{
    const PlanSpec *plan = step->plan;
    StageSegments segs = states_stage_segments(step->model, plan);
    g_autofree int *next = g_new0(int, plan->pp);
    g_autofree double *free_s = g_new0(double, plan->pp);
    g_autofree double *last_start = g_new0(double, plan->pp); /* -1: not reached */
    for (int s = 0; s < plan->pp; s++)
        last_start[s] = -1;
    int last = step->micro_batches - 1;
    double most = 0;
    int left = plan->pp;
    for (gboolean moved = TRUE; left > 0 && moved;) {
        moved = FALSE;
        for (int s = 0; s < plan->pp; s++) {
            int n = (int)units[s]->len, from = next[s];
            if (from == n)
                continue;
            for (; next[s] < n; next[s]++) {
                const Unit *u = &g_array_index(units[s], Unit, next[s]);
                int g = chunks_of_stage(plan, s, u->chunk);
                double ready = data_ready(ch, s, u, g);
                if (ready < 0)
                    break;
                const ChunkCost *c = &ch->cost[g];
                if (!u->forward && u->micro_batch == last && last_start[s] < 0)
                    last_start[s] = MAX(free_s[s], ready);
                if (u->forward)
                    free_s[s] = MAX(free_s[s], ready) + c->forward_s;
                else if (u->part == BACKWARD_WHOLE)
                    free_s[s] = MAX(free_s[s] + c->backward_s, ready + c->chain_backward_s);
                else if (u->part == BACKWARD_INPUT)
                    free_s[s] = MAX(free_s[s], ready) + c->parts.input_s;
                else /* W: after its own B on this stage, which nothing else waits for */
                    free_s[s] += c->parts.weight_s;
                if (u->part != BACKWARD_WEIGHT)
                    ch->end[u->forward][u->micro_batch * ch->chunks + g] = free_s[s];
            }
            moved |= next[s] > from;
            if (next[s] == n) {
                left--;
                double reduced = MAX(last_start[s], 0) + comm_s(&segs, step, s, TRUE);
                most = MAX(most,
                           MAX(free_s[s], reduced) + tail_s(step, s) + optimizer_s(&segs, step, s));
            }
        }
    }
    states_stage_segments_clear(&segs);
    return left > 0 ? 0 : most;
}

double estimate_step_chain_bound_s(const Step *step)
{
    const PlanSpec *plan = step->plan;
    double bound = estimate_step_lower_bound_s(step);
    int chunks = chunks_count(plan), m = step->micro_batches;
    StageWork work = schedule_stage_work(plan, m, 0);
    if (work.paired || (gint64)m * chunks > CHAIN_MOST_UNITS)
        return bound;
    PieceCosts c;
    piece_costs(step, TRUE, &c);
    g_autofree ChunkCost *cost = g_new(ChunkCost, chunks);
    for (int g = 0; g < chunks; g++)
        cost[g] = chunk_cost(&c, g);
    piece_costs_clear(&c);
    /* the stages one pp step apart are on different nodes wherever that
     * step spans a node's GPUs */
    gboolean across = layout_plan_stride(plan, GROUP_PP) >= step->cluster->gpus_per_node;
    double bytes = pipeline_transfer_bytes(step->model, plan, step->shard);
    Chain ch = {.plan = plan,
                .cost = cost,
                .hop_s = netbound_send_s(step->cluster, bytes, across),
                .chunks = chunks};
    gsize ends = (gsize)m * chunks;
    for (int f = 0; f < 2; f++) {
        ch.end[f] = g_new(double, ends);
        for (gsize i = 0; i < ends; i++)
            ch.end[f][i] = -1;
    }
    g_autofree GArray **units = g_new(GArray *, plan->pp);
    for (int s = 0; s < plan->pp; s++) { /* schedule_units' arrays last until its next call */
        StageWork w = schedule_stage_work(plan, m, s);
        const GArray *order = schedule_units(plan->schedule, &w);
        units[s] = g_array_sized_new(FALSE, FALSE, sizeof(Unit), order->len);
        g_array_append_vals(units[s], order->data, order->len);
    }
    double chain = chain_walk(&ch, step, units);
    for (int s = 0; s < plan->pp; s++)
        g_array_free(units[s], TRUE);
    g_free(ch.end[0]);
    g_free(ch.end[1]);
    return MAX(bound, chain * (1 - TIME_SLACK));
}
