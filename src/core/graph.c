/* graph.c: building and sealing the task graph.
 *
 * While building, tasks (and their names), edges, stream slots and memory
 * operations (with their tasks) are appended to flat arrays, in any order;
 * each array doubles when full, unless graph_reserve made room beforehand,
 * and each task counts its successors and memory operations in the fields
 * that will say where its rows start. graph_seal turns edges, slots and
 * memory operations into compressed rows (a counting sort by task or by
 * stream, stable, so program order is kept; memory operations attached in
 * task order stay where they are), adds the sentinel task that ends the
 * last rows, and frees what it no longer needs. Invariants: a task's npred
 * equals the number of edges into it; a sealed collective has been joined
 * exactly once by every member of its group. */
#include "core/graph.h"

#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
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
    Collective *colls; /* in matching order */
    gsize n_colls, colls_room;
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
    uint32_t *offset;
    int32_t *values;
} Rows;

struct Graph {
    int ranks, streams;
    gsize n_tasks, tasks_room;
    gsize n_collectives; /* of the tasks */
    gsize n_copies;      /* likewise */
    Task *tasks;     /* and, once sealed, a sentinel (graph_arrays) */
    TaskName *names; /* per task */
    int32_t *npred;  /* per task: edges into it */
    gsize n_edges, edges_room;
    Pair *edges;  /* before -> after, until sealed */
    TaskId *succ; /* sealed: the edges' ends, by task */
    gsize n_slots, slots_room;
    Pair *slots; /* stream row -> task, until sealed */
    gsize n_mem, mem_room;
    MemOp *mem;           /* sorted by task on seal */
    int32_t *mem_task;    /* per memory operation, its task, until sealed */
    gboolean mem_sorted;  /* the operations came in task order */
    TaskId *last;         /* per stream row, the task appended last */
    int *gpu_of;          /* per rank: the GPU it runs on */
    int *rank_of;         /* per GPU: the rank on it, or -1 (NULL: rank r on GPU r) */
    int gpus;             /* GPUs that rank_of covers */
    GArray *groups;       /* Group */
    GArray *gpus_in;      /* int, the GPUs of every group */
    GArray *members;      /* int, the ranks of every group */
    GArray *next;         /* int, per group member: collectives joined so far */
    GArray **rank_groups; /* per rank: Membership */
    Membership *joined;   /* per rank: the membership of its latest collective */
    Rows stream_rows;
    gboolean sealed;
    int8_t *period;       /* per task, when built short (graph_fold); else NULL */
    int periods, repeats; /* graph_fold's */
    int8_t current;       /* the period of the tasks added now */
};

void *graph_per_task(const Graph *g, gsize size)
{
    return bigmem_alloc(MAX(g->n_tasks, 1) * size);
}

void graph_per_task_free(void *p)
{
    bigmem_free(p);
}

/* `v`, an array of `*room` elements of `size` bytes (or NULL), moved into
 * one with room for at least `need`, and twice as many as before. */
static void *grow(void *v, gsize *room, gsize need, gsize size)
{
    gsize old = *room;
    *room = MAX(2 * *room, need);
    return bigmem_grow(v, old * size, *room * size);
}

/* `v`, an array of `*room` elements of `size` bytes, with room for `need`:
 * reallocated to at least twice its room when short. */
static inline void *room_for(void *v, gsize *room, gsize need, gsize size)
{
    return G_LIKELY(need <= *room) ? v : grow(v, room, need, size);
}

/* Room for `need` tasks and their names. */
static inline void tasks_room_for(Graph *g, gsize need)
{
    gsize room = g->tasks_room;
    g->tasks = room_for(g->tasks, &room, need, sizeof(Task));
    room = g->tasks_room;
    g->npred = room_for(g->npred, &room, need, sizeof(int32_t));
    if (g->period) {
        room = g->tasks_room;
        g->period = room_for(g->period, &room, need, sizeof(int8_t));
    }
    g->names = room_for(g->names, &g->tasks_room, need, sizeof(TaskName));
}

/* Room for `need` memory operations and their tasks. */
static inline void mem_room_for(Graph *g, gsize need)
{
    gsize room = g->mem_room;
    g->mem = room_for(g->mem, &room, need, sizeof(MemOp));
    g->mem_task = room_for(g->mem_task, &g->mem_room, need, sizeof(int32_t));
}

Graph *graph_new(int ranks, int streams)
{
    g_assert(ranks > 0 && streams > 0 && streams <= GRAPH_MAX_STREAMS);
    Graph *g = g_new0(Graph, 1);
    g->ranks = ranks;
    g->streams = streams;
    g->last = g_new(TaskId, (gsize)ranks * streams);
    for (gsize i = 0; i < (gsize)ranks * streams; i++)
        g->last[i] = TASK_NONE;
    g->gpu_of = g_new(int, ranks);
    for (int r = 0; r < ranks; r++)
        g->gpu_of[r] = r;
    g->groups = g_array_new(FALSE, FALSE, sizeof(Group));
    g->gpus_in = g_array_new(FALSE, FALSE, sizeof(int));
    g->members = g_array_new(FALSE, FALSE, sizeof(int));
    g->next = g_array_new(FALSE, TRUE, sizeof(int));
    g->rank_groups = g_new0(GArray *, ranks);
    g->joined = g_new(Membership, ranks);
    for (int r = 0; r < ranks; r++)
        g->joined[r] = (Membership){.group = -1, .index = -1};
    return g;
}

void graph_reserve(Graph *g, gsize tasks, gsize edges, gsize mem)
{
    g_assert(!g->sealed);
    tasks_room_for(g, g->n_tasks + tasks);
    g->edges = room_for(g->edges, &g->edges_room, g->n_edges + edges, sizeof(Pair));
    /* a slot per task on a stream, one per member of a collective */
    g->slots = room_for(g->slots, &g->slots_room, g->n_slots + tasks, sizeof(Pair));
    mem_room_for(g, g->n_mem + mem);
}

void graph_free(Graph *g)
{
    if (!g)
        return;
    bigmem_free(g->tasks);
    bigmem_free(g->names);
    bigmem_free(g->npred);
    bigmem_free(g->period);
    bigmem_free(g->edges);
    bigmem_free(g->slots);
    bigmem_free(g->mem);
    bigmem_free(g->mem_task);
    bigmem_free(g->succ);
    g_free(g->last);
    for (guint i = 0; i < g->groups->len; i++)
        bigmem_free(g_array_index(g->groups, Group, i).colls);
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
    g_free(g->joined);
    g_free(g->stream_rows.offset);
    bigmem_free(g->stream_rows.values);
    g_free(g);
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
    Group grp = {.first = (int)g->gpus_in->len, .n = n, .first_member = (int)g->members->len};
    g_array_append_vals(g->gpus_in, gpus, (guint)n);
    for (int i = 0; i < n; i++) {
        int rank = rank_on(g, gpus[i]);
        g_assert(gpus[i] >= 0 && (g->rank_of || rank >= 0));
        if (rank < 0)
            continue;
        if (!g->rank_groups[rank])
            g->rank_groups[rank] = g_array_new(FALSE, FALSE, sizeof(Membership));
        Membership m = {.group = id, .index = grp.n_members++};
        g_array_append_val(g->rank_groups[rank], m);
        g_array_append_val(g->members, rank);
    }
    g_array_append_val(g->groups, grp);
    g_array_set_size(g->next, g->members->len);
    return id;
}

/* Adds the edge before -> after. */
static inline void add_edge(Graph *g, TaskId before, TaskId after)
{
    g->edges = room_for(g->edges, &g->edges_room, g->n_edges + 1, sizeof(Pair));
    g->edges[g->n_edges++] = (Pair){.key = before, .value = after};
    g->tasks[before].first_succ++; /* counts them until sealed */
    g->npred[after]++;
}

void graph_dep(Graph *g, TaskId before, TaskId after)
{
    g_assert(!g->sealed && after >= 0 && (gsize)after < g->n_tasks);
    if (before != TASK_NONE)
        add_edge(g, before, after);
}

/* Puts `task` at the end of rank's stream: it waits for the previous one. */
static inline void enqueue(Graph *g, TaskId task, int rank, int stream)
{
    g_assert(rank >= 0 && rank < g->ranks && stream >= 0 && stream < g->streams);
    int32_t row = rank * g->streams + stream;
    if (g->last[row] != TASK_NONE)
        add_edge(g, g->last[row], task);
    g->last[row] = task;
    g->slots = room_for(g->slots, &g->slots_room, g->n_slots + 1, sizeof(Pair));
    g->slots[g->n_slots++] = (Pair){.key = row, .value = task};
}

/* Appends a task of `kind`, `owner` and `tag`, named `name`, its other
 * fields zero; returns its id. */
static inline TaskId add_task(Graph *g, TaskKind kind, int owner, int tag, TaskName name)
{
    g_assert(!g->sealed && g->n_tasks < G_MAXINT32);
    tasks_room_for(g, g->n_tasks + 1);
    g->tasks[g->n_tasks] = (Task){.owner = owner, .kind = (uint8_t)kind, .tag = (uint8_t)tag};
    g->names[g->n_tasks] = name;
    g->npred[g->n_tasks] = 0;
    if (g->period)
        g->period[g->n_tasks] = g->current;
    return (TaskId)g->n_tasks++;
}

TaskId graph_compute(Graph *g, int rank, int stream, double seconds, double flops, int tag,
                     TaskName name)
{
    g_assert(seconds >= 0);
    TaskId id = add_task(g, TASK_COMPUTE, rank, tag, name);
    g->tasks[id].seconds = seconds;
    g->tasks[id].flops = flops;
    g->tasks[id].stream = (uint8_t)stream;
    enqueue(g, id, rank, stream);
    return id;
}

TaskId graph_marker(Graph *g, int rank, int stream, int tag, TaskName name)
{
    TaskId id = add_task(g, TASK_MARKER, rank, tag, name);
    g->tasks[id].stream = (uint8_t)stream;
    enqueue(g, id, rank, stream);
    return id;
}

TaskId graph_copy(Graph *g, int rank, int stream, double bytes, gboolean up, int tag, TaskName name)
{
    g_assert(bytes >= 0);
    TaskId id = add_task(g, TASK_COPY, rank, tag, name);
    g->n_copies++;
    g->tasks[id].bytes = bytes;
    g->tasks[id].op = (uint8_t)(up != 0);
    g->tasks[id].stream = (uint8_t)stream;
    enqueue(g, id, rank, stream);
    return id;
}

TaskId graph_collective(Graph *g, int group, int rank, int stream, CollOp op, double bytes, int tag,
                        TaskName name)
{
    g_assert(group >= 0 && group < (int)g->groups->len && bytes >= 0);
    Group *grp = &g_array_index(g->groups, Group, group);
    Membership *m = &g->joined[rank]; /* most often the group of the one before */
    const GArray *mine = g->rank_groups[rank];
    for (guint i = 0; m->group != group && mine && i < mine->len; i++)
        if (g_array_index(mine, Membership, i).group == group)
            *m = g_array_index(mine, Membership, i);
    g_assert(m->group == group); /* the rank is a member */
    int *k = &g_array_index(g->next, int, grp->first_member + m->index);
    if (*k == (int)grp->n_colls) {
        TaskId id = add_task(g, TASK_COLLECTIVE, group, tag, name);
        g->n_collectives++;
        g->tasks[id].bytes = bytes;
        g->tasks[id].stream = NO_STREAM_YET;
        g->tasks[id].op = (uint8_t)op;
        grp->colls = room_for(grp->colls, &grp->colls_room, grp->n_colls + 1, sizeof(Collective));
        grp->colls[grp->n_colls++] = (Collective){.task = id, .joined = 0};
    }
    Collective *c = &grp->colls[*k];
    Task *t = &g->tasks[c->task];
    g_assert(t->op == op && t->bytes == bytes);
    (*k)++;
    c->joined++;
    if (stream == GRAPH_OFF_STREAM)
        return c->task;
    g_assert(t->stream == NO_STREAM_YET || t->stream == stream);
    if (g->period && t->stream == NO_STREAM_YET) /* the first member it runs on */
        g->period[c->task] = g->current;
    t->stream = (uint8_t)stream;
    enqueue(g, c->task, rank, stream);
    return c->task;
}

void graph_fold(Graph *g, int periods, int repeats)
{
    g_assert(!g->sealed && g->n_tasks == 0 && !g->period);
    g_assert(periods >= 2 && periods <= GRAPH_MAX_PERIODS && repeats >= 1);
    g->periods = periods;
    g->repeats = repeats;
    g->current = GRAPH_BEFORE;
    g->period = bigmem_alloc(MAX(g->tasks_room, 1));
}

void graph_set_period(Graph *g, int period)
{
    g_assert(g->period && period >= GRAPH_BEFORE && period <= g->periods);
    g->current = (int8_t)period;
}

int graph_fold_periods(const Graph *g)
{
    return g->periods;
}

int graph_fold_repeats(const Graph *g)
{
    return g->repeats;
}

const int8_t *graph_periods(const Graph *g)
{
    return g->period;
}

TaskId graph_last(const Graph *g, int rank, int stream)
{
    return g->last[rank * g->streams + stream];
}

void graph_mem(Graph *g, TaskId task, int rank, int category, double bytes, gboolean at_end)
{
    g_assert(!g->sealed && task >= 0 && (gsize)task < g->n_tasks);
    g_assert(category >= 0 && category < GRAPH_MEM_CATEGORIES && rank >= 0 && rank < g->ranks);
    mem_room_for(g, g->n_mem + 1);
    g->mem_sorted = g->n_mem == 0 || (g->mem_sorted && task >= g->mem_task[g->n_mem - 1]);
    g->mem_task[g->n_mem] = task;
    g->mem[g->n_mem++] = (MemOp){.bytes = bytes,
                                 .rank = rank,
                                 .category = (uint8_t)category,
                                 .at_end = (uint8_t)(at_end ? 1 : 0)};
    g->tasks[task].first_mem++; /* counts them until sealed */
}

/* Counting sort of the `n` pairs by key into `rows` rows; stable: the
 * counts become where each row ends, and the pairs, walked backward, go
 * to the end of their row, which leaves each row's offset at its start. */
static Rows build_rows(const Pair *pairs, gsize n, gsize rows)
{
    g_assert(n <= G_MAXUINT32);
    Rows r = {.offset = g_new0(uint32_t, rows + 1), .values = bigmem_alloc(sizeof(int32_t) * n)};
    for (gsize i = 0; i < n; i++)
        r.offset[pairs[i].key]++;
    for (gsize i = 0; i < rows; i++)
        r.offset[i + 1] += r.offset[i];
    for (gsize i = n; i-- > 0;)
        r.values[--r.offset[pairs[i].key]] = pairs[i].value;
    return r;
}

/* The error for collective `c` of group `grp`: which members never came. */
static void report_unjoined(Graph *g, const Group *grp, int k, GError **error)
{
    const Collective *c = &grp->colls[k];
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
    g_autofree char *name = graph_name(g, c->task);
    g_set_error(error, PS_ERROR, PS_ERROR_STUCK,
                "task graph cannot finish: collective \"%s\" (task %d) was joined by %d of %d "
                "members; rank %s never reaches it",
                name, c->task, c->joined, grp->n_members, missing->str);
    g_string_free(missing, TRUE);
}

/* Sorts the edges by their first task into the successor rows and the
 * memory operations by task, the way build_rows sorts its pairs, from the
 * counts the tasks kept while building; each task then holds where its
 * rows start, the sentinel the totals. Memory operations attached in task
 * order stay where they are. */
static void seal_rows(Graph *g)
{
    g_assert(g->n_edges <= G_MAXUINT32 && g->n_mem <= G_MAXUINT32);
    uint32_t succ_end = 0, mem_start = 0;
    for (gsize i = 0; i <= g->n_tasks; i++) {
        succ_end = g->tasks[i].first_succ += succ_end;
        uint32_t count = g->tasks[i].first_mem;
        /* in task order already: each row starts where the ones before end */
        g->tasks[i].first_mem = mem_start + (g->mem_sorted ? 0 : count);
        mem_start += count;
    }
    g->succ = bigmem_alloc(sizeof(TaskId) * g->n_edges);
    for (gsize i = g->n_edges; i-- > 0;)
        g->succ[--g->tasks[g->edges[i].key].first_succ] = g->edges[i].value;
    g_clear_pointer(&g->edges, bigmem_free);
    if (!g->mem_sorted) {
        MemOp *sorted = bigmem_alloc(sizeof(MemOp) * g->n_mem);
        for (gsize i = g->n_mem; i-- > 0;)
            sorted[--g->tasks[g->mem_task[i]].first_mem] = g->mem[i];
        bigmem_free(g->mem);
        g->mem = sorted;
    }
    g_clear_pointer(&g->mem_task, bigmem_free);
}

gboolean graph_seal(Graph *g, GError **error)
{
    g_assert(!g->sealed);
    for (guint i = 0; i < g->groups->len; i++) {
        const Group *grp = &g_array_index(g->groups, Group, i);
        for (gsize k = 0; k < grp->n_colls; k++) {
            if (grp->colls[k].joined != grp->n_members) {
                report_unjoined(g, grp, (int)k, error);
                return FALSE;
            }
        }
    }
    tasks_room_for(g, g->n_tasks + 1);
    g->tasks[g->n_tasks] = (Task){.kind = TASK_MARKER}; /* the sentinel */
    seal_rows(g);
    g->stream_rows = build_rows(g->slots, g->n_slots, (gsize)g->ranks * g->streams);
    g_clear_pointer(&g->slots, bigmem_free);
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
gsize graph_copies(const Graph *g)
{
    return g->n_copies;
}

gsize graph_rank_tasks(const Graph *g)
{
    return g->n_tasks - g->n_collectives;
}

gsize graph_tasks(const Graph *g)
{
    return g->n_tasks;
}

const Task *graph_task(const Graph *g, TaskId id)
{
    g_assert(id >= 0 && (gsize)id < g->n_tasks);
    return &g->tasks[id];
}

char *graph_name(const Graph *g, TaskId id)
{
    const TaskName *n = &g->names[graph_task(g, id) - g->tasks];
    g_autofree char *whole = g_strdup_printf(n->fmt, n->a, n->b);
    return n->part ? g_strconcat(whole, " ", n->part, NULL) : g_steal_pointer(&whole);
}

GraphArrays graph_arrays(const Graph *g)
{
    g_assert(g->sealed);
    return (GraphArrays){.task = g->tasks, .succ = g->succ, .mem = g->mem, .npred = g->npred};
}

const TaskId *graph_succ(const Graph *g, TaskId id, int *n)
{
    g_assert(g->sealed);
    *n = (int)(g->tasks[id + 1].first_succ - g->tasks[id].first_succ);
    return g->succ + g->tasks[id].first_succ;
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
    *n = (int)(g->tasks[id + 1].first_mem - g->tasks[id].first_mem);
    return *n ? g->mem + g->tasks[id].first_mem : NULL; /* g->mem may be NULL */
}

int graph_groups(const Graph *g)
{
    return (int)g->groups->len;
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
