/* advice.c: candidate changes to a plan, pre-checked by the memory bound,
 * replayed in order of their step-time bound (advice.h). */
#include "app/advice.h"

#include <string.h>

#include "app/simulate.h"
#include "metrics/metrics.h"
#include "base/error.h"
#include "strategy/estimate.h"
#include "strategy/recompute.h"
#include "strategy/strategy.h"

/* The candidate changes: a field and the values to try, as its flag takes
 * them; only those above the plan's value are tried (below it, with
 * `smaller`). */
static const struct {
    PlanField field;
    const char *values;
    gboolean smaller;
} candidates[] = {
    {.field = PLAN_ZERO_STAGE, .values = "1,2,3"},
    {.field = PLAN_RECOMPUTE, .values = "selective,full"},
    {.field = PLAN_SEQUENCE_PARALLEL, .values = "true"},
    {.field = PLAN_MICRO_BATCH_SIZE, .values = "32,16,8,4,2,1", .smaller = TRUE},
    {.field = PLAN_TP, .values = "2,4,8,16,32,64"},
    {.field = PLAN_PP, .values = "2,4,8,16,32,64"},
    {.field = PLAN_OFFLOAD, .values = "optimizer,activations"},
};

/* One value of one row. */
typedef struct {
    int row, value;
} Change;

/* A candidate plan with up to ADVICE_DEPTH changes (to different rows,
 * in row order), its bounds and, once replayed, whether it fits. */
typedef struct {
    Change change[ADVICE_DEPTH];
    int n;
    PlanSpec *plan;
    double bound_s, memory_bytes;
    int order;     /* in the order made: table order within a depth */
    gboolean fits; /* replayed, and fits */
} Candidate;

/* What one search shares: its inputs, the budget and the results. */
typedef struct {
    const ModelSpec *model;
    const ClusterSpec *cluster; /* with the nodes searched on */
    const PlanSpec *plan;
    long long gpus;      /* the plan's GPUs on this cluster */
    const char *nodes;   /* "--nodes N" when more than the plan's; NULL: the same */
    GArray *changes;     /* Change: every value of every row beyond the plan's own */
    double budget;       /* events left */
    gboolean *partial;   /* a candidate was left out for the budget */
    GHashTable *seen;    /* the normal forms of the plans made, as flags */
    GHashTable *fitting; /* the change sets that fit (set_key) */
    int made;            /* candidates made, for their order */
} Search;

/* Every value of every row beyond the plan's own, in table order. */
static GArray *single_changes(const PlanSpec *plan)
{
    GArray *changes = g_array_new(FALSE, FALSE, sizeof(Change));
    for (int r = 0; r < (int)G_N_ELEMENTS(candidates); r++) {
        g_auto(GStrv) values = g_strsplit(candidates[r].values, ",", -1);
        int own = plan_field_get(plan, candidates[r].field);
        for (char **v = values; *v; v++) {
            Change c = {.row = r};
            gboolean parsed = plan_field_parse(candidates[r].field, *v, "advice", &c.value, NULL);
            g_assert(parsed);
            if (candidates[r].smaller ? c.value < own : c.value > own)
                g_array_append_val(changes, c);
        }
    }
    return changes;
}

/* The plan with the changes, resolved and checked on the search's GPUs
 * (dp shrinks or grows to match), or NULL when that plan is not valid. */
static PlanSpec *changed_plan(const Search *s, const Change *change, int n)
{
    g_autoptr(PlanSpec) p = plan_spec_copy(s->plan);
    for (int i = 0; i < n; i++)
        plan_field_put(p, candidates[change[i].row].field, change[i].value, NULL);
    long long others = plan_spec_gpus(p) / p->dp;
    if (s->gpus % others != 0)
        return NULL;
    p->dp = (int)(s->gpus / others);
    if (p->pp != s->plan->pp && !s->plan->origin[PLAN_LAYERS_PER_STAGE]) { /* split anew */
        g_clear_pointer(&p->layers_per_stage.v, g_free);
        p->layers_per_stage.n = 0;
    }
    if (!strategy_resolve(p, s->model, s->cluster, NULL))
        return NULL;
    return g_steal_pointer(&p);
}

/* The flags that turn `plan` into `changed` (plan_spec_change_flags),
 * after `nodes`, if any. */
static char *change_text(const PlanSpec *plan, const PlanSpec *changed, const char *nodes)
{
    g_autofree char *flags = plan_spec_change_flags(plan, changed);
    return nodes ? g_strjoin(*flags ? " " : "", nodes, flags, NULL) : g_steal_pointer(&flags);
}

/* Whether a plan of the normal form of `plan` (strategy_normalize) was
 * made before in this search; notes it if not. */
static gboolean seen_before(Search *s, const PlanSpec *plan)
{
    char *key = strategy_normal_form(plan, s->model);
    if (g_hash_table_contains(s->seen, key)) {
        g_free(key);
        return TRUE;
    }
    g_hash_table_add(s->seen, key);
    return FALSE;
}

/* Whether a plan recomputes every layer of chunks of more than one layer
 * in full: the fewest layers of each chunk that fit may do (fewest_layers). */
static gboolean refinable(const PlanSpec *p)
{
    return p->recompute == RECOMPUTE_FULL && p->recompute_num_layers == 0 &&
           recompute_most_chunk_layers(p) > 1;
}

/* Replays `plan` into *rep within the search's budget, spent as it goes:
 * FALSE, with `partial` set, when it does not (each task is at least one
 * event: a step of more tasks than the budget has left is refused, the
 * only error left, before it is built when its size is known, else after
 * building what is left, which spends it). */
static gboolean replay(Search *s, const PlanSpec *plan, Report *rep)
{
    GError *error = NULL;
    double cap = s->budget / 2; /* one step too big spends half of what is left */
    if (cap < 1 || !simulate_run_within(s->model, s->cluster, plan, (gsize)cap, rep, &error)) {
        if (g_error_matches(error, PS_ERROR, PS_ERROR_OVER_CAP))
            s->budget -= cap;
        *s->partial = TRUE;
        g_clear_error(&error);
        return FALSE;
    }
    s->budget -= (double)rep->metrics.events;
    return TRUE;
}

/* A candidate that fits recomputing every layer (refinable), turned into
 * the recomputation of the fewest first layers of each chunk that fits
 * (recompute_num_layers, Megatron-LM's block method): a layer left whole
 * replays nothing and keeps more, so the peak falls and the step grows
 * with the layers replayed, and the fewest that fit, found by bisection
 * on replays, are the fastest. Their step and peak into *step and *peak;
 * the candidate unchanged when none fewer fit (or the budget ends first). */
static void fewest_layers(Search *s, Candidate *c, double *step, double *peak)
{
    int lo = 1, hi = recompute_most_chunk_layers(c->plan), fewest = 0; /* hi: fits */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        g_autoptr(PlanSpec) p = plan_spec_copy(c->plan);
        p->recompute_num_layers = mid;
        Report rep;
        if (!replay(s, p, &rep))
            break;
        if (rep.metrics.fits) {
            hi = fewest = mid;
            *step = rep.metrics.step_time_s;
            *peak = rep.metrics.peak_bytes;
        } else {
            lo = mid + 1;
        }
        report_clear(&rep);
    }
    if (fewest > 0)
        c->plan->recompute_num_layers = fewest;
}

/* Makes the candidate of `change` (n of them, in row order) if it is
 * valid, replays unlike every plan made before (a change that changes
 * nothing, selective recomputation under FlashAttention, is none) and is
 * small enough to replay: into `fit` when its memory bound is within the
 * GPU's memory (it may fit), else into `over`. */
static void consider(Search *s, const Change *change, int n, GArray *fit, GArray *over)
{
    PlanSpec *p = changed_plan(s, change, n);
    if (!p)
        return;
    if (seen_before(s, p)) {
        plan_spec_free(p);
        return;
    }
    gboolean small = emit_check_size(s->model, p, p->pp, 0, ADVICE_BUDGET_EVENTS, NULL);
    *s->partial |= !small;
    if (!small) {
        plan_spec_free(p);
        return;
    }
    Candidate c = {.n = n, .plan = p, .order = s->made++};
    for (int i = 0; i < n; i++)
        c.change[i] = change[i];
    Step step = step_of(s->model, s->cluster, p);
    c.memory_bytes = estimate_peak_lower_bound_bytes(&step);
    c.bound_s = estimate_step_lower_bound_s(&step);
    if (refinable(p)) { /* its fastest refinement's bound: one layer a chunk */
        g_autoptr(PlanSpec) one = plan_spec_copy(p);
        one->recompute_num_layers = 1;
        Step fewest = step_of(s->model, s->cluster, one);
        c.bound_s = estimate_step_lower_bound_s(&fewest);
    }
    g_array_append_val(metrics_fits(s->cluster, c.memory_bytes, 0) ? fit : over, c);
}

/* The change set `set` (n, in row order) but its change `skip` (-1:
 * none), as text: a key of Search.fitting. */
static char *set_key(const Change *set, int n, int skip)
{
    GString *key = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        if (i != skip)
            g_string_append_printf(key, "%d:%d ", set[i].row, set[i].value);
    return g_string_free(key, FALSE);
}

/* Whether a change set one change smaller than `set` fits: then `set` is
 * no simpler a way to fit. */
static gboolean fits_with_less(const Search *s, const Change *set, int n)
{
    gboolean less = FALSE;
    for (int k = 0; k < n && !less; k++) {
        g_autofree char *key = set_key(set, n, k);
        less = g_hash_table_contains(s->fitting, key);
    }
    return less;
}

/* The candidates with one change more than `parent`'s, to a row it does
 * not change, as consider() sorts them, unless fewer of their changes
 * fit. */
static void extend(Search *s, const Candidate *parent, GArray *fit, GArray *over)
{
    for (guint i = 0; i < s->changes->len; i++) {
        Change c = g_array_index(s->changes, Change, i), set[ADVICE_DEPTH];
        int n = 0, at = 0;
        gboolean clash = FALSE;
        for (int k = 0; k < parent->n; k++)
            clash |= parent->change[k].row == c.row;
        if (clash)
            continue;
        while (at < parent->n && parent->change[at].row < c.row)
            set[n++] = parent->change[at++];
        set[n++] = c;
        while (at < parent->n)
            set[n++] = parent->change[at++];
        if (fits_with_less(s, set, n)) /* and so does any set of which it is one fewer */
            g_hash_table_add(s->fitting, set_key(set, n, -1));
        else
            consider(s, set, n, fit, over);
    }
}

static int by_bound(gconstpointer a, gconstpointer b)
{
    const Candidate *x = a, *y = b;
    return x->bound_s < y->bound_s ? -1 : x->bound_s > y->bound_s ? 1 : x->order - y->order;
}

static int by_memory(gconstpointer a, gconstpointer b)
{
    const Candidate *x = a, *y = b;
    if (x->memory_bytes != y->memory_bytes)
        return x->memory_bytes < y->memory_bytes ? -1 : 1;
    return by_bound(a, b);
}

/* Replays the candidates in order of their bounds until the best
 * ADVICE_MAX that fit are known, within the search's budget (spent as
 * they are; `partial` set when one is left out for it); returns how many
 * fit, in `out` fastest first (ties: the earlier candidate). */
static int replay_best(Search *s, GArray *cands, ReportAdvice out[ADVICE_MAX])
{
    g_array_sort(cands, by_bound);
    int n = 0, order[ADVICE_MAX];
    for (guint i = 0; i < cands->len; i++) {
        Candidate *c = &g_array_index(cands, Candidate, i);
        if (n == ADVICE_MAX && c->bound_s > out[n - 1].step_time_s)
            break; /* neither it nor any after it can beat the slowest kept */
        Report rep;
        if (!replay(s, c->plan, &rep))
            continue;
        double step = rep.metrics.step_time_s, peak = rep.metrics.peak_bytes;
        gboolean fits = c->fits = rep.metrics.fits;
        report_clear(&rep);
        if (fits && refinable(c->plan))
            fewest_layers(s, c, &step, &peak);
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
        out[at] = (ReportAdvice){.change = change_text(s->plan, c->plan, s->nodes),
                                 .step_time_s = step,
                                 .peak_bytes = peak};
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

/* The beam search on one cluster (advice.h): depth after depth while
 * fewer than ADVICE_MAX fit, the candidates within memory replayed, those
 * over it or that did not fit carried on, the ADVICE_BEAM nearest to
 * fitting extended by one change more. */
static int search(Search *s, ReportAdvice out[ADVICE_MAX])
{
    s->changes = single_changes(s->plan);
    s->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s->fitting = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (!s->nodes)
        seen_before(s, s->plan); /* the plan itself is no advice */
    GArray *beam = g_array_new(FALSE, FALSE, sizeof(Candidate));
    Candidate root = {.plan = plan_spec_copy(s->plan)};
    g_array_append_val(beam, root);
    int n = 0;
    /* on more nodes, the plan itself first (depth 0: no change but them) */
    for (int depth = s->nodes ? 0 : 1; depth <= ADVICE_DEPTH && n < ADVICE_MAX && beam->len > 0;
         depth++) {
        GArray *fit = g_array_new(FALSE, FALSE, sizeof(Candidate)),
               *over = g_array_new(FALSE, FALSE, sizeof(Candidate));
        if (depth == 0)
            consider(s, NULL, 0, fit, over);
        for (guint i = 0; depth > 0 && i < beam->len; i++)
            extend(s, &g_array_index(beam, Candidate, i), fit, over);
        ReportAdvice more[ADVICE_MAX];
        n = merge(out, n, more, replay_best(s, fit, more));
        for (guint i = fit->len; i-- > 0;) { /* those that did not fit, carried on */
            const Candidate *c = &g_array_index(fit, Candidate, i);
            if (c->fits)
                g_hash_table_add(s->fitting, set_key(c->change, c->n, -1));
            if (!c->fits) {
                g_array_append_val(over, g_array_index(fit, Candidate, i));
                g_array_remove_index_fast(fit, i);
            }
        }
        candidates_free(fit);
        if (depth == 0 && over->len == 0 && n == 0) { /* the plan is not valid there: */
            g_array_free(over, TRUE);                 /* extend it all the same */
            continue;
        }
        candidates_free(beam);
        g_array_sort(over, by_memory);
        for (guint i = MIN(over->len, ADVICE_BEAM); i < over->len; i++)
            plan_spec_free(g_array_index(over, Candidate, i).plan);
        g_array_set_size(over, MIN(over->len, ADVICE_BEAM));
        beam = over;
    }
    candidates_free(beam);
    g_hash_table_destroy(s->seen);
    g_hash_table_destroy(s->fitting);
    g_array_free(s->changes, TRUE);
    return n;
}

int advice_find(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                ReportAdvice out[ADVICE_MAX], gboolean *partial)
{
    *partial = FALSE;
    Search s = {.model = model,
                .cluster = cluster,
                .plan = plan,
                .gpus = plan_spec_gpus(plan),
                .nodes = NULL,
                .budget = ADVICE_BUDGET_EVENTS,
                .partial = partial};
    int n = search(&s, out);
    /* none on these GPUs: the fewest more nodes on which some change fits,
     * each plan's GPUs grown by as much */
    for (int times = 2; n == 0 && times <= ADVICE_NODES; times *= 2) {
        ClusterSpec more = *cluster;
        more.nodes = cluster->nodes * times;
        if ((long long)more.nodes * more.gpus_per_node > CLUSTER_MAX_GPUS)
            break;
        g_autofree char *nodes = g_strdup_printf("--nodes %d", more.nodes);
        Search bigger = {.model = model,
                         .cluster = &more,
                         .plan = plan,
                         .gpus = s.gpus * times,
                         .nodes = nodes,
                         .budget = s.budget,
                         .partial = partial};
        n = search(&bigger, out);
        s.budget = bigger.budget;
    }
    return n;
}

void advice_clear(ReportAdvice *advice, int n)
{
    for (int i = 0; i < n; i++)
        g_free(advice[i].change);
}
