/* engine.c: the event loop.
 *
 * State: for each task the number of dependencies not yet ended; the queue
 * holds one event per running compute task or marker (its end); the
 * network holds the running collectives and copies (a copy between a GPU
 * and its host is a transfer over the host's links, net_copy_route). The loop takes whichever comes
 * first, the network on ties. Events pop in nondecreasing time, so the
 * dependency that ends last is the one seen last: that is the task's
 * critical predecessor, which metrics use to say why a stream waited. Of
 * dependencies that end together (within TIE, the rounding of the sums
 * their times are, which would otherwise choose) it is the one `rather`
 * orders first: so which one a task waited for does not change with the
 * rounding of times a period apart (engine.h).
 * The loop reads the graph's flat arrays (graph_arrays) and allocates
 * nothing per event. Every collective's route is found before the
 * replay starts (net_seal needs them all), most among the few its group
 * ran last, without a lookup in the network; a copy's among its rank's.
 *
 * Interference: each rank counts the collectives it is in; a compute task
 * on its first stream (the GPU's; one on another stream, a data loader's
 * read, is not GPU work and runs at full speed) progresses at rate
 * 1 - interference while its rank's count is positive, else 1. When the
 * count crosses zero the running task's progress is settled and its end
 * re-queued under a new version (an event whose version is stale is
 * skipped). Without interference nothing is counted.
 *
 * A graph built short is replayed as any other; the count of events before
 * the instant each period's first task starts is kept (those at that
 * instant may come in any order), and at the end fold.c says
 * whether the periods repeated. If they did, the makespan, the events and
 * the links' bytes become the step's: each later task ends repeats x
 * period_s later, each copy counts a period's events (fold_check), and each
 * collective and copy of that period runs repeats more times. */
#include "engine/engine.h"

#include <math.h>
#include <string.h>

#include "core/evq.h"
#include "engine/fold.h"
#include "net/net.h"
#include "base/error.h"

/* A replay with the network it ran on, which engine_replay_free frees. */
typedef struct {
    Replay replay; /* first: a Replay * is a ReplayNet * */
    Net *net;
    int32_t *route; /* per task: a collective's route (net_route), a copy's (net_copy_route) */
} ReplayNet;

/* The routes of a group's latest collectives, most often all it
 * runs (a tensor-parallel group's gathers and scatters of one size), or
 * of a rank's latest copies (a layer's activations down and up): a
 * collective (a copy) of one of their op (direction) and bytes needs no
 * lookup in the network. A miss replaces the entries in turn. */
#define GROUP_ROUTES 4
typedef struct {
    double bytes[GROUP_ROUTES];
    int32_t route[GROUP_ROUTES]; /* -1: empty */
    uint8_t op[GROUP_ROUTES];
    uint8_t next; /* the entry a miss replaces */
} GroupRoutes;

typedef struct {
    TaskId task;      /* running compute task, or TASK_NONE */
    double remaining; /* of its work, in seconds at full speed, as of `since` */
    double since;
    double rate;
} Running;

typedef struct {
    const Graph *g;
    GraphArrays a; /* the graph's flat arrays */
    Net *net;
    GroupRoutes *group_routes; /* per group */
    GroupRoutes *rank_routes;  /* per rank: its copies' */
    double interference;
    EventQueue *q;
    uint32_t *version;  /* per task: of its queued end (NULL without interference) */
    double *in_use;     /* per rank x category */
    int *communicating; /* per rank: collectives running that it is in */
    Running *running;   /* per rank */
    Replay *r;
    const int8_t *period; /* built short: per task, its period (graph_periods); else NULL */
    int periods;          /* built short: how many */
    TaskId *first;        /* built short: per period, its first task (fold_firsts) */
    guint64 *events_at;   /* built short: per period, the events before the instant its
                           * first task started */
    double now;           /* the instant of the events being processed */
    guint64 earlier;      /* the events before it */
} Run;

/* Applies the memory operations of task `id` that come at its start, or
 * at its end (`at_end`). */
static inline void apply_mem(Run *run, TaskId id, gboolean at_end)
{
    const MemOp *ops = run->a.mem;
    for (uint32_t i = run->a.task[id].first_mem; i < run->a.task[id + 1].first_mem; i++) {
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

/* Counts `delta` collectives on every member of collective `id`, whose
 * compute slows while it communicates (only counted with interference). */
static void communicate(Run *run, TaskId id, int delta, double now)
{
    if (run->interference <= 0)
        return;
    int n;
    const int *members = graph_group(run->g, run->a.task[id].owner, &n);
    for (int i = 0; i < n; i++) {
        run->communicating[members[i]] += delta;
        rerate(run, members[i], now);
    }
}

/* The route of collective `t` (its group's), or of copy `t` (its
 * rank's): from its group's or its rank's cache, or looked up. */
static int32_t route_of(Run *run, const Task *t)
{
    gboolean copy = t->kind == TASK_COPY;
    GroupRoutes *cache = copy ? &run->rank_routes[t->owner] : &run->group_routes[t->owner];
    for (int i = 0; i < GROUP_ROUTES; i++)
        if (cache->route[i] >= 0 && cache->op[i] == t->op && cache->bytes[i] == t->bytes)
            return cache->route[i];
    int i = cache->next;
    cache->next = (uint8_t)((i + 1) % GROUP_ROUTES);
    cache->op[i] = t->op;
    cache->bytes[i] = t->bytes;
    if (copy)
        return cache->route[i] =
                   net_copy_route(run->net, graph_gpu(run->g, t->owner), t->op, t->bytes);
    int n;
    const int *gpus = graph_group_gpus(run->g, t->owner, &n);
    return cache->route[i] = net_route(run->net, (CollOp)t->op, gpus, n, t->bytes);
}

/* Every collective's and copy's route, before any starts, into rn, and the
 * stream each runs on: a group's stream runs its collectives one after
 * another (every member's), a rank's its copies. */
static void route_all(Run *run, ReplayNet *rn, gsize n)
{
    int streams = graph_streams(run->g);
    GArray *told = g_array_new(FALSE, FALSE, sizeof(gint64)); /* per route: the stream said */
    for (gsize id = 0; id < n; id++) {
        const Task *t = &run->a.task[id];
        if (t->kind != TASK_COLLECTIVE && t->kind != TASK_COPY)
            continue;
        int32_t r = rn->route[id] = route_of(run, t);
        gint64 stream = ((gint64)t->owner * streams + t->stream) * 2 + (t->kind == TASK_COPY);
        g_assert((guint)r <= told->len); /* routes are numbered as they are made */
        if ((guint)r == told->len)
            g_array_append_val(told, (gint64){-1});
        if (g_array_index(told, gint64, r) != stream) /* once a stream, not once a task */
            net_route_stream(run->net, r, g_array_index(told, gint64, r) = stream);
    }
    g_array_free(told, TRUE);
}

/* Empty caches of routes, `n` of them. */
static GroupRoutes *route_caches(int n)
{
    GroupRoutes *caches = g_new(GroupRoutes, MAX(n, 1));
    for (int k = 0; k < n; k++) {
        caches[k].next = 0;
        for (int i = 0; i < GROUP_ROUTES; i++)
            caches[k].route[i] = -1;
    }
    return caches;
}

/* The address `n` elements after `p`, for a prefetch only: in integers,
 * since it may lie past the array's end. */
#define ahead(p, n) ((const void *)((uintptr_t)(p) + (n) * sizeof *(p)))

/* Dependencies that end within TIE x the time of each other end together:
 * apart only by the rounding of the sums that led to them. */
#define TIE 1e-12

/* Of dependencies `a` and `b` of task `next` that end together, whether
 * `a` is the critical one rather than `b`: a rank's own task (compute,
 * marker, copy) rather than a collective, `next`'s rank's rather than
 * another's, then by stream, tag and op, the higher; what no rank's
 * number or the graph's order says, so that a replay reduced by a
 * symmetry says the same; `a`, the one seen later, when all are alike. */
static gboolean rather(const Task *a, const Task *b, const Task *next)
{
    int ra = a->kind != TASK_COLLECTIVE, rb = b->kind != TASK_COLLECTIVE;
    int mine_a = ra && next->kind != TASK_COLLECTIVE && a->owner == next->owner;
    int mine_b = rb && next->kind != TASK_COLLECTIVE && b->owner == next->owner;
    if (ra != rb)
        return ra > rb;
    if (mine_a != mine_b)
        return mine_a > mine_b;
    if (a->stream != b->stream)
        return a->stream > b->stream;
    if (a->tag != b->tag)
        return a->tag > b->tag;
    return a->op >= b->op;
}

/* Starts task `id` at `now`, when `pred`, its critical predecessor (or
 * TASK_NONE), ended. */
static void start(Run *run, TaskId id, double now, TaskId pred)
{
    const Task *t = &run->a.task[id];
    /* what the tasks a little later in each array need: a replay moves
     * through them at about the pace of its clock (each rank's tasks in
     * the order they were added), and reading them cold is otherwise most
     * of a task's time */
    __builtin_prefetch(ahead(t, 6));
    __builtin_prefetch(ahead(&run->a.succ[t->first_succ], 32));
    __builtin_prefetch(ahead(&run->r->task[id], 8), 1);
    run->r->task[id].start_s = now;
    run->r->task[id].critical = pred;
    int p = run->period ? run->period[id] : GRAPH_BEFORE;
    if (p >= 0 && p < run->periods && run->first[p] == id)
        run->events_at[p] = run->earlier;
    apply_mem(run, id, FALSE);
    if (t->kind == TASK_COLLECTIVE) {
        run->r->algorithm[id] =
            net_start(run->net, now, id, ((ReplayNet *)run->r)->route[id], t->tag);
        communicate(run, id, +1, now);
    } else if (t->kind == TASK_COPY) { /* off the GPU's SMs: interference does not count it */
        net_start(run->net, now, id, ((ReplayNet *)run->r)->route[id], t->tag);
    } else if (t->kind == TASK_COMPUTE && t->stream == 0 && run->interference > 0) {
        double rate = compute_rate(run, t->owner);
        run->running[t->owner] =
            (Running){.task = id, .remaining = t->seconds, .since = now, .rate = rate};
        evq_push(run->q, now + t->seconds / rate, id, run->version[id]);
    } else {
        evq_push(run->q, now + (t->kind == TASK_COMPUTE ? t->seconds : 0), id, 0);
    }
}

static void end(Run *run, TaskId id, double now)
{
    Replay *r = run->r;
    const Task *t = &run->a.task[id];
    r->task[id].end_s = now;
    r->makespan_s = MAX(r->makespan_s, now);
    apply_mem(run, id, TRUE);
    if (t->kind == TASK_COLLECTIVE)
        communicate(run, id, -1, now);
    else if (t->kind == TASK_COMPUTE && run->running[t->owner].task == id)
        run->running[t->owner].task = TASK_NONE;
    for (uint32_t i = t->first_succ; i < run->a.task[id + 1].first_succ; i++) {
        TaskId next = run->a.succ[i];
        ReplayTask *n = &r->task[next];
        if (n->critical == TASK_NONE || now - r->task[n->critical].end_s > TIE * now ||
            rather(t, &run->a.task[n->critical], &run->a.task[next]))
            n->critical = id;
        if (--n->waiting == 0)
            start(run, next, now, n->critical);
    }
}

static void report_stuck(const Run *run, gsize ended, GError **error)
{
    GString *s = g_string_new(NULL);
    int shown = 0;
    for (gsize id = 0; id < run->r->tasks && shown < 5; id++) {
        if (run->r->task[id].waiting <= 0)
            continue;
        const Task *t = graph_task(run->g, (TaskId)id);
        g_autofree char *name = graph_name(run->g, (TaskId)id);
        g_string_append_printf(s, "%s\"%s\" (task %zu, %s %d, waits on %d)", shown ? "; " : "",
                               name, id, t->kind == TASK_COLLECTIVE ? "group" : "rank", t->owner,
                               run->r->task[id].waiting);
        shown++;
    }
    g_set_error(error, PS_ERROR, PS_ERROR_STUCK,
                "task graph cannot finish: %zu of %zu tasks never start (a dependency cycle): %s",
                run->r->tasks - ended, run->r->tasks, s->str);
    g_string_free(s, TRUE);
}

/* The replay of a graph built short: the step's, when its periods
 * repeated (fold_check); else PS_ERROR_NO_PERIOD. */
static gboolean unfold(const Run *run, const ReplayNet *rn, GError **error)
{
    Replay *r = run->r;
    g_autoptr(GString) why = g_string_new(NULL);
    gint64 events = fold_check(run->g, r, run->events_at, why);
    if (events < 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_NO_PERIOD, "its steady state does not repeat: %s",
                    why->str);
        return FALSE;
    }
    r->events_skipped = (guint64)events * (guint64)r->repeats;
    r->events += r->events_skipped;
    r->makespan_s = 0;
    for (gsize id = 0; id < r->tasks; id++) {
        r->makespan_s = MAX(r->makespan_s, r->task[id].end_s + replay_shift_s(r, (TaskId)id));
        const Task *t = &run->a.task[id];
        if (r->period[id] == r->last_period && (t->kind == TASK_COLLECTIVE || t->kind == TASK_COPY))
            net_repeat(rn->net, rn->route[id], t->tag, r->repeats);
    }
    return TRUE;
}

Replay *engine_run(const Graph *g, const EngineNet *desc, GError **error)
{
    gsize n = graph_tasks(g);
    int ranks = graph_ranks(g);
    ReplayNet *rn = g_new0(ReplayNet, 1);
    Net *net = rn->net =
        net_new(desc->cluster, desc->gpus ? desc->gpus : ranks, desc->symmetry, desc->algorithm,
                desc->contention, desc->tags, desc->link_scale, graph_copies(g) > 0);
    double interference = desc->interference;
    Replay *r = &rn->replay;
    r->tasks = n;
    r->ranks = ranks;
    /* every task starts and ends, or the replay fails */
    r->task = graph_per_task(g, sizeof(ReplayTask));
    r->algorithm = memset(graph_per_task(g, sizeof(uint8_t)), 0, MAX(n, 1));
    rn->route = graph_per_task(g, sizeof(int32_t));
    r->peak_bytes = g_new0(double, ranks);
    r->peak_split = g_new0(double, (gsize)ranks *GRAPH_MEM_CATEGORIES);
    Run run = {.g = g,
               .a = graph_arrays(g),
               .net = net,
               .group_routes = route_caches(graph_groups(g)),
               .rank_routes = route_caches(ranks),
               .interference = interference,
               /* an end queued per stream running a task, at most */
               .q = evq_new((gsize)ranks * graph_streams(g)),
               /* without interference an end never moves */
               .version = interference > 0 ? g_new0(uint32_t, MAX(n, 1)) : NULL,
               .in_use = g_new0(double, (gsize)ranks *GRAPH_MEM_CATEGORIES),
               .communicating = g_new0(int, ranks),
               .running = g_new(Running, ranks),
               .r = r};
    for (int rank = 0; rank < ranks; rank++)
        run.running[rank].task = TASK_NONE;
    if ((run.periods = graph_fold_periods(g)) > 0) {
        run.period = graph_periods(g);
        run.first = fold_firsts(g);
        run.events_at = g_new0(guint64, run.periods);
    }
    route_all(&run, rn, n);
    net_seal(net, desc->apart);
    for (gsize id = 0; id < n && !net_broken(net); id++) { /* starting reads no other task */
        r->task[id].critical = TASK_NONE;                  /* none has a critical dependency yet */
        if ((r->task[id].waiting = run.a.npred[id]) == 0)
            start(&run, (TaskId)id, 0.0, TASK_NONE);
    }

    gsize ended = 0;
    Event ev;
    while (!net_broken(net)) {
        double network = net_next_s(net);
        if (evq_pop_before(run.q, network, &ev)) { /* a task ends first */
            if (ev.key > run.now)
                run.now = ev.key, run.earlier = r->events;
            r->events++;
            if (run.version && ev.aux != run.version[ev.payload])
                continue; /* a compute task whose rate changed since */
            ended++;
            end(&run, ev.payload, ev.key);
            continue;
        }
        if (network == INFINITY)
            break;
        if (network > run.now)
            run.now = network, run.earlier = r->events;
        r->events++;
        int n_done;
        const int32_t *done = net_step(net, &n_done);
        for (int i = 0; i < n_done; i++, ended++)
            end(&run, done[i], network);
    }
    gboolean ok = ended == n && !net_broken(net);
    r->flows_apart = net_flows_apart(net);
    net_settle(net);
    if (net_broken(net)) {
        if (desc->broken)
            *desc->broken = net_broken(net);
        int n_marks;
        const SymmetryMark *marks = net_marks(net, &n_marks);
        if (desc->marks)
            g_array_append_vals(desc->marks, marks, (guint)n_marks);
        g_set_error(error, PS_ERROR, PS_ERROR_ASYMMETRIC, "a collective breaks the symmetry");
    } else if (!ok) {
        report_stuck(&run, ended, error);
    } else if (run.period) {
        ok = unfold(&run, rn, error);
    }
    evq_free(run.q);
    g_free(run.version);
    g_free(run.in_use);
    g_free(run.communicating);
    g_free(run.running);
    g_free(run.group_routes);
    g_free(run.rank_routes);
    g_free(run.first);
    g_free(run.events_at);
    if (!ok) {
        engine_replay_free(r);
        return NULL;
    }
    return r;
}

void engine_replay_free(Replay *r)
{
    if (!r)
        return;
    net_free(((ReplayNet *)r)->net);
    graph_per_task_free(r->task);
    graph_per_task_free(r->algorithm);
    graph_per_task_free(((ReplayNet *)r)->route);
    g_free(r->peak_bytes);
    g_free(r->peak_split);
    g_free((ReplayNet *)r);
}

double engine_sent_bytes(const Replay *r, const Graph *g, TaskId id, int rank)
{
    g_assert(graph_task(g, id)->kind == TASK_COLLECTIVE);
    const ReplayNet *rn = (const ReplayNet *)r;
    return net_sent_bytes(rn->net, rn->route[id], graph_gpu(g, rank));
}

const Topology *engine_topology(const Replay *r)
{
    return net_topology(((const ReplayNet *)r)->net);
}

double engine_link_bytes(const Replay *r, int link)
{
    return net_link_bytes(((const ReplayNet *)r)->net, link);
}

double engine_link_tag_bytes(const Replay *r, int link, int tag)
{
    return net_link_tag_bytes(((const ReplayNet *)r)->net, link, tag);
}
