/* trace.c: the Chrome trace writer.
 *
 * Events are written rank by rank, stream by stream in program order, so
 * that a stream's slices never overlap and the same replay gives the same
 * bytes. The memory counter is rebuilt from the graph's memory operations
 * at their tasks' start or end times, sorted by time (ties: start before
 * end, then program order). Then the flow arrows, task by task: a
 * collective's from each traced member's slice to the next's (a chain, the
 * ranks in order), a pipeline transfer's from the sender's slice to the
 * receiver's first task that waits for it. */
#include "output/trace.h"

#include <math.h>
#include <stdlib.h>

#include "strategy/emit.h"
#include "base/jsonw.h"
#include "base/units.h"

typedef struct {
    double time_s;
    double bytes;
    int order; /* for a stable sort */
} MemPoint;

/* A traced slice of a collective, for the flow arrows. */
typedef struct {
    TaskId task;
    int rank, gpu, stream;
    double start_us;
} Member;

static int cmp_point(const void *a, const void *b)
{
    const MemPoint *x = a, *y = b;
    if (x->time_s != y->time_s)
        return x->time_s < y->time_s ? -1 : 1;
    return x->order - y->order;
}

/* A metadata event: `what` ("process_name", ...) is `name`. */
static void metadata(JsonWriter *w, const char *what, int pid, int tid, const char *name)
{
    jsonw_begin_object(w, JSONW_INLINE);
    jsonw_string(jsonw_key(w, "ph"), "M");
    jsonw_string(jsonw_key(w, "name"), what);
    jsonw_int(jsonw_key(w, "pid"), pid);
    jsonw_int(jsonw_key(w, "tid"), tid);
    jsonw_begin_object(jsonw_key(w, "args"), JSONW_INLINE);
    jsonw_string(jsonw_key(w, "name"), name);
    jsonw_end(w);
    jsonw_end(w);
}

static void rank_events(JsonWriter *w, const Graph *g, const Replay *r, int rank, GArray *members)
{
    char name[32];
    int gpu = graph_gpu(g, rank);
    g_snprintf(name, sizeof name, "GPU %d", gpu);
    metadata(w, "process_name", gpu, 0, name);
    static const char *const kinds[] = {[TASK_COMPUTE] = "compute",
                                        [TASK_COLLECTIVE] = "collective",
                                        [TASK_MARKER] = "marker",
                                        [TASK_COPY] = "copy"};
    for (int stream = 0; stream < graph_streams(g); stream++) {
        metadata(w, "thread_name", gpu, stream, emit_stream_name((Stream)stream));
        int n;
        const TaskId *tasks = graph_stream(g, rank, stream, &n);
        for (int i = 0; i < n; i++) {
            const Task *t = graph_task(g, tasks[i]);
            if (t->kind == TASK_MARKER)
                continue;
            /* start and end rounded alike (to ns), so that slices that
             * touch do not overlap once printed */
            double start_us = round(r->task[tasks[i]].start_s * 1e9) / 1e3;
            double end_us = round(r->task[tasks[i]].end_s * 1e9) / 1e3;
            gboolean coll = t->kind == TASK_COLLECTIVE;
            if (coll) {
                Member m = {.task = tasks[i],
                            .rank = rank,
                            .gpu = gpu,
                            .stream = stream,
                            .start_us = start_us};
                g_array_append_val(members, m);
            }
            g_autofree char *task_name = graph_name(g, tasks[i]);
            jsonw_begin_object(w, JSONW_INLINE);
            jsonw_string(jsonw_key(w, "ph"), "X");
            jsonw_string(jsonw_key(w, "name"), task_name);
            jsonw_int(jsonw_key(w, "pid"), gpu);
            jsonw_int(jsonw_key(w, "tid"), stream);
            jsonw_fixed(jsonw_key(w, "ts"), start_us, 3);
            jsonw_fixed(jsonw_key(w, "dur"), end_us - start_us, 3);
            jsonw_begin_object(jsonw_key(w, "args"), JSONW_INLINE);
            jsonw_string(jsonw_key(w, "kind"), kinds[t->kind]);
            gboolean moves = coll || t->kind == TASK_COPY; /* bytes, not FLOPs */
            jsonw_int(jsonw_key(w, moves ? "bytes" : "flops"), moves ? t->bytes : t->flops);
            jsonw_end(w);
            jsonw_end(w);
        }
    }
}

/* The rank's memory in use over time: one counter event per change. */
static void memory_events(JsonWriter *w, const Graph *g, const Replay *r, int rank)
{
    GArray *points = g_array_new(FALSE, FALSE, sizeof(MemPoint));
    for (int stream = 0; stream < graph_streams(g); stream++) {
        int n;
        const TaskId *tasks = graph_stream(g, rank, stream, &n);
        for (int i = 0; i < n; i++) {
            int nops;
            const MemOp *ops = graph_mem_ops(g, tasks[i], &nops);
            for (int k = 0; k < nops; k++) {
                if (ops[k].rank != rank)
                    continue;
                double t = ops[k].at_end ? r->task[tasks[i]].end_s : r->task[tasks[i]].start_s;
                MemPoint p = {.time_s = t, .bytes = ops[k].bytes, .order = (int)points->len};
                g_array_append_val(points, p);
            }
        }
    }
    qsort(points->data, points->len, sizeof(MemPoint), cmp_point);
    double in_use = 0;
    for (guint i = 0; i < points->len; i++) {
        const MemPoint *p = &g_array_index(points, MemPoint, i);
        in_use += p->bytes;
        if (i + 1 < points->len && g_array_index(points, MemPoint, i + 1).time_s == p->time_s)
            continue; /* one value per instant */
        jsonw_begin_object(w, JSONW_INLINE);
        jsonw_string(jsonw_key(w, "ph"), "C");
        jsonw_string(jsonw_key(w, "name"), "memory");
        jsonw_int(jsonw_key(w, "pid"), graph_gpu(g, rank));
        jsonw_fixed(jsonw_key(w, "ts"), p->time_s * 1e6, 3);
        jsonw_begin_object(jsonw_key(w, "args"), JSONW_INLINE);
        jsonw_fixed(jsonw_key(w, "GiB"), in_use / UNITS_GIB, 6);
        jsonw_end(w);
        jsonw_end(w);
    }
    g_array_free(points, TRUE);
}

/* One end of a flow arrow: `ph` "s" (its start), "t" (a step) or "f" (its
 * end), bound to the slice of `gpu`'s `stream` that encloses `ts_us`. */
static void flow(JsonWriter *w, const char *ph, TaskId id, int gpu, int stream, double ts_us)
{
    jsonw_begin_object(w, JSONW_INLINE);
    jsonw_string(jsonw_key(w, "ph"), ph);
    jsonw_string(jsonw_key(w, "name"), "flow");
    jsonw_string(jsonw_key(w, "cat"), "flow");
    jsonw_int(jsonw_key(w, "id"), (double)id);
    jsonw_int(jsonw_key(w, "pid"), gpu);
    jsonw_int(jsonw_key(w, "tid"), stream);
    jsonw_fixed(jsonw_key(w, "ts"), ts_us, 3);
    if (ph[0] != 's')
        jsonw_string(jsonw_key(w, "bp"), "e"); /* the enclosing slice */
    jsonw_end(w);
}

static int by_task(gconstpointer a, gconstpointer b)
{
    const Member *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return x->rank - y->rank;
}

/* The receiver's first task that waits for the send `send` (of sender
 * `from`), if it is traced (`traced`, per rank): its rank and task; FALSE
 * when there is none. */
static gboolean receiver_task(const Graph *g, TaskId send, int from, const gboolean *traced,
                              int *rank, TaskId *task)
{
    int n;
    const TaskId *succ = graph_succ(g, send, &n);
    for (int i = 0; i < n; i++) {
        const Task *t = graph_task(g, succ[i]);
        if (t->kind == TASK_COMPUTE && t->owner != from && traced[t->owner]) {
            *rank = t->owner;
            *task = succ[i];
            return TRUE;
        }
    }
    return FALSE;
}

/* The flow arrows of the traced collectives (`members`, sorted here). */
static void flow_events(JsonWriter *w, const Graph *g, const Replay *r, GArray *members,
                        const gboolean *traced)
{
    g_array_sort(members, by_task);
    for (guint i = 0; i < members->len;) {
        guint end = i;
        while (end < members->len &&
               g_array_index(members, Member, end).task == g_array_index(members, Member, i).task)
            end++;
        const Member *m = &g_array_index(members, Member, i);
        const Task *t = graph_task(g, m->task);
        int rank;
        TaskId recv;
        if (t->op == COLL_SEND_RECV && end == i + 1 &&
            receiver_task(g, m->task, m->rank, traced, &rank, &recv)) {
            flow(w, "s", m->task, m->gpu, m->stream, m->start_us);
            flow(w, "f", m->task, graph_gpu(g, rank), graph_task(g, recv)->stream,
                 round(r->task[recv].start_s * 1e9) / 1e3);
        } else if (end > i + 1) {
            for (guint k = i; k < end; k++) {
                const Member *x = &g_array_index(members, Member, k);
                flow(w,
                     k == i         ? "s"
                     : k + 1 == end ? "f"
                                    : "t",
                     x->task, x->gpu, x->stream, x->start_us);
            }
        }
        i = end;
    }
}

char *trace_render(const Graph *g, const Replay *r, const Layout *layout, gboolean stages_only)
{
    GString *out = g_string_new(NULL);
    JsonWriter w;
    jsonw_init(&w, out);
    jsonw_begin_object(&w, JSONW_INLINE);
    jsonw_string(jsonw_key(&w, "displayTimeUnit"), "ms");
    jsonw_begin_list(jsonw_key(&w, "traceEvents"), 0); /* one event a line */
    jsonw_begin_object(&w, JSONW_INLINE);
    jsonw_string(jsonw_key(&w, "ph"), "M");
    jsonw_string(jsonw_key(&w, "name"), "process_sort_index");
    jsonw_int(jsonw_key(&w, "pid"), 0);
    jsonw_begin_object(jsonw_key(&w, "args"), JSONW_INLINE);
    jsonw_int(jsonw_key(&w, "sort_index"), 0);
    jsonw_end(&w);
    jsonw_end(&w);
    GArray *members = g_array_new(FALSE, FALSE, sizeof(Member));
    g_autofree gboolean *traced = g_new0(gboolean, graph_ranks(g));
    for (int rank = 0; rank < graph_ranks(g); rank++) {
        Coord c = layout_coord(layout, graph_gpu(g, rank));
        if (stages_only && (c.tp != 0 || c.dp != 0))
            continue;
        traced[rank] = TRUE;
        rank_events(&w, g, r, rank, members);
        memory_events(&w, g, r, rank);
    }
    flow_events(&w, g, r, members, traced);
    g_array_free(members, TRUE);
    jsonw_end(&w);
    jsonw_end(&w);
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}
