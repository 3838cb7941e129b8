/* space.c: walking a sweep's space axis by axis, refusing whole subspaces
 * at the first rule they break (space.h). */
#include "app/space.h"

#include <string.h>

#include "base/error.h"
#include "strategy/strategy.h"

/* What the rules see besides the plan. */
typedef struct {
    const Space *space;
    const ClusterSpec *cluster;
    int gpus;
    gboolean dp_swept; /* dp is an axis: the walk sets it, derive_dp only checks it */
} Context;

/* A rule: a check of a plan's fields that reads only `reads` (PLAN_BIT
 * bits) of the plan: one of the plan's own (`check`, which may set dp:
 * derive_dp) or a strategy's (`strategy`'s check_model or check, which
 * declares what it reads: strategy.h). */
typedef struct {
    guint64 reads;
    gboolean (*check)(PlanSpec *plan, const Context *c, GError **error);
    gboolean (*strategy)(const PlanSpec *plan, const ModelSpec *model, GError **error);
} Rule;

#define SHAPE (PLAN_BIT(TP) | PLAN_BIT(CP) | PLAN_BIT(PP) | PLAN_BIT(DP))
#define BATCH (SHAPE | PLAN_BIT(MICRO_BATCH_SIZE) | PLAN_BIT(GLOBAL_BATCH_SIZE))

static gboolean derive_dp(PlanSpec *plan, const Context *c, GError **error)
{
    if (!c->dp_swept)
        plan->dp = c->space->base->dp;
    return plan_spec_derive_dp(plan, c->gpus, c->cluster, error);
}

static gboolean batch(PlanSpec *plan, const Context *c, GError **error)
{
    (void)c;
    return plan_spec_check_batch(plan, error);
}

static gboolean chunks(PlanSpec *plan, const Context *c, GError **error)
{
    return plan_spec_check_chunks(plan, c->space->model, error);
}

/* The most rules: a check_model and a check a strategy, and the plan's. */
#define RULES_MAX (2 * STRATEGY_MAX + 3)

/* The rules into `rules`, in the order they are held when they become
 * decidable at the same axis: the model's causes first (each strategy's
 * check_model: a tp that does not divide the heads, before the GPUs it
 * leaves over), then dp, which the later ones read, the batch and the
 * chunks, then each strategy's check, in registry order. Returns their
 * number. */
static int make_rules(Rule *rules)
{
    int n = 0;
    for (const Strategy *const *s = strategy_registry; *s; s++)
        if ((*s)->check_model)
            rules[n++] = (Rule){.reads = (*s)->check_model_reads, .strategy = (*s)->check_model};
    rules[n++] = (Rule){.reads = SHAPE, .check = derive_dp};
    rules[n++] = (Rule){.reads = BATCH, .check = batch};
    rules[n++] = (Rule){.reads = PLAN_BIT(PP) | PLAN_BIT(VIRTUAL_STAGES) |
                                 PLAN_BIT(LAYERS_PER_STAGE) | PLAN_BIT(LAYOUT) |
                                 PLAN_BIT(FIRST_STAGE_LAYERS) | PLAN_BIT(LAST_STAGE_LAYERS) |
                                 PLAN_BIT(EMBEDDING_AS_LAYER) | PLAN_BIT(LOSS_AS_LAYER),
                        .check = chunks};
    for (const Strategy *const *s = strategy_registry; *s; s++)
        if ((*s)->check)
            rules[n++] = (Rule){.reads = (*s)->check_reads, .strategy = (*s)->check};
    for (int r = 0; r < n; r++)
        g_assert(rules[r].reads != 0); /* a strategy's check declares what it reads */
    return n;
}

/* Whether rule `r` admits the plan so far. */
static gboolean rule_admits(const Rule *r, PlanSpec *plan, const Context *c, GError **error)
{
    if (r->check)
        return r->check(plan, c, error);
    if (r->reads & PLAN_BIT(GLOBAL_BATCH_SIZE) && plan->global_batch_size == 0)
        return TRUE; /* the batch unresolved: decided once it is */
    return r->strategy(plan, c->space->model, error);
}

gint64 space_size(const Space *s)
{
    gint64 n = plan_grid_size(s->grid);
    return n < 0 || n > GRID_MAX_COMBINATIONS / s->n_clusters ? -1 : n * s->n_clusters;
}

/* The grid's combinations: the space's, per cluster. */
static gint64 grid_size(const Space *s)
{
    return plan_grid_size(s->grid);
}

const ClusterSpec *space_cluster(const Space *s, gint64 combo, int *gpus)
{
    const ClusterSpec *cluster = s->clusters[combo / grid_size(s)];
    *gpus = s->gpus ? s->gpus : cluster_spec_gpus(cluster);
    return cluster;
}

void space_apply(const Space *s, gint64 combo, PlanSpec *plan)
{
    plan_grid_apply(s->grid, combo % grid_size(s), plan);
}

gboolean space_plan(const Space *s, gint64 combo, PlanSpec **out, GError **error)
{
    int gpus;
    const ClusterSpec *cluster = space_cluster(s, combo, &gpus);
    PlanSpec *plan = *out = plan_spec_copy(s->base);
    space_apply(s, combo, plan);
    /* on fewer GPUs than the cluster's, dp from them; else strategy_resolve
     * derives it after the model's checks */
    if (gpus != cluster_spec_gpus(cluster) && !plan_spec_derive_dp(plan, gpus, cluster, error))
        return FALSE;
    return strategy_resolve(plan, s->model, cluster, error);
}

/* The key of rule r's verdict on the plan so far: the cluster's number
 * and the values of the fields it reads (each rule reads at most
 * READS_MAX scalar fields). */
#define READS_MAX 15
typedef struct {
    int values[READS_MAX + 1];
} Reads;

typedef struct {
    Context c;
    PlanSpec *plan;       /* the fields set so far, the base's beyond */
    const GridAxis *axes; /* the grid's; level l > 0 sets axis l - 1 */
    int n_axes;
    guint8 *level_rules; /* per level, a flag per rule held there */
    gint64 *below;       /* per level, the combinations under one of its values */
    SpaceLeaf leaf;
    SpaceRefused refused;
    gpointer user;
    gint64 steps;                              /* values set so far */
    gboolean stopped;                          /* by `leaf`, or past SPACE_MAX_STEPS */
    int cluster;                               /* the number of c.cluster */
    Rule rules[RULES_MAX];
    int n_rules;
    GHashTable *refusals[RULES_MAX]; /* per rule: Reads -> its reason */
    int reads[RULES_MAX][READS_MAX]; /* per rule: the scalar fields it reads */
    int n_reads[RULES_MAX];
} Walk;

/* What rule r's verdict depends on: the cluster, and the values of the
 * scalar fields it reads. */
static Reads reads_of(const Walk *w, int r)
{
    Reads k = {.values = {w->cluster}};
    for (int i = 0; i < w->n_reads[r]; i++)
        k.values[i + 1] = plan_field_get(w->plan, (PlanField)w->reads[r][i]);
    return k;
}

static guint reads_hash(gconstpointer p)
{
    const Reads *k = p;
    guint h = 2166136261u;
    for (int i = 0; i <= READS_MAX; i++)
        h = (h ^ (guint)k->values[i]) * 16777619u;
    return h;
}

static gboolean reads_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(Reads)) == 0;
}

/* Whether the rules of `level` admit the plan so far; if not, says so
 * (refused) for the `below` combinations under it. A rule's refusal is
 * kept by the values it read (Walk.refusals), so that the same refusal
 * again costs a lookup, not a check and its message. */
static gboolean admitted(Walk *w, int level)
{
    for (int r = 0; r < w->n_rules; r++) {
        if (!(w->level_rules[level * w->n_rules + r]))
            continue;
        Reads key = reads_of(w, r);
        const char *reason = g_hash_table_lookup(w->refusals[r], &key);
        GError *error = NULL;
        if (!reason && !rule_admits(&w->rules[r], w->plan, &w->c, &error)) {
            reason = g_strdup(ps_error_reason(error));
            g_hash_table_insert(w->refusals[r], g_memdup2(&key, sizeof key), (gpointer)reason);
            g_error_free(error);
        }
        if (reason) {
            w->refused(reason, w->below[level], w->user);
            return FALSE;
        }
    }
    return TRUE;
}

static void walk(Walk *w, int level, gint64 combo)
{
    if (level == w->n_axes) {
        w->stopped |= !w->leaf(combo, w->user);
        return;
    }
    const GridAxis *axis = &w->axes[level];
    for (guint v = 0; v < axis->values->len && !w->stopped; v++) {
        w->stopped |= ++w->steps > SPACE_MAX_STEPS;
        plan_field_put(w->plan, axis->field, g_array_index(axis->values, int, v), NULL);
        if (!w->stopped && admitted(w, level + 1))
            walk(w, level + 1, combo * axis->values->len + v);
    }
}

gboolean space_walk(const Space *s, SpaceLeaf leaf, SpaceRefused refused, gpointer user,
                    GError **error)
{
    int n_axes = (int)s->grid->axes->len;
    Walk w = {.c = {.space = s},
              .plan = plan_spec_copy(s->base),
              .axes = (const GridAxis *)s->grid->axes->data,
              .n_axes = n_axes,
              .below = g_new(gint64, n_axes + 1),
              .leaf = leaf,
              .refused = refused,
              .user = user};
    w.n_rules = make_rules(w.rules);
    w.level_rules = g_new0(guint8, (gsize)(n_axes + 1) * (gsize)w.n_rules);
    /* a rule is held at the level of the last axis it reads (0: the
     * cluster's, before any axis) */
    for (int r = 0; r < w.n_rules; r++) {
        int level = 0;
        for (int a = 0; a < n_axes; a++)
            if (w.rules[r].reads & (G_GUINT64_CONSTANT(1) << w.axes[a].field))
                level = a + 1;
        w.level_rules[level * w.n_rules + r] = 1;
    }
    for (int a = 0; a < n_axes; a++)
        w.c.dp_swept |= w.axes[a].field == PLAN_DP;
    w.below[n_axes] = 1;
    for (int l = n_axes; l > 0; l--)
        w.below[l - 1] = w.below[l] * w.axes[l - 1].values->len;
    for (int r = 0; r < w.n_rules; r++) {
        w.refusals[r] = g_hash_table_new_full(reads_hash, reads_equal, g_free, g_free);
        for (int f = 0; f < PLAN_N_FIELDS; f++) {
            if (w.rules[r].reads >> f & 1 && !plan_field_is_list((PlanField)f)) {
                g_assert(w.n_reads[r] < READS_MAX);
                w.reads[r][w.n_reads[r]++] = f;
            }
        }
    }
    for (int k = 0; k < s->n_clusters && !w.stopped; k++) {
        w.cluster = k;
        w.c.cluster = s->clusters[k];
        w.c.gpus = s->gpus ? s->gpus : cluster_spec_gpus(w.c.cluster);
        if (admitted(&w, 0))
            walk(&w, 0, k);
    }
    for (int r = 0; r < w.n_rules; r++)
        g_hash_table_destroy(w.refusals[r]);
    plan_spec_free(w.plan);
    g_free(w.level_rules);
    g_free(w.below);
    if (w.stopped)
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "the space: expected at most %" G_GINT64_FORMAT
                    " steps to walk (values set one by one), got more: fix some of its axes (a "
                    "plan flag such as --tp 8, or --space grid with a --grid file)",
                    SPACE_MAX_STEPS);
    return !w.stopped;
}
