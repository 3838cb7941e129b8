/* fold.c: the periods of a steady state built short, and whether their
 * replay repeats them.
 *
 * The k-th task of a period (in the order tasks were added) is the
 * counterpart of the k-th of the period before: the builder adds each
 * period's tasks in the same order (graph.h). Every pair of counterparts
 * is compared: as tasks (kind, owner, stream, op, tag, duration or bytes,
 * FLOPs, memory operations, bit for bit), in time (the second starts and
 * ends one period after the first, within 1e-12 of a period), and by what
 * each waited for last. A replay that passes is in the same state at the
 * start of consecutive periods, up to the shift in time and the renaming
 * of tasks; the engine (engine.h) then lets its last period stand for the
 * copies the step runs. */
#include "engine/fold.h"

#include <math.h>

/* How far from one period apart two counterparts may start or end, in
 * periods: the rounding of times a few hundred periods long. */
#define FOLD_TOLERANCE 1e-12

TaskId *fold_firsts(const Graph *g)
{
    int periods = graph_fold_periods(g);
    const int8_t *period = graph_periods(g);
    TaskId *first = g_new(TaskId, periods);
    for (int j = 0; j < periods; j++)
        first[j] = TASK_NONE;
    for (gsize id = graph_tasks(g); id-- > 0;)
        if (period[id] >= 0 && period[id] < periods)
            first[period[id]] = (TaskId)id;
    return first;
}

/* A graph built short (its flat arrays), its tasks' periods and places
 * in them. */
typedef struct {
    GraphArrays a;
    const int8_t *period;
    const int32_t *slot; /* a task's place in its period (the periods' tasks only) */
    int periods;
} Periods;

/* Whether `b`, a successor of a task of a period, is the counterpart of
 * `a`, the same successor of that task's counterpart a period before: in
 * the period after a's at a's place, or after the periods when a is in
 * the last one or after them. */
static gboolean next_of(const Periods *p, TaskId a, TaskId b)
{
    int pa = p->period[a], pb = p->period[b];
    if (pa < 0 || pb != MIN(pa + 1, p->periods))
        return FALSE;
    return pb == p->periods || p->slot[a] == p->slot[b];
}

/* Whether tasks `a` and `b`, counterparts of consecutive periods, are
 * alike: all but their place in time, their successors each the
 * counterpart of the other's. */
static gboolean alike(const Periods *p, TaskId a, TaskId b)
{
    const Task *x = &p->a.task[a], *y = &p->a.task[b]; /* each followed by the next task */
    if (x->kind != y->kind || x->owner != y->owner || x->stream != y->stream || x->op != y->op ||
        x->tag != y->tag || x->seconds != y->seconds || x->flops != y->flops ||
        p->a.npred[a] != p->a.npred[b])
        return FALSE;
    uint32_t n = x[1].first_mem - x->first_mem;
    if (y[1].first_mem - y->first_mem != n)
        return FALSE;
    const MemOp *u = p->a.mem + x->first_mem, *v = p->a.mem + y->first_mem;
    for (uint32_t i = 0; i < n; i++)
        if (u[i].bytes != v[i].bytes || u[i].rank != v[i].rank || u[i].category != v[i].category ||
            u[i].at_end != v[i].at_end)
            return FALSE;
    n = x[1].first_succ - x->first_succ;
    if (y[1].first_succ - y->first_succ != n)
        return FALSE;
    const TaskId *sa = p->a.succ + x->first_succ, *sb = p->a.succ + y->first_succ;
    for (uint32_t i = 0; i < n; i++)
        if (!next_of(p, sa[i], sb[i]))
            return FALSE;
    return TRUE;
}

/* Whether every dependency of `g` goes forward through the periods: from
 * a task to one of the same period or a later one (before the periods
 * first, after them last), as the copies between the last period and the
 * tasks after it need. */
static gboolean forward(const Graph *g, const int8_t *period)
{
    GraphArrays a = graph_arrays(g);
    for (gsize id = 0; id < graph_tasks(g); id++)
        for (uint32_t i = a.task[id].first_succ; i < a.task[id + 1].first_succ; i++)
            if (period[a.succ[i]] < period[id])
                return FALSE;
    return TRUE;
}

/* Whether each rank frees in `tasks` (n of them) what it allocates there,
 * to rounding. */
static gboolean balanced(const Graph *g, const TaskId *tasks, int n)
{
    int ranks = graph_ranks(g);
    g_autofree double *net = g_new0(double, ranks), *moved = g_new0(double, ranks);
    for (int k = 0; k < n; k++) {
        int count;
        const MemOp *ops = graph_mem_ops(g, tasks[k], &count);
        for (int i = 0; i < count; i++) {
            net[ops[i].rank] += ops[i].bytes;
            moved[ops[i].rank] += fabs(ops[i].bytes);
        }
    }
    for (int rank = 0; rank < ranks; rank++)
        if (fabs(net[rank]) > 1e-9 * moved[rank])
            return FALSE;
    return TRUE;
}

gint64 fold_check(const Graph *g, Replay *r, const guint64 *events_at, GString *why)
{
    int periods = graph_fold_periods(g);
    const int8_t *period = graph_periods(g);
    gsize n = graph_tasks(g);
    /* each period's tasks in order, and each task's place in its period */
    g_autofree int *count = g_new0(int, periods);
    for (gsize id = 0; id < n; id++)
        if (period[id] >= 0 && period[id] < periods)
            count[period[id]]++;
    for (int j = 1; j < periods; j++)
        if (count[j] != count[0]) {
            g_string_printf(why, "period %d has %d tasks, period 0 %d", j, count[j], count[0]);
            return -1;
        }
    int size = count[0];
    if (size == 0) {
        g_string_assign(why, "its periods are empty");
        return -1;
    }
    if (!forward(g, period)) {
        g_string_assign(why, "a task waits for one of a later period");
        return -1;
    }
    g_autofree TaskId *tasks = g_new(TaskId, (gsize)size * periods);
    int32_t *slot = graph_per_task(g, sizeof(int32_t));
    g_autofree int *filled = g_new0(int, periods);
    for (gsize id = 0; id < n; id++) {
        int j = period[id];
        if (j < 0 || j >= periods)
            continue;
        slot[id] = filled[j];
        tasks[(gsize)j * size + filled[j]++] = (TaskId)id;
    }
    Periods counted = {.a = graph_arrays(g), .period = period, .slot = slot, .periods = periods};
    double delta = r->task[tasks[size]].start_s - r->task[tasks[0]].start_s;
    double tolerance = FOLD_TOLERANCE * delta;
    gboolean ok = delta > 0;
    if (!ok)
        g_string_assign(why, "its periods start together");
    for (int j = 1; j < periods && ok; j++) {
        for (int k = 0; k < size && ok; k++) {
            TaskId a = tasks[(gsize)(j - 1) * size + k], b = tasks[(gsize)j * size + k];
            const ReplayTask *x = &r->task[a], *y = &r->task[b];
            if (!alike(&counted, a, b)) {
                g_string_printf(why, "task %d of period %d is not task %d's like", b, j, a);
                ok = FALSE;
            } else if (fabs(y->start_s - x->start_s - delta) > tolerance ||
                       fabs(y->end_s - x->end_s - delta) > tolerance) {
                g_string_printf(
                    why, "task %d of period %d runs %.3g s off a period after task %d", b, j,
                    MAX(fabs(y->start_s - x->start_s - delta), fabs(y->end_s - x->end_s - delta)),
                    a);
                ok = FALSE;
            } else if (j >= 2 && (x->critical == TASK_NONE) != (y->critical == TASK_NONE)) {
                ok = FALSE;
            } else if (j >= 2 && x->critical != TASK_NONE) {
                int pa = period[x->critical], pb = period[y->critical];
                ok = pa >= 0 && pa + 1 == pb && pb < periods &&
                     slot[x->critical] == slot[y->critical];
            }
            if (!ok && why->len == 0)
                g_string_printf(why, "task %d of period %d waits last for another task than %d", b,
                                j, a);
        }
    }
    graph_per_task_free(slot);
    if (!ok)
        return -1;
    if (!balanced(g, tasks + (gsize)(periods - 1) * size, size)) {
        g_string_assign(why, "a rank holds more memory after each period");
        return -1;
    }
    for (gsize id = 0; id < n; id++) {
        TaskId c = r->task[id].critical;
        if (period[id] == periods && c != TASK_NONE && period[c] < 0) {
            g_string_printf(why, "task %zu after the periods waited last for task %d before them",
                            id, c);
            return -1;
        }
    }
    r->period = period;
    r->last_period = periods - 1;
    r->period_s = delta;
    r->repeats = graph_fold_repeats(g);
    return (gint64)(events_at[periods - 1] - events_at[periods - 2]);
}
