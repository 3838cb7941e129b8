/* emit.c: the emitter's walk over a step, rank by rank.
 *
 * Costs are computed once per step: every piece of a kind costs the same
 * on every rank. The model's chunks and their segments are laid out once
 * too (`segments`, chunk after chunk); a rank walks the chunks of its
 * stage. A rank's program: a "step begin" marker that allocates the model
 * states (states.h) and the GPU's runtime reserve, the units in schedule
 * order, the strategies' step_end, the optimizer step, their
 * after_optimizer, and a "step end" marker that waits for the
 * communication stream. A forward piece allocates the activations it keeps
 * when it starts, a strategy's own piece of a layer block (a replay) those
 * it re-creates; the block's backward frees both when it ends
 * (emit_keep_activations). */
#include "strategy/emit.h"

#include <math.h>
#include <string.h>

#include "strategy/schedule.h"
#include "strategy/strategy.h"
#include "strategy/states.h"
#include "base/error.h"

/* What one piece costs and keeps, and the names of its tasks. */
typedef struct {
    OpsWork work;             /* forward, and the backward's weight gradients */
    double kept_bytes;        /* activations forward keeps for backward, all of them */
    const char *name[PHASES]; /* each phase's: formats of the micro-batch and the layer */
} Cost;

struct Emit {
    const ModelSpec *model;
    const ClusterSpec *cluster;
    GpuSpec gpu; /* the cluster's, as the plan runs it (gpu_for_plan) */
    const PlanSpec *plan;
    const Layout *layout;
    const Symmetry *symmetry; /* the ranks emitted, and the GPUs they stand for */
    Graph *graph;
    /* graph groups, made when first used (-1 until then): */
    int *group_id[GROUP_KINDS]; /* per layout group */
    int *pair_id[DIRECTIONS];   /* per sending rank: with its receiver */
    int *ends_id;               /* per rank on the first stage: with the last stage */
    int micro_batches;
    Cost embedding, head, block[TF_BLOCK_KINDS]; /* a kind no layer has: zero */
    Segment *segments;                           /* every model chunk's, chunk after chunk */
    int *chunk_first; /* per model chunk: its first segment; one more entry */
    /* the rank being emitted, and its rank in the graph */
    int rank, local, stage;
    double params;                    /* held by the rank */
    double layers;                    /* of them, its transformer layers' */
    double experts;                   /* of them, on the expert-data-parallel group */
    double kept[TF_BLOCK_KINDS];      /* activations a layer block's forward keeps */
    double recreated[TF_BLOCK_KINDS]; /* and a replay re-creates (emit_keep_activations) */
    TaskId *gates;                    /* what the next compute-stream task waits for */
    gsize n_gates, gates_room;

    /* the rank's layout group of each kind: its index, its ranks, how many */
    int group_index[GROUP_KINDS];
    const int *group_members[GROUP_KINDS];
    int group_size[GROUP_KINDS];

    const Strategy *active[STRATEGY_MAX + 1]; /* NULL-terminated */
    void *state[STRATEGY_MAX];
    int computer;             /* the active strategy that emits pieces' compute, or -1 */
    const EmitSlowdown *slow; /* what-ifs, or NULL */
    guint64 computes;         /* the rank's compute tasks so far */
    gsize max_tasks;          /* the cap on the graph's size */
};

/* Calls hook H of every active strategy with the arguments that follow. */
#define EACH_STRATEGY(e, H, ...)                                                                   \
    for (int i_ = 0; (e)->active[i_]; i_++) {                                                      \
        if ((e)->active[i_]->H)                                                                    \
            (e)->active[i_]->H((e), (e)->state[i_], __VA_ARGS__);                                  \
    }

static const char *const mem_names[MEM_KINDS] = {"params",      "grads",   "optimizer",
                                                 "activations", "buffers", "reserve"};

const char *emit_mem_name(MemKind kind)
{
    return mem_names[kind];
}

const char *emit_stream_name(Stream stream)
{
    static const char *const names[EMIT_STREAMS] = {
#define STREAM(ID, name, always) name,
#include "strategy/streams.def"
#undef STREAM
    };
    return names[stream];
}

const char *emit_comm_name(TaskTag tag)
{
    static const char *const names[TAG_KINDS] = {
#define TAG(ID, purpose) purpose,
#include "strategy/tags.def"
#undef TAG
    };
    return names[tag];
}

/* The streams of a graph of the active strategies: every graph's
 * (streams.def's `always`), and up to the highest any of them uses. */
static int graph_stream_count(const Emit *e)
{
    static const gboolean always[EMIT_STREAMS] = {
#define STREAM(ID, name, every) every,
#include "strategy/streams.def"
#undef STREAM
    };
    int n = 0;
    for (int s = 0; s < EMIT_STREAMS; s++) {
        gboolean used = always[s];
        for (int i = 0; e->active[i] && !used; i++)
            used = (e->active[i]->streams >> s) & 1;
        if (used)
            n = s + 1;
    }
    return n;
}

const ModelSpec *emit_model(const Emit *e)
{
    return e->model;
}

const PlanSpec *emit_plan(const Emit *e)
{
    return e->plan;
}

const GpuSpec *emit_gpu(const Emit *e)
{
    return &e->gpu;
}

const ClusterSpec *emit_cluster(const Emit *e)
{
    return e->cluster;
}

const Layout *emit_layout(const Emit *e)
{
    return e->layout;
}

Shard emit_shard(const Emit *e)
{
    return tf_shard(e->plan);
}

int emit_micro_batches(const Emit *e)
{
    return e->micro_batches;
}

int emit_rank(const Emit *e)
{
    return e->rank;
}

int emit_stage(const Emit *e)
{
    return e->stage;
}

double emit_params(const Emit *e)
{
    return e->params;
}

double emit_expert_params(const Emit *e)
{
    return e->experts;
}

double emit_layer_params(const Emit *e)
{
    return e->layers;
}

int emit_model_chunk(const Emit *e, const Unit *u)
{
    return u->chunk * e->plan->pp + e->stage;
}

const Segment *emit_segment_next(const Emit *e, const Unit *u, const Segment *seg)
{
    int g = emit_model_chunk(e, u);
    ptrdiff_t i = (seg - e->segments) + (u->forward ? 1 : -1);
    return i >= e->chunk_first[g] && i < e->chunk_first[g + 1] ? &e->segments[i] : NULL;
}

void emit_keep_activations(Emit *e, Block block, double kept, double recreated)
{
    e->kept[block] = kept;
    e->recreated[block] = recreated;
}

/* The task just appended to the compute stream waits for the gates. */
static void take_gates(Emit *e, TaskId t)
{
    for (gsize i = 0; i < e->n_gates; i++)
        graph_dep(e->graph, e->gates[i], t);
    e->n_gates = 0;
}

/* splitmix64's output function (Steele, Lea and Flood, OOPSLA 2014): a
 * counter-based hash, each output a function of its input alone. */
static guint64 mix(guint64 x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* How many times its cost the rank's next compute task takes (emit.h's
 * EmitSlowdown); the normal draw by Box and Muller's transform of two
 * 32-bit uniforms in (0, 1) from one hash. */
static double slowdown(Emit *e)
{
    const EmitSlowdown *s = e->slow;
    guint64 index = e->computes++;
    if (!s)
        return 1;
    double factor = s->gpu_factor ? s->gpu_factor[e->rank] : 1, sigma = s->jitter_sigma;
    if (sigma > 0) {
        guint64 h = mix(mix(mix(s->seed) ^ (guint64)e->rank) ^ index);
        double u1 = ((double)(h >> 32) + 0.5) / 4294967296.0;
        double u2 = ((double)(h & 0xffffffffu) + 0.5) / 4294967296.0;
        double z = sqrt(-2 * log(u1)) * cos(2 * G_PI * u2);
        factor *= exp(sigma * z - sigma * sigma / 2);
    }
    return factor;
}

TaskId emit_compute(Emit *e, double seconds, double flops, TaskTag tag, TaskName name)
{
    TaskId t =
        graph_compute(e->graph, e->local, STREAM_COMPUTE, seconds * slowdown(e), flops, tag, name);
    take_gates(e, t);
    return t;
}

TaskId emit_background(Emit *e, Stream stream, double seconds, TaskTag tag, TaskName name)
{
    g_assert(stream != STREAM_COMPUTE);
    return graph_compute(e->graph, e->local, stream, seconds, 0, tag, name);
}

void emit_gate(Emit *e, TaskId before)
{
    if (before == TASK_NONE)
        return;
    if (e->n_gates == e->gates_room) {
        e->gates_room = MAX(2 * e->gates_room, 8);
        e->gates = g_renew(TaskId, e->gates, e->gates_room);
    }
    e->gates[e->n_gates++] = before;
}

/* The graph group of `members`, registered in *id when first used. */
static int group(Emit *e, int *id, const int *members, int n)
{
    if (*id < 0)
        *id = graph_add_group(e->graph, members, n);
    return *id;
}

TaskId emit_collective(Emit *e, GroupKind kind, Stream stream, CollOp op, double bytes, TaskTag tag,
                       TaskName name)
{
    int index = e->group_index[kind], n = e->group_size[kind];
    if (n == 1)
        return TASK_NONE;
    int id = group(e, &e->group_id[kind][index], e->group_members[kind], n);
    TaskId t = graph_collective(e->graph, id, e->local, stream, op, bytes, tag, name);
    if (stream == STREAM_COMPUTE)
        take_gates(e, t);
    return t;
}

/* The rank of the same tensor- and data-parallel coordinates on the
 * neighbouring stage in direction d, wrapping around. */
static int neighbour(const Emit *e, int rank, Direction d)
{
    Coord c = layout_coord(e->layout, rank);
    int p = e->plan->pp;
    c.pp = (c.pp + (d == TOWARD_NEXT ? 1 : p - 1)) % p;
    return layout_rank(e->layout, c);
}

/* The graph group of the transfer from `sender` toward direction d. */
static int pair(Emit *e, Direction d, int sender)
{
    int members[2] = {sender, neighbour(e, sender, d)};
    return group(e, &e->pair_id[d][sender], members, 2);
}

TaskId emit_send(Emit *e, Direction d, double bytes, TaskId after, TaskName name)
{
    TaskId t = graph_collective(e->graph, pair(e, d, e->rank), e->local, STREAM_P2P, COLL_SEND_RECV,
                                bytes, TAG_PP, name);
    emit_wait(e, after, t);
    return t;
}

TaskId emit_recv(Emit *e, Direction d, double bytes, TaskName name)
{
    int sender = neighbour(e, e->rank, d == TOWARD_NEXT ? TOWARD_PREV : TOWARD_NEXT);
    return graph_collective(e->graph, pair(e, d, sender), e->local, GRAPH_OFF_STREAM,
                            COLL_SEND_RECV, bytes, TAG_PP, name);
}

TaskId emit_ends_collective(Emit *e, Stream stream, CollOp op, double bytes, TaskTag tag,
                            TaskName name)
{
    Coord c = layout_coord(e->layout, e->rank);
    g_assert(e->plan->pp > 1 && (c.pp == 0 || c.pp == e->plan->pp - 1));
    c.pp = 0;
    int first = layout_rank(e->layout, c);
    c.pp = e->plan->pp - 1;
    int ends[2] = {first, layout_rank(e->layout, c)};
    return graph_collective(e->graph, group(e, &e->ends_id[first], ends, 2), e->local, stream, op,
                            bytes, tag, name);
}

void emit_wait(Emit *e, TaskId before, TaskId after)
{
    if (before != TASK_NONE && after != TASK_NONE)
        graph_dep(e->graph, before, after);
}

TaskId emit_last(const Emit *e, Stream stream)
{
    return graph_last(e->graph, e->local, stream);
}

void emit_mem(Emit *e, TaskId task, MemKind kind, double bytes, gboolean at_end)
{
    if (task != TASK_NONE && bytes != 0)
        graph_mem(e->graph, task, e->local, kind, bytes, at_end);
}

/* ---- costs and chunks ------------------------------------------------------ */

/* A B (input gradients) is named as the whole backward, a W `wgrad`. */
static Cost cost(const GpuSpec *gpu, const OpList *ops, double kept_bytes, const char *fwd,
                 const char *bwd, const char *wgrad)
{
    return (Cost){.work = tf_ops_work(gpu, ops),
                  .kept_bytes = kept_bytes,
                  .name = {[PHASE_FORWARD] = fwd,
                           [PHASE_BACKWARD] = bwd,
                           [PHASE_INPUT_GRAD] = bwd,
                           [PHASE_WEIGHT_GRAD] = wgrad}};
}

static void compute_costs(Emit *e)
{
    const ModelSpec *m = e->model;
    const GpuSpec *gpu = emit_gpu(e);
    Shard sh = emit_shard(e);
    OpList ops;
    tf_embedding_ops(m, sh, &ops);
    e->embedding = cost(gpu, &ops, tf_embedding_activation_bytes(m, sh), "fwd mb%d embedding",
                        "bwd mb%d embedding", "wgrad mb%d embedding");
    tf_head_ops(m, sh, &ops);
    e->head = cost(gpu, &ops, tf_head_activation_bytes(m, sh), "fwd mb%d head", "bwd mb%d head",
                   "wgrad mb%d head");
    static const char *const names[TF_BLOCK_KINDS][3] = {
        {"fwd mb%d L%d attn", "bwd mb%d L%d attn", "wgrad mb%d L%d attn"},
        {"fwd mb%d L%d mlp", "bwd mb%d L%d mlp", "wgrad mb%d L%d mlp"},
        {"fwd mb%d L%d mlp", "bwd mb%d L%d mlp", "wgrad mb%d L%d mlp"},
    };
    for (int b = 0; b < TF_BLOCK_KINDS; b++) {
        if (tf_block_layers(m, (Block)b) == 0)
            continue;
        tf_block_ops(m, (Block)b, sh, &ops);
        /* everything its backward needs; a strategy may keep less */
        double kept = tf_block_activation_bytes(m, (Block)b, sh, RECOMPUTE_NONE);
        e->block[b] = cost(gpu, &ops, kept, names[b][0], names[b][1], names[b][2]);
    }
}

/* Lays out the segments of every model chunk: the first chunk starts with
 * the embedding, the last ends with the head, each holds its share of the
 * layers (the plan's layers_per_stage), each as states_segment has it. */
static void lay_out_chunks(Emit *e)
{
    const ModelSpec *m = e->model;
    const PlanSpec *plan = e->plan;
    int chunks = plan->layers_per_stage.n;
    e->segments = g_new(Segment, m->layers + 2);
    e->chunk_first = g_new(int, chunks + 1);
    int n = 0, layer_index = 0;
    for (int g = 0; g < chunks; g++) {
        e->chunk_first[g] = n;
        if (g == 0)
            e->segments[n++] = states_segment(m, plan, SEGMENT_EMBEDDING, -1);
        for (int i = 0; i < plan->layers_per_stage.v[g]; i++, layer_index++)
            e->segments[n++] = states_segment(m, plan, SEGMENT_LAYER, layer_index);
        if (g == chunks - 1)
            e->segments[n++] = states_segment(m, plan, SEGMENT_HEAD, -1);
    }
    e->chunk_first[chunks] = n;
    g_assert(n == m->layers + 2 && layer_index == m->layers);
}

static const Cost *cost_of(const Emit *e, const Segment *seg, Block block)
{
    switch (seg->kind) {
    case SEGMENT_EMBEDDING:
        return &e->embedding;
    case SEGMENT_HEAD:
        return &e->head;
    case SEGMENT_LAYER:
        break;
    }
    return &e->block[block];
}

/* ---- units ----------------------------------------------------------------- */

/* Whether strategy `s`'s piece hooks take part in a piece of `passes`. */
static gboolean takes_part(const Strategy *s, unsigned passes)
{
    return s->piece_passes == 0 || (s->piece_passes & passes) != 0;
}

/* A piece's compute between the strategies' piece hooks, with its
 * activations: allocated when it starts, or (`at_end`) freed when it ends.
 * One task, or the parts a strategy's piece_compute emits for a whole
 * piece; returns the last. */
static TaskId piece_task(Emit *e, const PieceRef *p, double seconds, double flops, TaskTag tag,
                         TaskName name, double activation_bytes, gboolean at_end)
{
    unsigned passes = schedule_passes(p->phase);
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->piece_begin && takes_part(e->active[i], passes))
            e->active[i]->piece_begin(e, e->state[i], p);
    TaskId first, last;
    if (e->computer >= 0 && !p->partial)
        last =
            e->active[e->computer]->piece_compute(e, e->state[e->computer], p, tag, name, &first);
    else
        first = last = emit_compute(e, seconds, flops, tag, name);
    emit_mem(e, at_end ? last : first, MEM_ACTIVATIONS, activation_bytes, at_end);
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->piece_end && takes_part(e->active[i], passes))
            e->active[i]->piece_end(e, e->state[i], p, last);
    return last;
}

TaskId emit_piece(Emit *e, const PieceRef *p, double seconds, double flops, TaskTag tag,
                  TaskName name, double activation_bytes)
{
    return piece_task(e, p, seconds, flops, tag, name, activation_bytes, FALSE);
}

gboolean emit_piece_backward(const PieceRef *p)
{
    return (schedule_passes(p->phase) & PASS_INPUT_GRAD) != 0;
}

gboolean emit_unit_passes_gradients(const Unit *u)
{
    return !u->forward && u->part != BACKWARD_WEIGHT;
}

gboolean emit_unit_ends_backward(const Unit *u)
{
    return !u->forward && u->part != BACKWARD_INPUT;
}

/* A piece of the unit's walk: forward keeps its activations, backward
 * frees them with what was re-created since (a split backward at the end
 * of its W: the weight gradients need the layer inputs and the output
 * gradients, and this ledger keeps the block's activations whole until
 * then). Its work is its phase's (schedule_work). */
static TaskId walk_piece(Emit *e, const Unit *u, const Segment *seg, Block block)
{
    static const Phase backward_phase[] = {[BACKWARD_WHOLE] = PHASE_BACKWARD,
                                           [BACKWARD_INPUT] = PHASE_INPUT_GRAD,
                                           [BACKWARD_WEIGHT] = PHASE_WEIGHT_GRAD};
    const Cost *c = cost_of(e, seg, block);
    gboolean layer = seg->kind == SEGMENT_LAYER;
    double kept = layer ? e->kept[block] : c->kept_bytes;
    double recreated = layer ? e->recreated[block] : 0;
    Phase phase = u->forward ? PHASE_FORWARD : backward_phase[u->part];
    PieceRef p = {seg, block, phase, u->micro_batch, FALSE};
    TaskName name = {.fmt = c->name[phase], .a = u->micro_batch, .b = seg->layer};
    PassWork w = schedule_work(schedule_passes(phase), &c->work, 1);
    if (u->forward)
        return piece_task(e, &p, w.seconds, w.flops, TAG_FORWARD, name, kept, FALSE);
    double freed = emit_unit_ends_backward(u) ? kept + recreated : 0;
    return piece_task(e, &p, w.seconds, w.flops, TAG_BACKWARD, name, -freed, TRUE);
}

static void emit_segment(Emit *e, const Unit *u, const Segment *seg)
{
    EACH_STRATEGY(e, segment_begin, u, seg);
    TaskId last;
    if (seg->kind != SEGMENT_LAYER)
        last = walk_piece(e, u, seg, BLOCK_ATTENTION);
    else if (u->forward)
        for (int i = 0; i < TF_BLOCKS; i++)
            last = walk_piece(e, u, seg, tf_layer_block(e->model, seg->layer, i));
    else
        for (int i = TF_BLOCKS - 1; i >= 0; i--)
            last = walk_piece(e, u, seg, tf_layer_block(e->model, seg->layer, i));
    EACH_STRATEGY(e, segment_end, u, seg, last);
}

static void emit_unit(Emit *e, const Unit *u)
{
    int g = emit_model_chunk(e, u), first = e->chunk_first[g], end = e->chunk_first[g + 1];
    EACH_STRATEGY(e, unit_begin, u);
    if (u->forward)
        for (int i = first; i < end; i++)
            emit_segment(e, u, &e->segments[i]);
    else
        for (int i = end - 1; i >= first; i--)
            emit_segment(e, u, &e->segments[i]);
    EACH_STRATEGY(e, unit_end, u, emit_last(e, STREAM_COMPUTE));
}

/* ---- the step -------------------------------------------------------------- */

/* Whether the graph has passed the cap on its size: emission stops. */
static gboolean over_cap(const Emit *e)
{
    return graph_tasks(e->graph) > e->max_tasks;
}

static void emit_rank_step(Emit *e, GArray *units)
{
    e->stage = layout_coord(e->layout, e->rank).pp;
    for (int k = 0; k < GROUP_KINDS; k++) {
        e->group_index[k] = layout_group_of(e->layout, (GroupKind)k, e->rank);
        e->group_members[k] =
            layout_group(e->layout, (GroupKind)k, e->group_index[k], &e->group_size[k]);
    }
    e->params = 0;
    e->layers = 0;
    e->experts = 0;
    e->computes = 0;
    for (int c = 0; c < e->plan->virtual_stages; c++) {
        int g = c * e->plan->pp + e->stage;
        for (int i = e->chunk_first[g]; i < e->chunk_first[g + 1]; i++) {
            e->params += e->segments[i].params;
            e->layers += e->segments[i].kind == SEGMENT_LAYER ? e->segments[i].params : 0;
            e->experts += e->segments[i].expert_params;
        }
    }
    for (int b = 0; b < TF_BLOCK_KINDS; b++)
        emit_keep_activations(e, (Block)b, e->block[b].kept_bytes, 0);
    for (int i = 0; e->active[i]; i++) {
        memset(e->state[i], 0, e->active[i]->state_size);
        if (e->active[i]->step_begin)
            e->active[i]->step_begin(e, e->state[i]);
    }
    TaskId begin = graph_marker(e->graph, e->local, STREAM_COMPUTE, TAG_MARKER,
                                (TaskName){.fmt = "step begin"});
    for (int k = MEM_PARAMS; k <= MEM_OPTIMIZER; k++)
        emit_mem(e, begin, (MemKind)k,
                 states_bytes(e->plan, (MemKind)k, e->params, e->experts, e->layers), FALSE);
    emit_mem(e, begin, MEM_RESERVE, emit_gpu(e)->reserve_bytes, FALSE);

    g_array_set_size(units, 0);
    for (int i = 0; e->active[i]; i++) {
        if (e->active[i]->schedule) {
            e->active[i]->schedule(e, units);
            break;
        }
    }
    for (guint i = 0; i < units->len; i++) {
        emit_unit(e, &g_array_index(units, Unit, i));
        if (over_cap(e))
            return; /* the graph is dropped unsealed: stop here */
    }
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->step_end)
            e->active[i]->step_end(e, e->state[i]);

    double shard = states_shard_params(e->plan, MEM_OPTIMIZER, e->params, e->experts);
    TaskId opt = emit_compute(e, states_optimizer_s(emit_gpu(e), e->plan, shard), 0, TAG_OPTIMIZER,
                              (TaskName){.fmt = "optimizer"});
    emit_wait(e, emit_last(e, STREAM_COMM), opt);
    EACH_STRATEGY(e, after_optimizer, opt);
    TaskId end =
        graph_marker(e->graph, e->local, STREAM_COMPUTE, TAG_MARKER, (TaskName){.fmt = "step end"});
    emit_wait(e, emit_last(e, STREAM_COMM), end);
    emit_wait(e, emit_last(e, STREAM_P2P), end);
}

/* The most tasks the step can have, for reserving room: every rank runs
 * every micro-batch's forward and backward through every piece of its
 * stage, and the active strategies add up to a few tasks per piece (their
 * piece_tasks, counting a collective once per rank, where the graph has
 * one per group). */
static double most_tasks(const Emit *e, int ranks)
{
    const PlanSpec *p = e->plan;
    double per_piece = 1;
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->piece_tasks)
            per_piece += e->active[i]->piece_tasks(p);
    double pieces = (TF_BLOCKS * (double)e->model->layers + 2) / p->pp + 2 * p->virtual_stages;
    return ranks * (2.0 * e->micro_batches * pieces * per_piece + 4);
}

/* The error for a step of more tasks than the cap; `got` says how many,
 * `code` whether it was refused before it was built (PS_ERROR_INPUT) or
 * after (PS_ERROR_OVER_CAP). */
static void refuse_size(const ModelSpec *model, const PlanSpec *plan, int ranks, gsize max_tasks,
                        const char *got, PsErrorCode code, GError **error)
{
    g_set_error(error, PS_ERROR, code,
                "%s: expected a step of at most %.0f tasks, got %s (%d ranks x %d micro-batches "
                "x %d layers / %d stages): lower global_batch_size, the GPU count or the layers",
                plan_field_origin(plan, PLAN_GLOBAL_BATCH_SIZE), (double)max_tasks, got, ranks,
                plan_spec_micro_batches(plan), model->layers, plan->pp);
}

gboolean emit_check_size(const ModelSpec *model, const PlanSpec *plan, int ranks,
                         double known_tasks, gsize max_tasks, GError **error)
{
    /* every rank runs a forward and a backward of each layer of its stage
     * per micro-batch (every stage has as many of the ranks) */
    double fewest = 2.0 * ranks * plan_spec_micro_batches(plan) * model->layers / plan->pp;
    fewest = MAX(fewest, known_tasks);
    if (fewest <= max_tasks)
        return TRUE;
    g_autofree char *got = g_strdup_printf("at least %.3g", fewest);
    refuse_size(model, plan, ranks, max_tasks, got, PS_ERROR_INPUT, error);
    return FALSE;
}

/* The tables of graph groups, all unused. */
static void init_groups(Emit *e, int ranks)
{
    for (int k = 0; k < GROUP_KINDS; k++) {
        int groups = layout_groups(e->layout, (GroupKind)k);
        e->group_id[k] = g_new(int, groups);
        memset(e->group_id[k], -1, sizeof(int) * (gsize)groups);
    }
    for (int d = 0; d < DIRECTIONS; d++) {
        e->pair_id[d] = g_new(int, ranks);
        memset(e->pair_id[d], -1, sizeof(int) * (gsize)ranks);
    }
    e->ends_id = g_new(int, ranks);
    memset(e->ends_id, -1, sizeof(int) * (gsize)ranks);
}

Graph *emit_step(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                 const Layout *layout, const Symmetry *symmetry, const EmitSlowdown *slow,
                 gsize max_tasks, double known_tasks, GError **error)
{
    Emit e = {.model = model,
              .cluster = cluster,
              .gpu = gpu_for_plan(&cluster->gpu, plan),
              .plan = plan,
              .layout = layout,
              .symmetry = symmetry,
              .slow = slow,
              .max_tasks = max_tasks};
    e.micro_batches = plan_spec_micro_batches(plan);
    int ranks = layout_ranks(layout), n_active = 0, simulated;
    const int *ranks_of = symmetry_simulated(symmetry, &simulated);
    e.computer = -1;
    for (int i = 0; strategy_registry[i]; i++) {
        g_assert(i < STRATEGY_MAX);
        if (!strategy_registry[i]->active(plan))
            continue;
        if (strategy_registry[i]->piece_compute && e.computer < 0)
            e.computer = n_active;
        e.active[n_active++] = strategy_registry[i];
    }
    if (!emit_check_size(model, plan, simulated, known_tasks, max_tasks, error))
        return NULL; /* refused before anything is built */
    for (int i = 0; i < n_active; i++)
        e.state[i] = g_malloc0(MAX(e.active[i]->state_size, 1));
    g_autoptr(Graph) graph = graph_new(simulated, graph_stream_count(&e));
    /* a stream edge per task, fewer other dependencies; at most a memory
     * operation per task */
    gsize tasks = (gsize)MIN(most_tasks(&e, simulated), e.max_tasks);
    graph_reserve(graph, tasks, 2 * tasks, tasks);
    graph_place(graph, ranks_of, ranks);
    e.graph = graph;
    init_groups(&e, ranks);
    compute_costs(&e);
    lay_out_chunks(&e);

    GArray *units = g_array_new(FALSE, FALSE, sizeof(Unit));
    for (e.local = 0; e.local < simulated && !over_cap(&e); e.local++) {
        e.rank = ranks_of[e.local];
        emit_rank_step(&e, units);
    }
    g_array_free(units, TRUE);
    g_free(e.gates);
    g_free(e.segments);
    g_free(e.chunk_first);
    for (int i = 0; i < n_active; i++)
        g_free(e.state[i]);
    for (int k = 0; k < GROUP_KINDS; k++)
        g_free(e.group_id[k]);
    for (int d = 0; d < DIRECTIONS; d++)
        g_free(e.pair_id[d]);
    g_free(e.ends_id);
    if (over_cap(&e)) {
        refuse_size(model, plan, simulated, max_tasks, "more", PS_ERROR_OVER_CAP, error);
        return NULL;
    }
    if (!graph_seal(graph, error))
        return NULL;
    return g_steal_pointer(&graph);
}

/* The images of group `group` of `g` under sym's shifts; `fallback` when
 * the group breaks them. */
static double group_images(const Graph *g, int group, const Symmetry *sym, double fallback)
{
    int n;
    const int *gpus = graph_group_gpus(g, group, &n);
    double images;
    unsigned invariant;
    return symmetry_group_images(sym, gpus, n, &images, &invariant) == 0 ? images : fallback;
}

double emit_tasks_under(const Graph *built, const Symmetry *built_sym, const Symmetry *sym)
{
    double tasks =
        (double)graph_rank_tasks(built) * symmetry_orbit(built_sym) / symmetry_orbit(sym);
    int groups = graph_groups(built);
    g_autofree double *collectives = g_new0(double, MAX(groups, 1));
    for (gsize id = 0; id < graph_tasks(built); id++) {
        const Task *t = graph_task(built, (TaskId)id);
        if (t->kind == TASK_COLLECTIVE)
            collectives[t->owner]++;
    }
    for (int k = 0; k < groups; k++)
        if (collectives[k] > 0) /* a group that breaks built_sym adds nothing */
            tasks += collectives[k] * group_images(built, k, built_sym, 0) /
                     group_images(built, k, sym, symmetry_orbit(sym));
    return tasks;
}
