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
 * (emit_keep_activations).
 *
 * The same walk counts a step without building it (a dry walk: no graph,
 * emit_count_tasks): every task, dependency and memory operation the graph
 * would get is counted where it would be added, and the strategies, which
 * see tasks only through emit.h, get stand-in ids that are TASK_NONE
 * exactly where the graph's would be. So the count is the graph's, to the
 * task, in time linear in the tasks and no memory per task. */
#include "strategy/emit.h"

#include <math.h>
#include <string.h>

#include "layout/chunks.h"
#include "strategy/schedule.h"
#include "strategy/strategy.h"
#include "strategy/states.h"
#include "base/bigmem.h"
#include "base/error.h"

/* A unit's walk as the emitter keeps it: what its next compute-stream
 * task waits for (emit_gate) and its last compute-stream task. Units walk
 * one at a time, each on walker 0; a pair of the combined 1F1B overlap
 * (emit_pair) walks its two together, each on its own, so that one's
 * gates and exchanges wait for its own work, not the other's. */
typedef struct {
    TaskId *gates;
    gsize n_gates, room;
    TaskId last;  /* TASK_NONE before the unit's first */
    TaskId input; /* a pair's: the last task of its last whole piece, what the
                   * exchanges beside its next one wait for (not a strategy's
                   * partial piece before it, FlashAttention's backward rest) */
} Walker;

/* What one piece costs and keeps, and the names of its tasks. */
typedef struct {
    OpsWork work;             /* forward, and the backward's weight gradients */
    double kept_bytes;        /* activations forward keeps for backward, all of them */
    const char *name[PHASES]; /* each phase's: formats of the micro-batch and the layer */
} Cost;

/* A group's collectives in a dry walk: a rank's k-th join of a group is
 * the group's k-th collective (graph.h), so the group has as many as its
 * most-joining member joined; the walk takes the ranks one after another. */
typedef struct {
    int rank;      /* the rank that joined last */
    guint32 joins; /* its joins so far */
    guint32 most;  /* the most joins of a member: the group's collectives */
} DryGroup;

/* What a dry walk counts: what the graph would hold. */
typedef struct {
    gsize tasks;               /* the ranks' own and one per collective */
    gsize edges;               /* dependencies, stream order included */
    gsize slots;               /* places on streams: a task's, each member's of a collective */
    gsize mem;                 /* memory operations */
    GArray *groups;            /* DryGroup, by group id */
    TaskId last[EMIT_STREAMS]; /* the rank's last task on each stream, as graph_last */
} Dry;

struct Emit {
    Step step; /* the model, the cluster, the plan and what they give */
    const Layout *layout;
    const Symmetry *symmetry; /* the ranks emitted, and the GPUs they stand for */
    Graph *graph; /* NULL: a dry walk, into `dry` */
    Dry dry;
    /* graph groups, made when first used (-1 until then): */
    int *group_id[GROUP_KINDS]; /* per layout group */
    int *pair_id[FLOWS][DIRECTIONS]; /* per sending rank: with its receiver */
    int *ends_id;               /* per rank on the first stage: with the last stage */
    Cost embedding, head, mtp, block[TRANSFORMER_BLOCK_KINDS]; /* a kind no layer has: zero */
    Segment *segments;                           /* every model chunk's, chunk after chunk */
    int *chunk_first; /* per model chunk: its first segment; one more entry */
    /* the rank being emitted, and its rank in the graph */
    int rank, local, stage;
    double params;                    /* held by the rank */
    double layers;                    /* of them, its transformer layers' */
    double experts;                   /* of them, on the expert-data-parallel group */
    double kept[TRANSFORMER_BLOCK_KINDS];      /* activations a layer block's forward keeps */
    double recreated[TRANSFORMER_BLOCK_KINDS]; /* and a replay re-creates (emit_keep_activations) */
    Walker walker[2]; /* the units walked: [0] alone, or a pair's forward and [1] its backward */
    Walker *w;        /* the one walking now */
    gboolean pairing; /* walking a pair (emit_pair) */

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
    const StepFold *fold;     /* the step built short, or NULL: whole */
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
        for (int i = 0; e->active[i] && !used; i++) {
            const Strategy *a = e->active[i];
            used = ((a->step_streams ? a->step_streams(&e->step) : a->streams) >> s) & 1;
        }
        if (used)
            n = s + 1;
    }
    return n;
}

const ModelSpec *emit_model(const Emit *e)
{
    return e->step.model;
}

const PlanSpec *emit_plan(const Emit *e)
{
    return e->step.plan;
}

const StatesRule *emit_states(const Emit *e)
{
    return &e->step.states;
}

const GpuSpec *emit_gpu(const Emit *e)
{
    return &e->step.gpu;
}

const ClusterSpec *emit_cluster(const Emit *e)
{
    return e->step.cluster;
}

const Layout *emit_layout(const Emit *e)
{
    return e->layout;
}

Shard emit_shard(const Emit *e)
{
    return e->step.shard;
}

int emit_micro_batches(const Emit *e)
{
    return e->step.micro_batches;
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
    return chunks_of_stage(e->step.plan, e->stage, u->chunk);
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

/* ---- the graph, or a dry walk's counts ------------------------------------ */

/* A dry walk's next task on the rank's `stream` (GRAPH_OFF_STREAM: none),
 * a new one when `created`: a stand-in id, never TASK_NONE. */
static TaskId dry_task(Emit *e, int stream, gboolean created)
{
    Dry *d = &e->dry;
    g_assert(d->tasks < G_MAXINT32);
    TaskId id = (TaskId)d->tasks;
    d->tasks += created;
    if (stream != GRAPH_OFF_STREAM) { /* stream order: an edge from the one before */
        d->slots++;
        d->edges += d->last[stream] != TASK_NONE;
        d->last[stream] = id;
    }
    return id;
}

/* Task t, just appended to `stream`: the walking unit's last on the
 * compute stream when there. */
static TaskId appended(Emit *e, int stream, TaskId t)
{
    if (stream == STREAM_COMPUTE)
        e->w->last = t;
    return t;
}

/* A compute task of the rank's on `stream`. */
static TaskId add_compute(Emit *e, int stream, double seconds, double flops, TaskTag tag,
                          TaskName name)
{
    return appended(e, stream,
                    e->graph ? graph_compute(e->graph, e->local, stream, seconds, flops, tag, name)
                             : dry_task(e, stream, TRUE));
}

/* A marker on the rank's `stream`. */
static TaskId add_marker(Emit *e, int stream, TaskName name)
{
    return appended(e, stream,
                    e->graph ? graph_marker(e->graph, e->local, stream, TAG_MARKER, name)
                             : dry_task(e, stream, TRUE));
}

/* The rank joins its next collective on graph group `group`. */
static TaskId add_collective(Emit *e, int group, int stream, CollOp op, double bytes, TaskTag tag,
                             TaskName name)
{
    if (e->graph)
        return appended(e, stream,
                        graph_collective(e->graph, group, e->local, stream, op, bytes, tag, name));
    DryGroup *g = &g_array_index(e->dry.groups, DryGroup, group);
    if (g->rank != e->local) { /* the next rank's first join */
        g->rank = e->local;
        g->joins = 0;
    }
    gboolean created = ++g->joins > g->most;
    g->most = MAX(g->most, g->joins);
    return appended(e, stream, dry_task(e, stream, created));
}

/* `after` waits for `before` (TASK_NONE: no-op). */
static void add_dep(Emit *e, TaskId before, TaskId after)
{
    if (!e->graph)
        e->dry.edges += before != TASK_NONE;
    else
        graph_dep(e->graph, before, after);
}

/* The tasks so far. */
static gsize tasks_so_far(const Emit *e)
{
    return e->graph ? graph_tasks(e->graph) : e->dry.tasks;
}

/* The task just appended to the compute stream waits for the walking
 * unit's gates. */
static void take_gates(Emit *e, TaskId t)
{
    for (gsize i = 0; i < e->w->n_gates; i++)
        add_dep(e, e->w->gates[i], t);
    e->w->n_gates = 0;
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
    TaskId t = add_compute(e, STREAM_COMPUTE, seconds * slowdown(e), flops, tag, name);
    take_gates(e, t);
    return t;
}

TaskId emit_background(Emit *e, Stream stream, double seconds, TaskTag tag, TaskName name)
{
    g_assert(stream != STREAM_COMPUTE);
    return add_compute(e, stream, seconds, 0, tag, name);
}

TaskId emit_copy(Emit *e, Stream stream, double bytes, gboolean up, TaskTag tag, TaskName name)
{
    g_assert(stream != STREAM_COMPUTE);
    return e->graph ? graph_copy(e->graph, e->local, stream, bytes, up, tag, name)
                    : dry_task(e, stream, TRUE);
}

void emit_gate(Emit *e, TaskId before)
{
    Walker *w = e->w;
    if (before == TASK_NONE)
        return;
    if (w->n_gates == w->room) {
        w->room = MAX(2 * w->room, 8);
        w->gates = g_renew(TaskId, w->gates, w->room);
    }
    w->gates[w->n_gates++] = before;
}

TaskId emit_unit_last(const Emit *e)
{
    return e->w->last;
}

gboolean emit_paired(const Emit *e)
{
    return e->pairing;
}

/* The graph group of `members`, registered in *id when first used. */
static int group(Emit *e, int *id, const int *members, int n)
{
    if (*id >= 0)
        return *id;
    if (e->graph) {
        *id = graph_add_group(e->graph, members, n);
    } else {
        *id = (int)e->dry.groups->len;
        g_array_append_val(e->dry.groups, ((DryGroup){.rank = -1}));
    }
    return *id;
}

TaskId emit_collective(Emit *e, GroupKind kind, Stream stream, CollOp op, double bytes, TaskTag tag,
                       TaskName name)
{
    int index = e->group_index[kind], n = e->group_size[kind];
    if (n == 1)
        return TASK_NONE;
    int id = group(e, &e->group_id[kind][index], e->group_members[kind], n);
    TaskId t = add_collective(e, id, stream, op, bytes, tag, name);
    if (stream == STREAM_COMPUTE)
        take_gates(e, t);
    return t;
}

TaskId emit_collective_beside(Emit *e, GroupKind kind, Stream stream, CollOp op, double bytes,
                              TaskTag tag, TaskName name)
{
    g_assert(stream != STREAM_COMPUTE);
    TaskId t = emit_collective(e, kind, stream, op, bytes, tag, name);
    emit_wait(e, e->pairing ? e->w->input : e->w->last, t);
    for (gsize i = 0; i < e->w->n_gates; i++)
        emit_wait(e, e->w->gates[i], t);
    return t;
}

/* The rank of the same tensor- and data-parallel coordinates on the
 * neighbouring stage in direction d, wrapping around. */
static int neighbour(const Emit *e, int rank, Direction d)
{
    Coord c = layout_coord(e->layout, rank);
    int p = e->step.plan->pp;
    c.pp = (c.pp + (d == TOWARD_NEXT ? 1 : p - 1)) % p;
    return layout_rank(e->layout, c);
}

/* The graph group of flow f's transfers from `sender` toward direction d. */
static int pair(Emit *e, Direction d, Flow f, int sender)
{
    int members[2] = {sender, neighbour(e, sender, d)};
    return group(e, &e->pair_id[f][d][sender], members, 2);
}

TaskId emit_send(Emit *e, Direction d, Flow f, double bytes, TaskId after, TaskName name)
{
    TaskId t = add_collective(e, pair(e, d, f, e->rank), STREAM_P2P, COLL_SEND_RECV, bytes,
                              TAG_PP, name);
    emit_wait(e, after, t);
    return t;
}

TaskId emit_recv(Emit *e, Direction d, Flow f, double bytes, TaskName name)
{
    int sender = neighbour(e, e->rank, d == TOWARD_NEXT ? TOWARD_PREV : TOWARD_NEXT);
    return add_collective(e, pair(e, d, f, sender), GRAPH_OFF_STREAM, COLL_SEND_RECV, bytes,
                          TAG_PP, name);
}

TaskId emit_ends_collective(Emit *e, int other, Stream stream, CollOp op, double bytes,
                            TaskTag tag, TaskName name)
{
    Coord c = layout_coord(e->layout, e->rank);
    g_assert(other > 0 && other < e->step.plan->pp && (c.pp == 0 || c.pp == other));
    c.pp = 0;
    int first = layout_rank(e->layout, c);
    c.pp = other;
    int ends[2] = {first, layout_rank(e->layout, c)};
    return add_collective(e, group(e, &e->ends_id[first], ends, 2), stream, op, bytes, tag, name);
}

void emit_wait(Emit *e, TaskId before, TaskId after)
{
    if (before != TASK_NONE && after != TASK_NONE)
        add_dep(e, before, after);
}

TaskId emit_last(const Emit *e, Stream stream)
{
    return e->graph ? graph_last(e->graph, e->local, stream) : e->dry.last[stream];
}

void emit_mem(Emit *e, TaskId task, MemKind kind, double bytes, gboolean at_end)
{
    if (task == TASK_NONE || bytes == 0)
        return;
    if (e->graph)
        graph_mem(e->graph, task, e->local, kind, bytes, at_end);
    else
        e->dry.mem++;
}

/* ---- costs and chunks ------------------------------------------------------ */

/* A B (input gradients) is named as the whole backward, a W `wgrad`. */
static Cost cost(const GpuSpec *gpu, const OpList *ops, double kept_bytes, const char *fwd,
                 const char *bwd, const char *wgrad)
{
    return (Cost){.work = transformer_ops_work(gpu, ops),
                  .kept_bytes = kept_bytes,
                  .name = {[PHASE_FORWARD] = fwd,
                           [PHASE_BACKWARD] = bwd,
                           [PHASE_INPUT_GRAD] = bwd,
                           [PHASE_WEIGHT_GRAD] = wgrad}};
}

static void compute_costs(Emit *e)
{
    const ModelSpec *m = e->step.model;
    const GpuSpec *gpu = emit_gpu(e);
    Shard sh = emit_shard(e);
    OpList ops;
    transformer_embedding_ops(m, sh, &ops);
    e->embedding = cost(gpu, &ops, transformer_embedding_activation_bytes(m, sh),
                        "fwd mb%d embedding", "bwd mb%d embedding", "wgrad mb%d embedding");
    transformer_head_ops(m, sh, &ops);
    e->head = cost(gpu, &ops, transformer_head_activation_bytes(m, sh), "fwd mb%d head",
                   "bwd mb%d head", "wgrad mb%d head");
    transformer_mtp_ops(m, sh, &ops);
    e->mtp = cost(gpu, &ops, transformer_mtp_activation_bytes(m, sh), "fwd mb%d L%d mtp",
                  "bwd mb%d L%d mtp", "wgrad mb%d L%d mtp");
    static const char *const names[TRANSFORMER_BLOCK_KINDS][3] = {
        {"fwd mb%d L%d attn", "bwd mb%d L%d attn", "wgrad mb%d L%d attn"},
        {"fwd mb%d L%d mlp", "bwd mb%d L%d mlp", "wgrad mb%d L%d mlp"},
        {"fwd mb%d L%d mlp", "bwd mb%d L%d mlp", "wgrad mb%d L%d mlp"},
        {"fwd mb%d L%d attn", "bwd mb%d L%d attn", "wgrad mb%d L%d attn"},
        {"fwd mb%d L%d mamba", "bwd mb%d L%d mamba", "wgrad mb%d L%d mamba"},
    };
    int layers[TRANSFORMER_BLOCK_KINDS];
    transformer_block_counts(m, layers);
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++) {
        if (layers[b] == 0)
            continue;
        transformer_block_ops(m, (Block)b, sh, &ops);
        /* everything its backward needs; a strategy may keep less */
        double kept = transformer_block_activation_bytes(m, (Block)b, sh, RECOMPUTE_NONE);
        e->block[b] = cost(gpu, &ops, kept, names[b][0], names[b][1], names[b][2]);
    }
}

/* Lays out the segments of every model chunk: the first chunk starts with
 * the embedding, the last ends with the head, each holds its share of the
 * layers (the plan's layers_per_stage), each MTP layer after its module's
 * own operations, each as states_segment has it. */
static void lay_out_chunks(Emit *e)
{
    const ModelSpec *m = e->step.model;
    const PlanSpec *plan = e->step.plan;
    int chunks = chunks_count(plan), mtp = plan->mtp_num_layers;
    e->segments = g_new(Segment, m->layers + 2 * mtp + 2);
    e->chunk_first = g_new(int, chunks + 1);
    int n = 0, layer_index = 0;
    for (int g = 0; g < chunks; g++) {
        e->chunk_first[g] = n;
        if (g == 0)
            e->segments[n++] = states_segment(m, plan, SEGMENT_EMBEDDING, -1);
        for (int i = 0; i < chunks_layers(plan, g); i++, layer_index++) {
            if (layer_index >= m->layers)
                e->segments[n++] = states_segment(m, plan, SEGMENT_MTP, layer_index);
            e->segments[n++] = states_segment(m, plan, SEGMENT_LAYER, layer_index);
        }
        if (g == chunks - 1)
            e->segments[n++] = states_segment(m, plan, SEGMENT_HEAD, -1);
    }
    e->chunk_first[chunks] = n;
    g_assert(n == m->layers + 2 * mtp + 2 && layer_index == m->layers + mtp);
}

static const Cost *cost_of(const Emit *e, const Segment *seg, Block block)
{
    switch (seg->kind) {
    case SEGMENT_EMBEDDING:
        return &e->embedding;
    case SEGMENT_MTP:
        return &e->mtp;
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
    unsigned passes = unit_passes(p->phase);
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
    if (!p->partial)
        e->w->input = last;
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
    return (unit_passes(p->phase) & PASS_INPUT_GRAD) != 0;
}

/* A piece of the unit's walk: forward keeps its activations, backward
 * frees them with what was re-created since (a split backward at the end
 * of its W: the weight gradients need the layer inputs and the output
 * gradients, and this ledger keeps the block's activations whole until
 * then). Its work is its phase's (unit_work). */
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
    PieceRef p = {.segment = seg, .block = block, .phase = phase, .micro_batch = u->micro_batch};
    TaskName name = {.fmt = c->name[phase], .a = u->micro_batch, .b = seg->layer};
    PassWork w = unit_work(unit_passes(phase), &c->work, 1);
    if (u->forward)
        return piece_task(e, &p, w.seconds, w.flops, TAG_FORWARD, name, kept, FALSE);
    double freed = unit_ends_backward(u) ? kept + recreated : 0;
    return piece_task(e, &p, w.seconds, w.flops, TAG_BACKWARD, name, -freed, TRUE);
}

/* A unit's walk over its chunk's segments, a piece at a time: forward
 * the segments and each layer's blocks in order, backward in reverse. */
typedef struct {
    const Unit *u;
    int seg, end, step; /* the segment walking, the one past the last, +1 or -1 */
    int piece, pieces;  /* the next piece of it and its pieces; -1: not begun */
    TaskId last;        /* the last piece's compute task */
} Walk;

static Walk walk_begin(const Emit *e, const Unit *u)
{
    int g = emit_model_chunk(e, u), first = e->chunk_first[g], end = e->chunk_first[g + 1];
    return u->forward ? (Walk){.u = u, .seg = first, .end = end, .step = 1, .piece = -1}
                      : (Walk){.u = u, .seg = end - 1, .end = first - 1, .step = -1, .piece = -1};
}

/* Emits the walk's next piece, with the segment's hooks around its first
 * and last; FALSE when the unit has no piece left. */
static gboolean walk_next(Emit *e, Walk *w)
{
    if (w->seg == w->end)
        return FALSE;
    const ModelSpec *m = e->step.model;
    const Segment *seg = &e->segments[w->seg];
    gboolean layer = seg->kind == SEGMENT_LAYER;
    if (w->piece < 0) {
        EACH_STRATEGY(e, segment_begin, w->u, seg);
        w->piece = 0;
        w->pieces = layer ? transformer_layer_blocks(m, seg->layer) : 1;
    }
    int i = w->u->forward ? w->piece : w->pieces - 1 - w->piece;
    w->last = walk_piece(e, w->u, seg, layer ? transformer_layer_block(m, seg->layer, i)
                                             : BLOCK_ATTENTION);
    if (++w->piece == w->pieces) {
        EACH_STRATEGY(e, segment_end, w->u, seg, w->last);
        w->seg += w->step;
        w->piece = -1;
    }
    return TRUE;
}

static void emit_unit(Emit *e, const Unit *u)
{
    EACH_STRATEGY(e, unit_begin, u);
    Walk w = walk_begin(e, u);
    while (walk_next(e, &w))
        ;
    EACH_STRATEGY(e, unit_end, u, emit_last(e, STREAM_COMPUTE));
}

/* The walker's unit has ended: what waits for its end waits for its last
 * compute-stream task and, on `stream`, for the exchanges its next compute
 * would have waited for (its last layer's combine): a marker after both.
 * Its gates are taken. */
static TaskId walker_end(Emit *e, Stream stream)
{
    if (e->w->n_gates == 0)
        return e->w->last;
    TaskId end = add_marker(e, stream, (TaskName){.fmt = "unit end"});
    emit_wait(e, e->w->last, end);
    for (gsize i = 0; i < e->w->n_gates; i++)
        emit_wait(e, e->w->gates[i], end);
    e->w->n_gates = 0;
    return end;
}

/* A pair: the forward unit `f` and the backward unit `b` walked together,
 * a piece of one, then a piece of the other, each on its own walker, so
 * that the strategies' exchanges of one run beside the other's compute
 * (expert_parallel.c). Each unit's hooks begin and end it as alone, its
 * end after its last piece and its last exchange. */
static void emit_pair(Emit *e, const Unit *f, const Unit *b)
{
    static const Stream streams[2] = {STREAM_EP, STREAM_EP_BACKWARD};
    const Unit *u[2] = {f, b};
    Walk w[2];
    e->pairing = TRUE;
    for (int k = 0; k < 2; k++) /* both start after what came before */
        e->walker[k].last = e->walker[k].input = e->walker[0].last;
    for (int k = 0; k < 2; k++) {
        e->w = &e->walker[k];
        EACH_STRATEGY(e, unit_begin, u[k]);
        w[k] = walk_begin(e, u[k]);
    }
    for (gboolean more = TRUE; more;) {
        more = FALSE;
        for (int k = 0; k < 2; k++) {
            e->w = &e->walker[k];
            more |= walk_next(e, &w[k]);
        }
    }
    for (int k = 0; k < 2; k++) {
        e->w = &e->walker[k];
        TaskId end = walker_end(e, streams[k]);
        EACH_STRATEGY(e, unit_end, u[k], end);
    }
    e->w = &e->walker[0]; /* alone again: after the compute stream's last */
    e->walker[0].last = emit_last(e, STREAM_COMPUTE);
    for (gsize i = 0; i < e->walker[1].n_gates; i++) /* the unit ends' gates: the next compute's */
        emit_gate(e, e->walker[1].gates[i]);
    e->walker[1].n_gates = 0;
    e->pairing = FALSE;
}

/* ---- the step -------------------------------------------------------------- */

/* In a step built short, the tasks added from now on belong to the
 * period of the stage's unit `unit` (-1: before its units, as many as it
 * has: after them). */
static void mark_period(Emit *e, int unit)
{
    if (e->graph && e->fold)
        graph_set_period(e->graph, schedule_fold_period(e->fold, e->stage, unit));
}

/* Whether the graph has passed the cap on its size: emission stops. */
static gboolean over_cap(const Emit *e)
{
    return tasks_so_far(e) > e->max_tasks;
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
    for (int c = 0; c < e->step.plan->virtual_stages; c++) {
        int g = chunks_of_stage(e->step.plan, e->stage, c);
        for (int i = e->chunk_first[g]; i < e->chunk_first[g + 1]; i++) {
            e->params += e->segments[i].params;
            e->layers += e->segments[i].kind == SEGMENT_LAYER ? e->segments[i].params : 0;
            e->experts += e->segments[i].expert_params;
        }
    }
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++)
        emit_keep_activations(e, (Block)b, e->block[b].kept_bytes, 0);
    for (int i = 0; e->active[i]; i++) {
        memset(e->state[i], 0, e->active[i]->state_size);
        if (e->active[i]->step_begin)
            e->active[i]->step_begin(e, e->state[i]);
    }
    for (int s = 0; s < EMIT_STREAMS; s++)
        e->dry.last[s] = TASK_NONE; /* a dry walk's rank starts with empty streams */
    mark_period(e, -1);
    TaskId begin = add_marker(e, STREAM_COMPUTE, (TaskName){.fmt = "step begin"});
    for (int k = MEM_PARAMS; k <= MEM_OPTIMIZER; k++)
        emit_mem(e, begin, (MemKind)k,
                 states_bytes(&e->step.states, (MemKind)k, e->params, e->experts, e->layers),
                 FALSE);
    emit_mem(e, begin, MEM_RESERVE, emit_gpu(e)->reserve_bytes, FALSE);

    g_array_set_size(units, 0);
    for (int i = 0; e->active[i]; i++) {
        if (e->active[i]->schedule) {
            e->active[i]->schedule(e, units);
            break;
        }
    }
    for (guint i = 0; i < units->len; i++) {
        const Unit *u = &g_array_index(units, Unit, i);
        mark_period(e, (int)i);
        if (u->paired) /* the schedule's (schedule_pair_last) */
            emit_pair(e, u, u + 1), i++;
        else
            emit_unit(e, u);
        if (over_cap(e))
            return; /* the graph is dropped unsealed: stop here */
    }
    mark_period(e, (int)units->len);
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->step_end)
            e->active[i]->step_end(e, e->state[i]);

    double shard = states_shard_params(&e->step.states, MEM_OPTIMIZER, e->params, e->experts);
    TaskId opt = emit_compute(e, states_optimizer_s(emit_gpu(e), &e->step.states, shard), 0,
                              TAG_OPTIMIZER, (TaskName){.fmt = "optimizer"});
    emit_wait(e, emit_last(e, STREAM_COMM), opt);
    EACH_STRATEGY(e, after_optimizer, opt);
    TaskId end = add_marker(e, STREAM_COMPUTE, (TaskName){.fmt = "step end"});
    emit_wait(e, emit_last(e, STREAM_COMM), end);
    emit_wait(e, emit_last(e, STREAM_P2P), end);
}

/* The layer blocks the plan walks: the model's layers', and its MTP
 * layers' (numbered from the model's layers on, all alike). */
static double plan_blocks(const ModelSpec *m, const PlanSpec *p)
{
    return transformer_model_blocks(m) +
           (double)transformer_layer_blocks(m, m->layers) * p->mtp_num_layers;
}

/* The most tasks the step can have, for reserving room: every rank runs
 * every micro-batch's forward and backward (a B and a W when split)
 * through every piece of its stage, and the active strategies add up to a
 * few tasks per piece (their piece_tasks, counting a collective once per
 * rank, where the graph has one per group). An estimate: the cap's own
 * check is the dry walk's count (emit_step). */
static double most_tasks(const Emit *e, int ranks)
{
    const PlanSpec *p = e->step.plan;
    double per_piece = 1;
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->piece_tasks)
            per_piece += e->active[i]->piece_tasks(p);
    double units = schedule_splits_backward(p) != SPLIT_NONE ? 3 : 2;
    double pieces = (plan_blocks(e->step.model, p) + 2 + p->mtp_num_layers) / p->pp +
                    2 * p->virtual_stages;
    return ranks * (units * e->step.micro_batches * pieces * per_piece + 4);
}

/* The error for a step of more tasks than the cap; `got` says how many,
 * `code` whether it was refused before it was built (PS_ERROR_INPUT) or
 * after (PS_ERROR_OVER_CAP). */
static void refuse_size(const ModelSpec *model, const PlanSpec *plan, int ranks, gsize max_tasks,
                        const char *got, PsErrorCode code, GError **error)
{
    int m = plan_spec_micro_batches(plan), layers = model->layers + plan->mtp_num_layers;
    g_set_error(error, PS_ERROR, code,
                "%s: expected a step of at most %.0f tasks, got %s (%d rank%s x %d micro-batch%s "
                "x %d layer%s / %d stage%s): lower global_batch_size, the GPU count or the layers",
                plan_field_origin(plan, PLAN_GLOBAL_BATCH_SIZE), (double)max_tasks, got, ranks,
                ranks == 1 ? "" : "s", m, m == 1 ? "" : "es", layers, layers == 1 ? "" : "s",
                plan->pp, plan->pp == 1 ? "" : "s");
}

/* emit.h's bound. Left out of it: the backward of the embedding (no input
 * gradient: a B of none) and of the head, and every strategy's own task. */
double emit_tasks_at_least(const ModelSpec *model, const PlanSpec *plan, int ranks)
{
    double passes = schedule_splits_backward(plan) == SPLIT_ALL ? 3 : 2;
    double chunks = (double)plan->pp * plan->virtual_stages;
    double per_stage_set = plan_spec_micro_batches(plan) *
                           (passes * plan_blocks(model, plan) + 2 + 2 * (chunks - 1));
    return (double)ranks / plan->pp * per_stage_set + 3.0 * ranks;
}

gboolean emit_check_size(const ModelSpec *model, const PlanSpec *plan, int ranks,
                         double known_tasks, gsize max_tasks, GError **error)
{
    double fewest = MAX(emit_tasks_at_least(model, plan, ranks), known_tasks);
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
    for (int f = 0; f < FLOWS; f++)
        for (int d = 0; d < DIRECTIONS; d++) {
            e->pair_id[f][d] = g_new(int, ranks);
            memset(e->pair_id[f][d], -1, sizeof(int) * (gsize)ranks);
        }
    e->ends_id = g_new(int, ranks);
    memset(e->ends_id, -1, sizeof(int) * (gsize)ranks);
}

static void free_groups(Emit *e)
{
    for (int k = 0; k < GROUP_KINDS; k++)
        g_clear_pointer(&e->group_id[k], g_free);
    for (int f = 0; f < FLOWS; f++)
        for (int d = 0; d < DIRECTIONS; d++)
            g_clear_pointer(&e->pair_id[f][d], g_free);
    g_clear_pointer(&e->ends_id, g_free);
}

/* The emitter of one step: its inputs, the active strategies, the costs
 * and the chunks' segments; no graph yet (emit_clear frees it). */
static Emit emit_init(const Step *step, const Layout *layout, const Symmetry *symmetry,
                      const EmitSlowdown *slow, gsize max_tasks)
{
    const PlanSpec *plan = step->plan;
    Emit e = {.step = *step,
              .layout = layout,
              .symmetry = symmetry,
              .slow = slow,
              .computer = -1,
              .max_tasks = max_tasks};
    for (int i = 0, n = 0; strategy_registry[i]; i++) {
        g_assert(i < STRATEGY_MAX);
        if (!strategy_registry[i]->active(plan))
            continue;
        if (strategy_registry[i]->piece_compute && e.computer < 0)
            e.computer = n;
        e.active[n++] = strategy_registry[i];
    }
    compute_costs(&e);
    lay_out_chunks(&e);
    return e;
}

static void emit_clear(Emit *e)
{
    g_free(e->segments);
    g_free(e->chunk_first);
}

/* Walks the step of every rank the symmetry simulates, into the graph or
 * (none) the dry walk's counts, until the tasks pass the cap. */
static void walk_step(Emit *e)
{
    int simulated;
    const int *ranks_of = symmetry_simulated(e->symmetry, &simulated);
    for (int i = 0; e->active[i]; i++)
        e->state[i] = g_malloc0(MAX(e->active[i]->state_size, 1));
    init_groups(e, layout_ranks(e->layout));
    GArray *units = g_array_new(FALSE, FALSE, sizeof(Unit));
    e->w = &e->walker[0];
    for (e->local = 0; e->local < simulated && !over_cap(e); e->local++) {
        e->rank = ranks_of[e->local];
        e->walker[0].last = TASK_NONE; /* the rank's streams start empty */
        emit_rank_step(e, units);
    }
    g_array_free(units, TRUE);
    for (int k = 0; k < 2; k++)
        g_clear_pointer(&e->walker[k].gates, g_free);
    memset(e->walker, 0, sizeof e->walker);
    for (int i = 0; e->active[i]; i++)
        g_clear_pointer(&e->state[i], g_free);
    free_groups(e);
}

/* Counts the step by a dry walk into e->dry; FALSE when it passes the cap. */
static gboolean count_step(Emit *e)
{
    e->dry = (Dry){.groups = g_array_new(FALSE, FALSE, sizeof(DryGroup))};
    walk_step(e);
    g_array_free(e->dry.groups, TRUE);
    e->dry.groups = NULL;
    return !over_cap(e);
}

gsize emit_count_tasks(const Step *step, const Layout *layout, const Symmetry *symmetry,
                       const EmitSlowdown *slow, gsize max_tasks)
{
    Emit e = emit_init(step, layout, symmetry, slow, max_tasks);
    count_step(&e);
    emit_clear(&e);
    return e.dry.tasks;
}

/* The room reserved for a step's graph: tasks, places on streams (a
 * task's, each member's of a collective), dependencies, memory operations. */
typedef struct {
    gsize tasks, slots, edges, mem;
} Room;

/* The room for the step over `simulated` ranks: its estimate (a stream
 * edge per task, fewer other dependencies, at most a memory operation per
 * task), or for a step the estimate puts past the cap a dry walk's counts,
 * exact. FALSE (PS_ERROR_INPUT, before building) when those pass the cap,
 * or when the system would not map the step. */
static gboolean size_step(Emit *e, int simulated, Room *room, GError **error)
{
    double most = most_tasks(e, simulated);
    gsize tasks = (gsize)MIN(most, e->max_tasks);
    *room = (Room){.tasks = tasks, .slots = tasks, .edges = 2 * tasks, .mem = tasks};
    if (most > e->max_tasks) {
        if (!count_step(e)) {
            refuse_size(e->step.model, e->step.plan, simulated, e->max_tasks, "more",
                        PS_ERROR_INPUT, error);
            return FALSE;
        }
        *room = (Room){
            .tasks = e->dry.tasks, .slots = e->dry.slots, .edges = e->dry.edges, .mem = e->dry.mem};
    }
    if (bigmem_check(room->tasks * EMIT_BYTES_PER_TASK, error))
        return TRUE;
    g_prefix_error(error,
                   "%s: expected a step the system has the memory for, got %zu tasks (at %d bytes "
                   "a task): ",
                   plan_field_origin(e->step.plan, PLAN_GLOBAL_BATCH_SIZE), room->tasks,
                   EMIT_BYTES_PER_TASK);
    return FALSE;
}

/* Builds the step into a graph of `room`; NULL when it passes the cap
 * after all (the estimate missed it: PS_ERROR_OVER_CAP) or does not seal. */
static Graph *build_step(Emit *e, const Room *room, GError **error)
{
    int simulated;
    const int *ranks_of = symmetry_simulated(e->symmetry, &simulated);
    g_autoptr(Graph) graph = graph_new(simulated, graph_stream_count(e));
    /* graph_reserve makes as much room for places on streams as for tasks
     * (a collective of many simulated members takes more), and graph_seal
     * adds a task, its sentinel */
    graph_reserve(graph, MAX(room->tasks + 1, room->slots), room->edges, room->mem);
    graph_place(graph, ranks_of, layout_ranks(e->layout));
    if (e->fold)
        graph_fold(graph, e->fold->periods, e->fold->repeats);
    e->graph = graph;
    walk_step(e);
    if (over_cap(e)) {
        refuse_size(e->step.model, e->step.plan, simulated, e->max_tasks, "more", PS_ERROR_OVER_CAP,
                    error);
        return NULL;
    }
    if (!graph_seal(graph, error))
        return NULL;
    return g_steal_pointer(&graph);
}

Graph *emit_step(const Step *step, const Layout *layout, const Symmetry *symmetry,
                 const EmitSlowdown *slow, const StepFold *fold, gsize max_tasks,
                 double known_tasks, GError **error)
{
    int simulated;
    symmetry_simulated(symmetry, &simulated);
    if (!fold &&
        !emit_check_size(step->model, step->plan, simulated, known_tasks, max_tasks, error))
        return NULL; /* refused in O(1), before anything is built */
    Step built = *step;
    if (fold)
        built.micro_batches = fold->micro_batches;
    Emit e = emit_init(&built, layout, symmetry, slow, max_tasks);
    e.fold = fold;
    Room room;
    Graph *graph = size_step(&e, simulated, &room, error) ? build_step(&e, &room, error) : NULL;
    emit_clear(&e);
    return graph;
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
