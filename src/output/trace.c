/* trace.c: the Chrome trace writer.
 *
 * Events are written rank by rank, stream by stream in program order, so
 * that a stream's slices never overlap and the same replay gives the same
 * bytes. The memory counter is rebuilt from the graph's memory operations
 * at their tasks' start or end times, sorted by time (ties: start before
 * end, then program order). */
#include "output/trace.h"

#include <math.h>
#include <stdlib.h>

#include "strategy/emit.h"
#include "base/jsonw.h"

typedef struct {
    double time_s;
    double bytes;
    int order; /* for a stable sort */
} MemPoint;

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

static void rank_events(JsonWriter *w, const Graph *g, const Replay *r, int rank)
{
    char name[32];
    int gpu = graph_gpu(g, rank);
    g_snprintf(name, sizeof name, "GPU %d", gpu);
    metadata(w, "process_name", gpu, 0, name);
    static const char *const kinds[] = {"compute", "collective", "marker"};
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
            jsonw_int(jsonw_key(w, coll ? "bytes" : "flops"), coll ? t->bytes : t->flops);
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
                MemPoint p = {t, ops[k].bytes, (int)points->len};
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
        jsonw_fixed(jsonw_key(w, "GiB"), in_use / 1073741824.0, 6);
        jsonw_end(w);
        jsonw_end(w);
    }
    g_array_free(points, TRUE);
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
    for (int rank = 0; rank < graph_ranks(g); rank++) {
        Coord c = layout_coord(layout, graph_gpu(g, rank));
        if (stages_only && (c.tp != 0 || c.dp != 0))
            continue;
        rank_events(&w, g, r, rank);
        memory_events(&w, g, r, rank);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}
