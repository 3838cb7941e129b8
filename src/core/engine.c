/* engine.c: the event loop.
 *
 * State: for each task the number of dependencies not yet ended; the queue
 * holds one event per running task (its end), so it never holds more than
 * the graph's tasks and is allocated once. Events pop in nondecreasing time,
 * so the dependency that ends last is the one seen last: that is the task's
 * critical predecessor, which metrics use to say why a stream waited. */
#include "core/engine.h"

#include <string.h>

#include "core/evq.h"
#include "util/error.h"

typedef struct {
    const Graph *g;
    const Net *net;
    EventQueue *q;
    int32_t *waiting; /* per task: dependencies not yet ended */
    double *in_use;   /* per rank x category */
    Replay *r;
} Run;

static void apply_mem(Run *run, TaskId id, gboolean at_end)
{
    int n;
    const MemOp *ops = graph_mem_ops(run->g, id, &n);
    for (int i = 0; i < n; i++) {
        if (ops[i].at_end != at_end)
            continue;
        double *cats = run->in_use + (gsize)ops[i].rank * GRAPH_MEM_CATEGORIES;
        cats[ops[i].category] += ops[i].bytes;
        double total = 0;
        for (int c = 0; c < GRAPH_MEM_CATEGORIES; c++)
            total += cats[c];
        if (total > run->r->peak_bytes[ops[i].rank]) {
            run->r->peak_bytes[ops[i].rank] = total;
            memcpy(run->r->peak_split + (gsize)ops[i].rank * GRAPH_MEM_CATEGORIES, cats,
                   sizeof(double) * GRAPH_MEM_CATEGORIES);
        }
    }
}

static double duration(const Run *run, const Task *t)
{
    switch ((TaskKind)t->kind) {
    case TASK_COMPUTE:
        return t->seconds;
    case TASK_COLLECTIVE: {
        int n;
        const int *members = graph_group(run->g, t->owner, &n);
        return net_collective_s(run->net, (CollOp)t->op, members, n, t->bytes);
    }
    case TASK_MARKER:
        break;
    }
    return 0;
}

static void start(Run *run, TaskId id, double now)
{
    run->r->start_s[id] = now;
    apply_mem(run, id, FALSE);
    evq_push(run->q, now + duration(run, graph_task(run->g, id)), id);
}

static void report_stuck(const Run *run, gsize ended, GError **error)
{
    GString *s = g_string_new(NULL);
    int shown = 0;
    for (gsize id = 0; id < run->r->tasks && shown < 5; id++) {
        if (run->waiting[id] <= 0)
            continue;
        const Task *t = graph_task(run->g, (TaskId)id);
        g_string_append_printf(s, "%s\"%s\" (task %zu, %s %d, waits on %d)", shown ? "; " : "",
                               graph_name(run->g, (TaskId)id), id,
                               t->kind == TASK_COLLECTIVE ? "group" : "rank", t->owner,
                               run->waiting[id]);
        shown++;
    }
    g_set_error(error, PS_ERROR, PS_ERROR_STUCK,
                "task graph cannot finish: %zu of %zu tasks never start (a dependency cycle): %s",
                run->r->tasks - ended, run->r->tasks, s->str);
    g_string_free(s, TRUE);
}

Replay *engine_run(const Graph *g, const Net *net, GError **error)
{
    gsize n = graph_tasks(g);
    int ranks = graph_ranks(g);
    Replay *r = g_new0(Replay, 1);
    r->tasks = n;
    r->ranks = ranks;
    r->start_s = g_new0(double, MAX(n, 1));
    r->end_s = g_new0(double, MAX(n, 1));
    r->critical = g_new(TaskId, MAX(n, 1));
    r->peak_bytes = g_new0(double, ranks);
    r->peak_split = g_new0(double, (gsize)ranks *GRAPH_MEM_CATEGORIES);
    Run run = {g,
               net,
               evq_new(n),
               g_new(int32_t, MAX(n, 1)),
               g_new0(double, (gsize)ranks *GRAPH_MEM_CATEGORIES),
               r};

    for (gsize id = 0; id < n; id++) {
        run.waiting[id] = graph_task(g, (TaskId)id)->npred;
        r->critical[id] = TASK_NONE;
    }
    for (gsize id = 0; id < n; id++)
        if (run.waiting[id] == 0)
            start(&run, (TaskId)id, 0.0);

    gsize ended = 0;
    Event ev;
    while (evq_pop(run.q, &ev)) {
        r->events++;
        ended++;
        TaskId id = ev.payload;
        r->end_s[id] = ev.time_s;
        r->makespan_s = ev.time_s;
        apply_mem(&run, id, TRUE);
        int ns;
        const TaskId *succ = graph_succ(g, id, &ns);
        for (int i = 0; i < ns; i++) {
            r->critical[succ[i]] = id;
            if (--run.waiting[succ[i]] == 0)
                start(&run, succ[i], ev.time_s);
        }
    }
    gboolean ok = ended == n;
    if (!ok)
        report_stuck(&run, ended, error);
    evq_free(run.q);
    g_free(run.waiting);
    g_free(run.in_use);
    if (!ok) {
        replay_free(r);
        return NULL;
    }
    return r;
}

void replay_free(Replay *r)
{
    if (!r)
        return;
    g_free(r->start_s);
    g_free(r->end_s);
    g_free(r->critical);
    g_free(r->peak_bytes);
    g_free(r->peak_split);
    g_free(r);
}
