/* graph.c: building and sealing the task graph.
 *
 * While building, edges, stream slots and memory operations are appended to
 * flat arrays in any order; graph_seal turns each into compressed rows (a
 * counting sort by task or by stream, stable, so program order is kept).
 * Invariants: a task's npred equals the number of edges into it; a sealed
 * collective has been joined exactly once by every member of its group. */
#include "core/graph.h"

#include <string.h>

#include "base/error.h"

typedef struct {
    TaskId task;
    int32_t joined; /* members that have joined so far */
} Collective;

/* A collective's stream until a member joins on a stream. */
#define NO_STREAM_YET 0xFF

typedef struct {
    int first; /* offset of its GPUs in Graph.gpus */
    int n;
    int first_member; /* offset of its members (the ranks that join) in Graph.members */
    int n_members;
    GArray *colls; /* Collective, in matching order */
} Group;

typedef struct {
    int group;
    int index; /* position among the group's members */
} Membership;

typedef struct {
    int32_t key; /* the row: a task, or rank * streams + stream */
    int32_t value;
} Pair;

/* Compressed rows: row r holds values[offset[r] .. offset[r + 1]). */
typedef struct {
    gsize *offset;
    int32_t *values;
} Rows;

struct Graph {
    int ranks, streams;
    GArray *tasks;        /* Task */
    GArray *edges;        /* Pair: before -> after */
    GArray *slots;        /* Pair: stream row -> task */
    GArray *mem;          /* MemOp, sorted by task on seal */
    gsize *mem_offset;    /* per task, after seal */
    TaskId *last;         /* per stream row, the task appended last */
    GPtrArray *names;     /* formatted names, owned */
    GHashTable *name_ids; /* TaskName (owned copy) -> index into names */
    int *gpu_of;          /* per rank: the GPU it runs on */
    int *rank_of;         /* per GPU: the rank on it, or -1 (NULL: rank r on GPU r) */
    int gpus;             /* GPUs that rank_of covers */
    GArray *groups;       /* Group */
    GArray *gpus_in;      /* int, the GPUs of every group */
    GArray *members;      /* int, the ranks of every group */
    GArray *next;         /* int, per group member: collectives joined so far */
    GArray **rank_groups; /* per rank: Membership */
    Rows succ, stream_rows;
    gboolean sealed;
};

static guint name_hash(gconstpointer key)
{
    const TaskName *n = key;
    guint h = g_direct_hash(n->fmt);
    h = h * 31 + (guint)n->a;
    h = h * 31 + (guint)n->b;
    return h * 31 + (guint)n->c;
}

static gboolean name_equal(gconstpointer x, gconstpointer y)
{
    const TaskName *p = x, *q = y;
    return p->fmt == q->fmt && p->a == q->a && p->b == q->b && p->c == q->c;
}

Graph *graph_new(int ranks, int streams)
{
    g_assert(ranks > 0 && streams > 0 && streams <= GRAPH_MAX_STREAMS);
    Graph *g = g_new0(Graph, 1);
    g->ranks = ranks;
    g->streams = streams;
    g->tasks = g_array_new(FALSE, FALSE, sizeof(Task));
    g->edges = g_array_new(FALSE, FALSE, sizeof(Pair));
    g->slots = g_array_new(FALSE, FALSE, sizeof(Pair));
    g->mem = g_array_new(FALSE, FALSE, sizeof(MemOp));
    g->last = g_new(TaskId, (gsize)ranks * streams);
    for (gsize i = 0; i < (gsize)ranks * streams; i++)
        g->last[i] = TASK_NONE;
    g->names = g_ptr_array_new_with_free_func(g_free);
    g->name_ids = g_hash_table_new_full(name_hash, name_equal, g_free, NULL);
    g->gpu_of = g_new(int, ranks);
    for (int r = 0; r < ranks; r++)
        g->gpu_of[r] = r;
    g->groups = g_array_new(FALSE, FALSE, sizeof(Group));
    g->gpus_in = g_array_new(FALSE, FALSE, sizeof(int));
    g->members = g_array_new(FALSE, FALSE, sizeof(int));
    g->next = g_array_new(FALSE, TRUE, sizeof(int));
    g->rank_groups = g_new0(GArray *, ranks);
    return g;
}

void graph_free(Graph *g)
{
    if (!g)
        return;
    g_array_free(g->tasks, TRUE);
    g_array_free(g->edges, TRUE);
    g_array_free(g->slots, TRUE);
    g_array_free(g->mem, TRUE);
    g_free(g->mem_offset);
    g_free(g->last);
    g_hash_table_destroy(g->name_ids);
    g_ptr_array_free(g->names, TRUE);
    for (guint i = 0; i < g->groups->len; i++)
        g_array_free(g_array_index(g->groups, Group, i).colls, TRUE);
    g_array_free(g->groups, TRUE);
    g_array_free(g->gpus_in, TRUE);
    g_array_free(g->members, TRUE);
    g_free(g->gpu_of);
    g_free(g->rank_of);
    g_array_free(g->next, TRUE);
    for (int r = 0; r < g->ranks; r++)
        if (g->rank_groups[r])
            g_array_free(g->rank_groups[r], TRUE);
    g_free(g->rank_groups);
    g_free(g->succ.offset);
    g_free(g->succ.values);
    g_free(g->stream_rows.offset);
    g_free(g->stream_rows.values);
    g_free(g);
}

static int32_t intern(Graph *g, TaskName name)
{
    gpointer id;
    if (g_hash_table_lookup_extended(g->name_ids, &name, NULL, &id))
        return GPOINTER_TO_INT(id);
    int32_t n = (int32_t)g->names->len;
    g_ptr_array_add(g->names, g_strdup_printf(name.fmt, name.a, name.b, name.c));
    TaskName *key = g_new(TaskName, 1);
    *key = name;
    g_hash_table_insert(g->name_ids, key, GINT_TO_POINTER(n));
    return n;
}

void graph_place(Graph *g, const int *gpu_of, int gpus)
{
    g_assert(!g->sealed && g->groups->len == 0 && !g->rank_of);
    g->gpus = gpus;
    g->rank_of = g_new(int, gpus);
    memset(g->rank_of, -1, sizeof(int) * (gsize)gpus);
    for (int r = 0; r < g->ranks; r++) {
        g_assert(gpu_of[r] >= 0 && gpu_of[r] < gpus && g->rank_of[gpu_of[r]] < 0);
        g->gpu_of[r] = gpu_of[r];
        g->rank_of[gpu_of[r]] = r;
    }
}

/* The rank on GPU `gpu`, or -1. */
static int rank_on(const Graph *g, int gpu)
{
    if (!g->rank_of)
        return gpu < g->ranks ? gpu : -1;
    return gpu < g->gpus ? g->rank_of[gpu] : -1;
}

int graph_add_group(Graph *g, const int *gpus, int n)
{
    g_assert(!g->sealed && n > 0);
    int id = (int)g->groups->len;
    Group grp = {(int)g->gpus_in->len, n, (int)g->members->len, 0,
                 g_array_new(FALSE, FALSE, sizeof(Collective))};
    g_array_append_vals(g->gpus_in, gpus, (guint)n);
    for (int i = 0; i < n; i++) {
        int rank = rank_on(g, gpus[i]);
        g_assert(gpus[i] >= 0 && (g->rank_of || rank >= 0));
        if (rank < 0)
            continue;
        if (!g->rank_groups[rank])
            g->rank_groups[rank] = g_array_new(FALSE, FALSE, sizeof(Membership));
        Membership m = {id, grp.n_members++};
        g_array_append_val(g->rank_groups[rank], m);
        g_array_append_val(g->members, rank);
    }
    g_array_append_val(g->groups, grp);
    g_array_set_size(g->next, g->members->len);
    return id;
}

void graph_dep(Graph *g, TaskId before, TaskId after)
{
    g_assert(!g->sealed && after >= 0 && after < (TaskId)g->tasks->len);
    if (before == TASK_NONE)
        return;
    Pair e = {before, after};
    g_array_append_val(g->edges, e);
    g_array_index(g->tasks, Task, after).npred++;
}

/* Puts `task` at the end of rank's stream: it waits for the previous one. */
static void enqueue(Graph *g, TaskId task, int rank, int stream)
{
    g_assert(rank >= 0 && rank < g->ranks && stream >= 0 && stream < g->streams);
    int32_t row = rank * g->streams + stream;
    graph_dep(g, g->last[row], task);
    g->last[row] = task;
    Pair slot = {row, task};
    g_array_append_val(g->slots, slot);
}

static TaskId add_task(Graph *g, const Task *t)
{
    g_assert(!g->sealed && g->tasks->len < G_MAXINT32);
    TaskId id = (TaskId)g->tasks->len;
    g_array_append_vals(g->tasks, t, 1);
    return id;
}

/* Adds task `t` at the end of rank's stream. */
static TaskId append(Graph *g, Task t, int rank, int stream)
{
    t.owner = rank;
    t.stream = (uint8_t)stream;
    TaskId id = add_task(g, &t);
    enqueue(g, id, rank, stream);
    return id;
}

TaskId graph_compute(Graph *g, int rank, int stream, double seconds, double flops, int tag,
                     TaskName name)
{
    g_assert(seconds >= 0);
    return append(g,
                  (Task){.seconds = seconds,
                         .flops = flops,
                         .name = intern(g, name),
                         .kind = TASK_COMPUTE,
                         .tag = (uint8_t)tag},
                  rank, stream);
}

TaskId graph_marker(Graph *g, int rank, int stream, int tag, TaskName name)
{
    return append(g, (Task){.name = intern(g, name), .kind = TASK_MARKER, .tag = (uint8_t)tag},
                  rank, stream);
}

TaskId graph_collective(Graph *g, int group, int rank, int stream, CollOp op, double bytes, int tag,
                        TaskName name)
{
    g_assert(group >= 0 && group < (int)g->groups->len && bytes >= 0);
    Group *grp = &g_array_index(g->groups, Group, group);
    const GArray *mine = g->rank_groups[rank];
    int index = -1;
    for (guint i = 0; mine && i < mine->len && index < 0; i++) {
        const Membership *m = &g_array_index(mine, Membership, i);
        if (m->group == group)
            index = m->index;
    }
    g_assert(index >= 0); /* the rank is a member */
    int *k = &g_array_index(g->next, int, grp->first_member + index);
    if (*k == (int)grp->colls->len) {
        Task t = {.bytes = bytes,
                  .owner = group,
                  .name = intern(g, name),
                  .kind = TASK_COLLECTIVE,
                  .stream = NO_STREAM_YET,
                  .op = (uint8_t)op,
                  .tag = (uint8_t)tag};
        Collective c = {add_task(g, &t), 0};
        g_array_append_val(grp->colls, c);
    }
    Collective *c = &g_array_index(grp->colls, Collective, *k);
    Task *t = &g_array_index(g->tasks, Task, c->task);
    g_assert(t->op == op && t->bytes == bytes);
    (*k)++;
    c->joined++;
    if (stream == GRAPH_OFF_STREAM)
        return c->task;
    g_assert(t->stream == NO_STREAM_YET || t->stream == stream);
    t->stream = (uint8_t)stream;
    enqueue(g, c->task, rank, stream);
    return c->task;
}

TaskId graph_last(const Graph *g, int rank, int stream)
{
    return g->last[rank * g->streams + stream];
}

void graph_mem(Graph *g, TaskId task, int rank, int category, double bytes, gboolean at_end)
{
    g_assert(!g->sealed && task >= 0 && task < (TaskId)g->tasks->len);
    g_assert(category >= 0 && category < GRAPH_MEM_CATEGORIES && rank >= 0 && rank < g->ranks);
    MemOp op = {task, rank, bytes, (uint8_t)category, (uint8_t)(at_end ? 1 : 0)};
    g_array_append_val(g->mem, op);
}

/* Counting sort of `pairs` by key into `rows` keys; stable. */
static Rows build_rows(const GArray *pairs, gsize rows)
{
    Rows r = {g_new0(gsize, rows + 1), g_new(int32_t, MAX(pairs->len, 1))};
    for (guint i = 0; i < pairs->len; i++)
        r.offset[g_array_index(pairs, Pair, i).key + 1]++;
    for (gsize i = 0; i < rows; i++)
        r.offset[i + 1] += r.offset[i];
    g_autofree gsize *fill = g_new(gsize, rows + 1);
    memcpy(fill, r.offset, sizeof(gsize) * (rows + 1));
    for (guint i = 0; i < pairs->len; i++) {
        const Pair *p = &g_array_index(pairs, Pair, i);
        r.values[fill[p->key]++] = p->value;
    }
    return r;
}

/* The error for collective `c` of group `grp`: which members never came. */
static void report_unjoined(Graph *g, const Group *grp, int k, GError **error)
{
    const Collective *c = &g_array_index(grp->colls, Collective, k);
    GString *missing = g_string_new(NULL);
    int shown = 0;
    for (int i = 0; i < grp->n_members; i++) {
        if (g_array_index(g->next, int, grp->first_member + i) > k)
            continue;
        if (shown++ < 8)
            g_string_append_printf(
                missing, "%s%d", shown > 1 ? ", " : "",
                g->gpu_of[g_array_index(g->members, int, grp->first_member + i)]);
    }
    if (shown > 8)
        g_string_append_printf(missing, " and %d more", shown - 8);
    g_set_error(
        error, PS_ERROR, PS_ERROR_STUCK,
        "task graph cannot finish: collective \"%s\" (task %d) was joined by %d of %d "
        "members; rank %s never reaches it",
        (const char *)g_ptr_array_index(g->names, g_array_index(g->tasks, Task, c->task).name),
        c->task, c->joined, grp->n_members, missing->str);
    g_string_free(missing, TRUE);
}

/* Orders the memory operations by task, keeping each task's in the order
 * they were attached, and indexes them. */
static void sort_mem(Graph *g)
{
    GArray *keys = g_array_sized_new(FALSE, FALSE, sizeof(Pair), g->mem->len);
    for (guint i = 0; i < g->mem->len; i++) {
        Pair p = {g_array_index(g->mem, MemOp, i).task, (int32_t)i};
        g_array_append_val(keys, p);
    }
    Rows r = build_rows(keys, g->tasks->len);
    GArray *sorted = g_array_sized_new(FALSE, FALSE, sizeof(MemOp), g->mem->len);
    for (guint i = 0; i < g->mem->len; i++)
        g_array_append_val(sorted, g_array_index(g->mem, MemOp, r.values[i]));
    g_array_free(g->mem, TRUE);
    g_array_free(keys, TRUE);
    g_free(r.values);
    g->mem = sorted;
    g->mem_offset = r.offset;
}

gboolean graph_seal(Graph *g, GError **error)
{
    g_assert(!g->sealed);
    for (guint i = 0; i < g->groups->len; i++) {
        const Group *grp = &g_array_index(g->groups, Group, i);
        for (guint k = 0; k < grp->colls->len; k++) {
            if (g_array_index(grp->colls, Collective, k).joined != grp->n_members) {
                report_unjoined(g, grp, (int)k, error);
                return FALSE;
            }
        }
    }
    gsize n = g->tasks->len;
    g->succ = build_rows(g->edges, n);
    g->stream_rows = build_rows(g->slots, (gsize)g->ranks * g->streams);
    sort_mem(g);
    g_array_set_size(g->edges, 0);
    g_array_set_size(g->slots, 0);
    g->sealed = TRUE;
    return TRUE;
}

int graph_ranks(const Graph *g)
{
    return g->ranks;
}
int graph_streams(const Graph *g)
{
    return g->streams;
}
gsize graph_tasks(const Graph *g)
{
    return g->tasks->len;
}

const Task *graph_task(const Graph *g, TaskId id)
{
    g_assert(id >= 0 && id < (TaskId)g->tasks->len);
    return &g_array_index(g->tasks, Task, id);
}

const char *graph_name(const Graph *g, TaskId id)
{
    return g_ptr_array_index(g->names, graph_task(g, id)->name);
}

const TaskId *graph_succ(const Graph *g, TaskId id, int *n)
{
    g_assert(g->sealed);
    *n = (int)(g->succ.offset[id + 1] - g->succ.offset[id]);
    return g->succ.values + g->succ.offset[id];
}

const TaskId *graph_stream(const Graph *g, int rank, int stream, int *n)
{
    g_assert(g->sealed);
    gsize row = (gsize)rank * g->streams + stream;
    *n = (int)(g->stream_rows.offset[row + 1] - g->stream_rows.offset[row]);
    return g->stream_rows.values + g->stream_rows.offset[row];
}

const MemOp *graph_mem_ops(const Graph *g, TaskId id, int *n)
{
    g_assert(g->sealed);
    *n = (int)(g->mem_offset[id + 1] - g->mem_offset[id]);
    /* none: g->mem may have no storage at all (NULL + 0 is undefined) */
    return *n ? &g_array_index(g->mem, MemOp, g->mem_offset[id]) : NULL;
}

const int *graph_group(const Graph *g, int group, int *n)
{
    const Group *grp = &g_array_index(g->groups, Group, group);
    *n = grp->n_members;
    return &g_array_index(g->members, int, grp->first_member);
}

const int *graph_group_gpus(const Graph *g, int group, int *n)
{
    const Group *grp = &g_array_index(g->groups, Group, group);
    *n = grp->n;
    return &g_array_index(g->gpus_in, int, grp->first);
}

int graph_gpu(const Graph *g, int rank)
{
    g_assert(rank >= 0 && rank < g->ranks);
    return g->gpu_of[rank];
}
