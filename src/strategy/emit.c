/* emit.c: the emitter's walk over a step, rank by rank.
 *
 * Costs are computed once per step (every rank of a plan without model
 * parallelism does the same work); only the tasks are per rank. A rank's
 * program: a "step" marker that allocates persistent memory, the units in
 * schedule order, the strategies' step_end, then the optimizer step after
 * the rank's last communication. A forward allocates each piece's
 * activations when the piece starts; the matching backward frees them when
 * it ends. */
#include "strategy/emit.h"

#include <string.h>

#include "strategy/strategy.h"
#include "util/error.h"

/* Forward cost of one piece of the model (backward is twice it), and the
 * names of its tasks: formats of the micro-batch and the layer. */
typedef struct {
    double seconds, flops, activation_bytes;
    const char *forward_name, *backward_name;
} Piece;

struct Emit {
    const ModelSpec *model;
    const ClusterSpec *cluster;
    const PlanSpec *plan;
    const Layout *layout;
    Graph *graph;
    int *group_id[GROUP_KINDS]; /* layout group index -> graph group */
    int micro_batches;
    double params;               /* held per rank */
    Piece embedding, head, block[TF_BLOCKS];
    /* the rank being emitted */
    int rank;
    int shards[MEM_KINDS];       /* ways each kind of model state is split */
    const Strategy *active[STRATEGY_MAX + 1]; /* NULL-terminated */
    void *state[STRATEGY_MAX];
};

static const char *const mem_names[MEM_KINDS] = {"params", "grads", "optimizer", "activations",
                                                 "buffers"};

const char *emit_mem_name(MemKind kind)
{
    return mem_names[kind];
}

const ModelSpec *emit_model(const Emit *e) { return e->model; }
const PlanSpec *emit_plan(const Emit *e) { return e->plan; }
int emit_micro_batches(const Emit *e) { return e->micro_batches; }
int emit_rank(const Emit *e) { return e->rank; }
double emit_params(const Emit *e) { return e->params; }

void emit_shard_state(Emit *e, MemKind kind, int ways)
{
    g_assert((kind == MEM_PARAMS || kind == MEM_GRADS || kind == MEM_OPTIMIZER) && ways >= 1);
    e->shards[kind] = ways;
}

TaskId emit_compute(Emit *e, double seconds, double flops, TaskTag tag, TaskName name)
{
    return graph_compute(e->graph, e->rank, STREAM_COMPUTE, seconds, flops, tag, name);
}

TaskId emit_collective(Emit *e, GroupKind kind, Stream stream, CollOp op, double bytes,
                       TaskTag tag, TaskName name)
{
    int index = layout_group_of(e->layout, kind, e->rank), n;
    layout_group(e->layout, kind, index, &n);
    if (n == 1)
        return TASK_NONE;
    return graph_collective(e->graph, e->group_id[kind][index], e->rank, stream, op, bytes, tag,
                            name);
}

void emit_wait(Emit *e, TaskId before, TaskId after)
{
    if (before != TASK_NONE && after != TASK_NONE)
        graph_dep(e->graph, before, after);
}

TaskId emit_last(const Emit *e, Stream stream)
{
    return graph_last(e->graph, e->rank, stream);
}

void emit_mem(Emit *e, TaskId task, MemKind kind, double bytes, gboolean at_end)
{
    if (task != TASK_NONE && bytes != 0)
        graph_mem(e->graph, task, e->rank, kind, bytes, at_end);
}

/* ---- costs ------------------------------------------------------------- */

static Piece piece(const GpuSpec *gpu, const OpList *ops, double activation_bytes,
                   const char *forward_name, const char *backward_name)
{
    return (Piece){tf_ops_s(gpu, ops), tf_ops_flops(ops, TRUE), activation_bytes, forward_name,
                   backward_name};
}

static void compute_costs(Emit *e)
{
    const ModelSpec *m = e->model;
    const GpuSpec *gpu = &e->cluster->gpu;
    Shard sh = {e->plan->micro_batch_size, e->plan->tp, e->plan->sequence_parallel};
    OpList ops;
    tf_embedding_ops(m, sh, &ops);
    e->embedding = piece(gpu, &ops, tf_embedding_activation_bytes(m, sh), "fwd mb%d embedding",
                         "bwd mb%d embedding");
    tf_head_ops(m, sh, &ops);
    e->head = piece(gpu, &ops, tf_head_activation_bytes(m, sh), "fwd mb%d head", "bwd mb%d head");
    static const char *const names[TF_BLOCKS][2] = {
        {"fwd mb%d L%d attn", "bwd mb%d L%d attn"},
        {"fwd mb%d L%d mlp", "bwd mb%d L%d mlp"},
    };
    for (int b = 0; b < TF_BLOCKS; b++) {
        tf_block_ops(m, (Block)b, sh, &ops);
        e->block[b] = piece(gpu, &ops, tf_block_activation_bytes(m, (Block)b, sh, e->plan->recompute),
                            names[b][0], names[b][1]);
    }
    e->params = tf_params(m);
}

/* ---- units --------------------------------------------------------------- */

/* Pieces outside the layers are named with layer -1, which their names do
 * not print. */
static TaskId forward_piece(Emit *e, const Piece *p, int mb, int layer)
{
    TaskId t = emit_compute(e, p->seconds, p->flops, TAG_FORWARD,
                            (TaskName){.fmt = p->forward_name, .a = mb, .b = layer});
    emit_mem(e, t, MEM_ACTIVATIONS, p->activation_bytes, FALSE);
    return t;
}

static TaskId backward_piece(Emit *e, const Piece *p, int mb, int layer)
{
    TaskId t = emit_compute(e, 2 * p->seconds, 2 * p->flops, TAG_BACKWARD,
                            (TaskName){.fmt = p->backward_name, .a = mb, .b = layer});
    emit_mem(e, t, MEM_ACTIVATIONS, -p->activation_bytes, TRUE);
    return t;
}

static void grads_ready(Emit *e, const Unit *u, TaskId producer, double params)
{
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->grads_ready)
            e->active[i]->grads_ready(e, e->state[i], u, producer, params);
}

static void emit_forward(Emit *e, const Unit *u)
{
    forward_piece(e, &e->embedding, u->micro_batch, -1);
    for (int l = 0; l < e->model->layers; l++)
        for (int b = 0; b < TF_BLOCKS; b++)
            forward_piece(e, &e->block[b], u->micro_batch, l);
    forward_piece(e, &e->head, u->micro_batch, -1);
}

static void emit_backward(Emit *e, const Unit *u)
{
    TaskId t = backward_piece(e, &e->head, u->micro_batch, -1);
    grads_ready(e, u, t, tf_head_params(e->model));
    for (int l = e->model->layers - 1; l >= 0; l--) {
        for (int b = TF_BLOCKS - 1; b >= 0; b--)
            t = backward_piece(e, &e->block[b], u->micro_batch, l);
        grads_ready(e, u, t, tf_layer_params(e->model));
    }
    t = backward_piece(e, &e->embedding, u->micro_batch, -1);
    grads_ready(e, u, t, tf_embedding_params(e->model));
}

/* ---- the step -------------------------------------------------------------- */

static void emit_rank_step(Emit *e, GArray *units)
{
    for (int k = 0; k < MEM_KINDS; k++)
        e->shards[k] = 1;
    for (int i = 0; e->active[i]; i++) {
        memset(e->state[i], 0, e->active[i]->state_size);
        if (e->active[i]->step_begin)
            e->active[i]->step_begin(e, e->state[i]);
    }
    TaskId begin =
        graph_marker(e->graph, e->rank, STREAM_COMPUTE, TAG_MARKER, (TaskName){.fmt = "step begin"});
    /* bf16 parameters and gradients; fp32 master weights, momentum, variance */
    static const double bytes_per_param[MEM_KINDS] = {[MEM_PARAMS] = 2, [MEM_GRADS] = 2,
                                                      [MEM_OPTIMIZER] = 12};
    for (int k = MEM_PARAMS; k <= MEM_OPTIMIZER; k++)
        emit_mem(e, begin, (MemKind)k, bytes_per_param[k] * e->params / e->shards[k], FALSE);

    g_array_set_size(units, 0);
    for (int i = 0; e->active[i]; i++) {
        if (e->active[i]->schedule) {
            e->active[i]->schedule(e, units);
            break;
        }
    }
    for (guint i = 0; i < units->len; i++) {
        const Unit *u = &g_array_index(units, Unit, i);
        if (u->forward)
            emit_forward(e, u);
        else
            emit_backward(e, u);
    }
    for (int i = 0; e->active[i]; i++)
        if (e->active[i]->step_end)
            e->active[i]->step_end(e, e->state[i]);

    OpList ops;
    tf_optimizer_ops(e->params / e->shards[MEM_OPTIMIZER], &ops);
    TaskId opt = emit_compute(e, tf_ops_s(&e->cluster->gpu, &ops), 0, TAG_OPTIMIZER,
                              (TaskName){.fmt = "optimizer"});
    emit_wait(e, emit_last(e, STREAM_COMM), opt);
}

/* Refuses a step too big to hold in memory (about 100 bytes per task)
 * before building it: every rank runs every micro-batch's forward and
 * backward through the embedding, every layer's blocks and the head. */
static gboolean check_size(const Emit *e, int ranks, GError **error)
{
    double per_unit = TF_BLOCKS * (double)e->model->layers + 2;
    double tasks = ranks * (2.0 * e->micro_batches * per_unit + 2);
    if (tasks <= EMIT_MAX_TASKS)
        return TRUE;
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                "%s: expected a step of at most %.0f tasks, got %.3g (%d ranks x %d micro-batches "
                "x %d layers): lower global_batch_size, the GPU count or the layers",
                plan_field_origin(e->plan, PLAN_GLOBAL_BATCH_SIZE), (double)EMIT_MAX_TASKS, tasks,
                ranks, e->micro_batches, e->model->layers);
    return FALSE;
}

Graph *emit_step(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                 const Layout *layout, GError **error)
{
    Emit e = {.model = model, .cluster = cluster, .plan = plan, .layout = layout};
    e.micro_batches = plan_spec_micro_batches(plan);
    int ranks = layout_ranks(layout);
    if (!check_size(&e, ranks, error))
        return NULL;
    g_autoptr(Graph) graph = graph_new(ranks, EMIT_STREAMS);
    e.graph = graph;
    for (int k = 0; k < GROUP_KINDS; k++) {
        int groups = layout_groups(layout, (GroupKind)k);
        e.group_id[k] = g_new(int, groups);
        for (int i = 0, n; i < groups; i++) {
            const int *members = layout_group(layout, (GroupKind)k, i, &n);
            e.group_id[k][i] = graph_add_group(graph, k, members, n);
        }
    }
    int n_active = 0;
    for (int i = 0; strategy_registry[i]; i++) {
        g_assert(i < STRATEGY_MAX);
        if (strategy_registry[i]->active(plan)) {
            e.active[n_active] = strategy_registry[i];
            e.state[n_active++] = g_malloc0(MAX(strategy_registry[i]->state_size, 1));
        }
    }
    compute_costs(&e);

    GArray *units = g_array_new(FALSE, FALSE, sizeof(Unit));
    for (e.rank = 0; e.rank < ranks; e.rank++)
        emit_rank_step(&e, units);
    g_array_free(units, TRUE);
    for (int i = 0; i < n_active; i++)
        g_free(e.state[i]);
    for (int k = 0; k < GROUP_KINDS; k++)
        g_free(e.group_id[k]);
    if (!graph_seal(graph, error))
        return NULL;
    return g_steal_pointer(&graph);
}
