/* trace.c: the Chrome trace writer.
 *
 * Events are written rank by rank, stream by stream in program order, so
 * that a stream's slices never overlap and the same replay gives the same
 * bytes. The memory counter is rebuilt from the graph's memory operations
 * at their tasks' start or end times, sorted by time (ties: start before
 * end, then program order). */
#include "report/trace.h"

#include <math.h>
#include <stdlib.h>

#include "strategy/emit.h"

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

static void json_string(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            g_string_append_c(out, '\\');
        g_string_append_c(out, *s);
    }
    g_string_append_c(out, '"');
}

static void metadata(GString *out, const char *what, int pid, int tid, const char *name)
{
    g_string_append_printf(out,
                           ",\n{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, "
                           "\"args\": {\"name\": ",
                           what, pid, tid);
    json_string(out, name);
    g_string_append(out, "}}");
}

static void rank_events(GString *out, const Graph *g, const Replay *r, int rank)
{
    char name[32];
    g_snprintf(name, sizeof name, "GPU %d", rank);
    metadata(out, "process_name", rank, 0, name);
    static const char *const kinds[] = {"compute", "collective", "marker"};
    for (int stream = 0; stream < graph_streams(g); stream++) {
        metadata(out, "thread_name", rank, stream, emit_stream_name((Stream)stream));
        int n;
        const TaskId *tasks = graph_stream(g, rank, stream, &n);
        for (int i = 0; i < n; i++) {
            const Task *t = graph_task(g, tasks[i]);
            if (t->kind == TASK_MARKER)
                continue;
            /* start and end rounded alike (to ns), so that slices that
             * touch do not overlap once printed */
            double start_us = round(r->start_s[tasks[i]] * 1e9) / 1e3;
            double end_us = round(r->end_s[tasks[i]] * 1e9) / 1e3;
            g_string_append(out, ",\n{\"ph\": \"X\", \"name\": ");
            json_string(out, graph_name(g, tasks[i]));
            g_string_append_printf(out,
                                   ", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                                   "\"args\": {\"kind\": \"%s\", \"%s\": %.0f}}",
                                   rank, stream, start_us, end_us - start_us, kinds[t->kind],
                                   t->kind == TASK_COLLECTIVE ? "bytes" : "flops",
                                   t->kind == TASK_COLLECTIVE ? t->bytes : t->flops);
        }
    }
}

/* The rank's memory in use over time: one counter event per change. */
static void memory_events(GString *out, const Graph *g, const Replay *r, int rank)
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
                double t = ops[k].at_end ? r->end_s[tasks[i]] : r->start_s[tasks[i]];
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
        g_string_append_printf(out,
                               ",\n{\"ph\": \"C\", \"name\": \"memory\", \"pid\": %d, "
                               "\"ts\": %.3f, \"args\": {\"GiB\": %.6f}}",
                               rank, p->time_s * 1e6, in_use / 1073741824.0);
    }
    g_array_free(points, TRUE);
}

char *trace_render(const Graph *g, const Replay *r, const Layout *layout, gboolean stages_only)
{
    GString *out = g_string_new("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    g_string_append(out, "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": 0, "
                         "\"args\": {\"sort_index\": 0}}");
    for (int rank = 0; rank < graph_ranks(g); rank++) {
        Coord c = layout_coord(layout, rank);
        if (stages_only && (c.tp != 0 || c.dp != 0))
            continue;
        rank_events(out, g, r, rank);
        memory_events(out, g, r, rank);
    }
    g_string_append(out, "\n]}\n");
    return g_string_free(out, FALSE);
}
