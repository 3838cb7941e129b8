/* advice.c: candidate changes to a plan, pre-checked by the memory bound,
 * replayed in order of their step-time bound (advice.h). */
#include "app/advice.h"

#include <string.h>

#include "app/simulate.h"
#include "base/error.h"
#include "strategy/estimate.h"
#include "strategy/strategy.h"

/* The candidate changes: a field and the values to try, as its flag takes
 * them; only those above the plan's value are tried (below it, with
 * `smaller`). */
static const struct {
    PlanField field;
    const char *values;
    gboolean smaller;
} candidates[] = {
    {PLAN_ZERO_STAGE, "1,2,3", FALSE},       {PLAN_RECOMPUTE, "selective,full", FALSE},
    {PLAN_SEQUENCE_PARALLEL, "true", FALSE}, {PLAN_MICRO_BATCH_SIZE, "32,16,8,4,2,1", TRUE},
    {PLAN_TP, "2,4,8,16,32,64", FALSE},      {PLAN_PP, "2,4,8,16,32,64", FALSE},
};

/* One value of one row. */
typedef struct {
    int row, value;
} Change;

/* A candidate plan with up to two changes, its bound and, once replayed,
 * its figures. */
typedef struct {
    Change change[2];
    int n;
    PlanSpec *plan;
    double bound_s;
    int order;     /* in the order made: table order */
    gboolean fits; /* replayed, and fits */
} Candidate;

/* Every value of every row beyond the plan's own, in table order. */
static GArray *single_changes(const PlanSpec *plan)
{
    GArray *changes = g_array_new(FALSE, FALSE, sizeof(Change));
    for (int r = 0; r < (int)G_N_ELEMENTS(candidates); r++) {
        g_auto(GStrv) values = g_strsplit(candidates[r].values, ",", -1);
        int own = plan_field_get(plan, candidates[r].field);
        for (char **v = values; *v; v++) {
            Change c = {r, 0};
            gboolean parsed = plan_field_parse(candidates[r].field, *v, "advice", &c.value, NULL);
            g_assert(parsed);
            if (candidates[r].smaller ? c.value < own : c.value > own)
                g_array_append_val(changes, c);
        }
    }
    return changes;
}

/* `plan` with the changes, resolved and checked on the same GPUs, or NULL
 * when that plan is not valid. */
static PlanSpec *changed_plan(const ModelSpec *model, const ClusterSpec *cluster,
                              const PlanSpec *plan, const Change *change, int n)
{
    g_autoptr(PlanSpec) p = plan_spec_copy(plan);
    for (int i = 0; i < n; i++)
        plan_field_put(p, candidates[change[i].row].field, change[i].value, NULL);
    long long gpus = plan_spec_gpus(plan), others = plan_spec_gpus(p) / p->dp;
    if (gpus % others != 0)
        return NULL;
    p->dp = (int)(gpus / others);
    if (p->pp != plan->pp && !plan->origin[PLAN_LAYERS_PER_STAGE]) { /* split anew */
        g_clear_pointer(&p->layers_per_stage.v, g_free);
        p->layers_per_stage.n = 0;
    }
    if (!strategy_resolve(p, model, cluster, NULL))
        return NULL;
    return g_steal_pointer(&p);
}

/* The flags that turn `plan` into `changed`: every field that differs but
 * the layer split (which resolves anew), and dp only where the plan set it
 * (else it resolves from the GPUs, as here). */
static char *change_text(const PlanSpec *plan, const PlanSpec *changed)
{
    GString *s = g_string_new(NULL);
    for (int f = 0; f < PLAN_N_FIELDS; f++) {
        g_autofree char *was = plan_field_text(plan, (PlanField)f);
        g_autofree char *now = plan_field_text(changed, (PlanField)f);
        gboolean show = strcmp(was, now) != 0 && f != PLAN_LAYERS_PER_STAGE &&
                        (f != PLAN_DP || plan->origin[f]);
        if (!show)
            continue;
        if (plan_fields[f].kind == FIELD_BOOL)
            g_string_append_printf(s, "%s--%s%s", s->len ? " " : "",
                                   strcmp(now, "true") == 0 ? "" : "no-", plan_fields[f].flag);
        else
            g_string_append_printf(s, "%s--%s %s", s->len ? " " : "", plan_fields[f].flag, now);
    }
    return g_string_free(s, FALSE);
}

/* Adds the candidate of `change` (n of them) if it is valid and may fit;
 * sets *partial when its step is too big for the budget. */
static void consider(GArray *out, const ModelSpec *model, const ClusterSpec *cluster,
                     const PlanSpec *plan, const Change *change, int n, gboolean *partial)
{
    PlanSpec *p = changed_plan(model, cluster, plan, change, n);
    if (!p)
        return;
    gboolean small = emit_check_size(model, p, p->pp, 0, ADVICE_BUDGET_EVENTS, NULL);
    *partial |= !small;
    if (!small || estimate_peak_lower_bound_bytes(model, cluster, p) > cluster->gpu.memory_bytes) {
        plan_spec_free(p);
        return;
    }
    Candidate c = {.n = n, .plan = p, .order = (int)out->len};
    memcpy(c.change, change, sizeof(Change) * (gsize)n);
    c.bound_s = estimate_step_lower_bound_s(model, cluster, p);
    g_array_append_val(out, c);
}

static int by_bound(gconstpointer a, gconstpointer b)
{
    const Candidate *x = a, *y = b;
    return x->bound_s < y->bound_s ? -1 : x->bound_s > y->bound_s ? 1 : x->order - y->order;
}

/* Replays the candidates in order of their bounds until the best
 * ADVICE_MAX that fit are known, within `budget` events (spent as they
 * are; *partial set when one is left out for it); returns how many fit, in `out` fastest first
 * (ties: the earlier candidate). */
static int replay_best(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                       GArray *cands, double *budget, gboolean *partial,
                       ReportAdvice out[ADVICE_MAX])
{
    g_array_sort(cands, by_bound);
    int n = 0, order[ADVICE_MAX];
    for (guint i = 0; i < cands->len; i++) {
        Candidate *c = &g_array_index(cands, Candidate, i);
        if (n == ADVICE_MAX && c->bound_s > out[n - 1].step_time_s)
            break; /* neither it nor any after it can beat the slowest kept */
        Report rep;
        /* each task is at least one event: a step of more tasks than the
         * budget has left is refused (the only error left), before it is
         * built when its size is known, else after building what is left,
         * which spends it */
        GError *error = NULL;
        if (*budget < 1 || !sim_run_within(model, cluster, c->plan, (gsize)*budget, &rep, &error)) {
            if (g_error_matches(error, PS_ERROR, PS_ERROR_OVER_CAP))
                *budget = 0;
            *partial = TRUE;
            g_clear_error(&error);
            continue;
        }
        *budget -= (double)rep.metrics.events;
        double step = rep.metrics.step_time_s, peak = rep.metrics.peak_bytes;
        gboolean fits = c->fits = rep.metrics.fits;
        report_clear(&rep);
        /* insert by (step time, order), dropping the slowest beyond the cap */
        int at = n;
        while (at > 0 && (step < out[at - 1].step_time_s ||
                          (step == out[at - 1].step_time_s && c->order < order[at - 1])))
            at--;
        if (!fits || at == ADVICE_MAX)
            continue;
        if (n == ADVICE_MAX)
            g_free(out[--n].change);
        memmove(&out[at + 1], &out[at], sizeof *out * (gsize)(n - at));
        memmove(&order[at + 1], &order[at], sizeof *order * (gsize)(n - at));
        out[at] = (ReportAdvice){change_text(plan, c->plan), step, peak};
        order[at] = c->order;
        n++;
    }
    return n;
}

static void candidates_free(GArray *cands)
{
    for (guint i = 0; i < cands->len; i++)
        plan_spec_free(g_array_index(cands, Candidate, i).plan);
    g_array_free(cands, TRUE);
}

/* Whether `change` is that of a single-change candidate that fits. */
static gboolean fits_alone(GArray *singles, Change change)
{
    for (guint i = 0; i < singles->len; i++) {
        const Candidate *c = &g_array_index(singles, Candidate, i);
        if (c->fits && c->change[0].row == change.row && c->change[0].value == change.value)
            return TRUE;
    }
    return FALSE;
}

/* Merges the fastest of `a` (na) and `b` (nb), both fastest first, into
 * `a`, `a`'s first on ties; frees the changes left out. */
static int merge(ReportAdvice a[ADVICE_MAX], int na, ReportAdvice b[ADVICE_MAX], int nb)
{
    ReportAdvice all[2 * ADVICE_MAX];
    int n = 0, i = 0, j = 0;
    while (i < na || j < nb)
        all[n++] = j == nb || (i < na && a[i].step_time_s <= b[j].step_time_s) ? a[i++] : b[j++];
    advice_clear(all + MIN(n, ADVICE_MAX), n - MIN(n, ADVICE_MAX));
    n = MIN(n, ADVICE_MAX);
    memcpy(a, all, sizeof *a * (gsize)n);
    return n;
}

int advice_find(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                ReportAdvice out[ADVICE_MAX], gboolean *partial)
{
    *partial = FALSE;
    g_autoptr(GArray) changes = single_changes(plan);
    GArray *singles = g_array_new(FALSE, FALSE, sizeof(Candidate));
    for (guint i = 0; i < changes->len; i++)
        consider(singles, model, cluster, plan, &g_array_index(changes, Change, i), 1, partial);
    double budget = ADVICE_BUDGET_EVENTS;
    int n = replay_best(model, cluster, plan, singles, &budget, partial, out);
    if (n < ADVICE_MAX) { /* every single change was replayed: pairs of the others */
        GArray *pairs = g_array_new(FALSE, FALSE, sizeof(Candidate));
        for (guint i = 0; i < changes->len; i++)
            for (guint j = i + 1; j < changes->len; j++) {
                Change pair[2] = {g_array_index(changes, Change, i),
                                  g_array_index(changes, Change, j)};
                if (pair[0].row != pair[1].row && !fits_alone(singles, pair[0]) &&
                    !fits_alone(singles, pair[1]))
                    consider(pairs, model, cluster, plan, pair, 2, partial);
            }
        ReportAdvice more[ADVICE_MAX];
        n = merge(out, n, more, replay_best(model, cluster, plan, pairs, &budget, partial, more));
        candidates_free(pairs);
    }
    candidates_free(singles);
    return n;
}

void advice_clear(ReportAdvice *advice, int n)
{
    for (int i = 0; i < n; i++)
        g_free(advice[i].change);
}
