/* engine.c: the event loop.
 *
 * State: for each task the number of dependencies not yet ended; the queue
 * holds one event per running compute task or marker (its end); the
 * network holds the running collectives. The loop takes whichever comes
 * first, the network on ties. Events pop in nondecreasing time, so the
 * dependency that ends last is the one seen last: that is the task's
 * critical predecessor, which metrics use to say why a stream waited.
 *
 * Interference: each rank counts the collectives it is in; a compute task
 * progresses at rate 1 - interference while its rank's count is positive,
 * else 1. When the count crosses zero the running task's progress is
 * settled and its end re-queued under a new version (an event whose
 * version is stale is skipped). */
#include "engine/engine.h"

#include <math.h>
#include <string.h>

#include "core/evq.h"
#include "net/net.h"
#include "base/error.h"

/* A replay with the network it ran on, which replay_free frees. */
typedef struct {
    Replay replay; /* first: a Replay * is a ReplayNet * */
    Net *net;
} ReplayNet;

typedef struct {
    TaskId task;      /* running compute task, or TASK_NONE */
    double remaining; /* of its work, in seconds at full speed, as of `since` */
    double since;
    double rate;
} Running;

typedef struct {
    const Graph *g;
    Net *net;
    double interference;
    EventQueue *q;
    int32_t *waiting;   /* per task: dependencies not yet ended */
    uint32_t *version;  /* per task: of its queued end */
    double *in_use;     /* per rank x category */
    int *communicating; /* per rank: collectives running that it is in */
    Running *running;   /* per rank */
    GArray *done;       /* scratch: collectives the network ended */
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

static double compute_rate(const Run *run, int rank)
{
    return run->communicating[rank] > 0 ? 1 - run->interference : 1;
}

/* Rank `rank` started or stopped communicating: its compute task, if any,
 * continues at the new rate. */
static void rerate(Run *run, int rank, double now)
{
    Running *c = &run->running[rank];
    double rate = compute_rate(run, rank);
    if (c->task == TASK_NONE || rate == c->rate)
        return;
    c->remaining -= c->rate * (now - c->since);
    c->since = now;
    c->rate = rate;
    evq_push(run->q, now + MAX(0.0, c->remaining) / rate, c->task, ++run->version[c->task]);
}

/* Counts `delta` collectives on every member of collective `id`. */
static void communicate(Run *run, TaskId id, int delta, double now)
{
    int n;
    const int *members = graph_group(run->g, graph_task(run->g, id)->owner, &n);
    for (int i = 0; i < n; i++) {
        run->communicating[members[i]] += delta;
        if (run->interference > 0)
            rerate(run, members[i], now);
    }
}

static void start(Run *run, TaskId id, double now)
{
    const Task *t = graph_task(run->g, id);
    run->r->start_s[id] = now;
    apply_mem(run, id, FALSE);
    if (t->kind == TASK_COLLECTIVE) {
        int n;
        const int *gpus = graph_group_gpus(run->g, t->owner, &n);
        run->r->algorithm[id] =
            net_start(run->net, now, id, (CollOp)t->op, gpus, n, t->bytes, t->tag);
        communicate(run, id, +1, now);
    } else if (t->kind == TASK_COMPUTE && run->interference > 0) {
        double rate = compute_rate(run, t->owner);
        run->running[t->owner] = (Running){id, t->seconds, now, rate};
        evq_push(run->q, now + t->seconds / rate, id, run->version[id]);
    } else {
        evq_push(run->q, now + (t->kind == TASK_COMPUTE ? t->seconds : 0), id, 0);
    }
}

static void end(Run *run, TaskId id, double now)
{
    Replay *r = run->r;
    const Task *t = graph_task(run->g, id);
    r->end_s[id] = now;
    r->makespan_s = MAX(r->makespan_s, now);
    apply_mem(run, id, TRUE);
    if (t->kind == TASK_COLLECTIVE)
        communicate(run, id, -1, now);
    else if (t->kind == TASK_COMPUTE && run->running[t->owner].task == id)
        run->running[t->owner].task = TASK_NONE;
    int ns;
    const TaskId *succ = graph_succ(run->g, id, &ns);
    for (int i = 0; i < ns; i++) {
        r->critical[succ[i]] = id;
        if (--run->waiting[succ[i]] == 0)
            start(run, succ[i], now);
    }
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

Replay *engine_run(const Graph *g, const EngineNet *desc, GError **error)
{
    gsize n = graph_tasks(g);
    int ranks = graph_ranks(g);
    ReplayNet *rn = g_new0(ReplayNet, 1);
    Net *net = rn->net = net_new(desc->cluster, desc->gpus ? desc->gpus : ranks, desc->symmetry,
                                 desc->algorithm, desc->contention, desc->tags);
    double interference = desc->interference;
    Replay *r = &rn->replay;
    r->tasks = n;
    r->ranks = ranks;
    r->start_s = g_new0(double, MAX(n, 1));
    r->end_s = g_new0(double, MAX(n, 1));
    r->critical = g_new(TaskId, MAX(n, 1));
    r->algorithm = g_new0(uint8_t, MAX(n, 1));
    r->peak_bytes = g_new0(double, ranks);
    r->peak_split = g_new0(double, (gsize)ranks *GRAPH_MEM_CATEGORIES);
    Run run = {.g = g,
               .net = net,
               .interference = interference,
               .q = evq_new(MAX(n, 1)),
               .waiting = g_new(int32_t, MAX(n, 1)),
               .version = g_new0(uint32_t, MAX(n, 1)),
               .in_use = g_new0(double, (gsize)ranks *GRAPH_MEM_CATEGORIES),
               .communicating = g_new0(int, ranks),
               .running = g_new(Running, ranks),
               .done = g_array_new(FALSE, FALSE, sizeof(int32_t)),
               .r = r};
    for (int rank = 0; rank < ranks; rank++)
        run.running[rank].task = TASK_NONE;

    for (gsize id = 0; id < n; id++) {
        run.waiting[id] = graph_task(g, (TaskId)id)->npred;
        r->critical[id] = TASK_NONE;
    }
    for (gsize id = 0; id < n; id++)
        if (run.waiting[id] == 0)
            start(&run, (TaskId)id, 0.0);

    gsize ended = 0;
    Event ev;
    while (!net_broken(net)) {
        gboolean have = evq_peek(run.q, &ev);
        double network = net_next_s(net);
        if (!have && network == INFINITY)
            break;
        r->events++;
        if (network <= (have ? ev.time_s : INFINITY)) {
            g_array_set_size(run.done, 0);
            net_step(net, run.done);
            for (guint i = 0; i < run.done->len; i++, ended++)
                end(&run, g_array_index(run.done, int32_t, i), network);
            continue;
        }
        evq_pop(run.q, &ev);
        if (ev.aux != run.version[ev.payload])
            continue; /* a compute task whose rate changed since */
        ended++;
        end(&run, ev.payload, ev.time_s);
    }
    gboolean ok = ended == n && !net_broken(net);
    if (net_broken(net)) {
        if (desc->broken)
            *desc->broken = net_broken(net);
        g_set_error(error, PS_ERROR, PS_ERROR_ASYMMETRIC, "a collective breaks the symmetry");
    } else if (!ok) {
        report_stuck(&run, ended, error);
    }
    evq_free(run.q);
    g_free(run.waiting);
    g_free(run.version);
    g_free(run.in_use);
    g_free(run.communicating);
    g_free(run.running);
    g_array_free(run.done, TRUE);
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
    net_free(((ReplayNet *)r)->net);
    g_free(r->start_s);
    g_free(r->end_s);
    g_free(r->critical);
    g_free(r->algorithm);
    g_free(r->peak_bytes);
    g_free(r->peak_split);
    g_free((ReplayNet *)r);
}

double replay_sent_bytes(const Replay *r, const Graph *g, TaskId id, int rank)
{
    const Task *t = graph_task(g, id);
    g_assert(t->kind == TASK_COLLECTIVE);
    int n;
    const int *gpus = graph_group_gpus(g, t->owner, &n);
    return net_sent_bytes(((const ReplayNet *)r)->net, (CollOp)t->op, gpus, n, t->bytes,
                          graph_gpu(g, rank));
}

const Topology *replay_topology(const Replay *r)
{
    return net_topology(((const ReplayNet *)r)->net);
}

double replay_link_bytes(const Replay *r, int link)
{
    return net_link_bytes(((const ReplayNet *)r)->net, link);
}

double replay_link_tag_bytes(const Replay *r, int link, int tag)
{
    return net_link_tag_bytes(((const ReplayNet *)r)->net, link, tag);
}
