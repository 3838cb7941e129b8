/* space.c: walking a sweep's space axis by axis, refusing whole subspaces
 * at the first rule they break (space.h). */
#include "app/space.h"

#include <string.h>

#include "base/error.h"
#include "strategy/schedule.h"
#include "strategy/strategy.h"

/* What the rules see besides the plan. */
typedef struct {
    const Space *space;
    const ClusterSpec *cluster;
    int gpus;
    gboolean dp_swept; /* dp is an axis: the walk sets it, derive_dp only checks it */
} Context;

/* A rule: a check of a plan's fields that reads only `reads` (bits
 * 1 << PlanField) of the plan; it may set dp (derive_dp). */
typedef struct {
    guint64 reads;
    gboolean (*check)(PlanSpec *plan, const Context *c, GError **error);
} Rule;

#define F(field) (G_GUINT64_CONSTANT(1) << PLAN_##field)
#define SHAPE    (F(TP) | F(CP) | F(PP) | F(DP))
#define BATCH    (SHAPE | F(MICRO_BATCH_SIZE) | F(GLOBAL_BATCH_SIZE))

static gboolean tp_model(PlanSpec *plan, const Context *c, GError **error)
{
    return strategy_tensor_parallel.check_model(plan, c->space->model, error);
}

static gboolean ep_model(PlanSpec *plan, const Context *c, GError **error)
{
    return strategy_expert_parallel.check_model(plan, c->space->model, error);
}

static gboolean cp_model(PlanSpec *plan, const Context *c, GError **error)
{
    return strategy_context_parallel.check_model(plan, c->space->model, error);
}

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

static gboolean schedule(PlanSpec *plan, const Context *c, GError **error)
{
    (void)c;
    return plan->global_batch_size == 0 || pipeline_schedules[plan->schedule]->check(plan, error);
}

static gboolean tp(PlanSpec *plan, const Context *c, GError **error)
{
    return strategy_tensor_parallel.check(plan, c->space->model, error);
}

static gboolean ep(PlanSpec *plan, const Context *c, GError **error)
{
    return strategy_expert_parallel.check(plan, c->space->model, error);
}

static gboolean offload(PlanSpec *plan, const Context *c, GError **error)
{
    return strategy_offload.check(plan, c->space->model, error);
}

/* The rules, in the order they are held when they become decidable at
 * the same axis: the model's causes first (a tp that does not divide the
 * heads, before the GPUs it leaves over), then dp, which the later ones
 * read. */
static const Rule rules[] = {
    {F(TP), tp_model},
    {F(EP), ep_model},
    {F(TP) | F(CP) | F(CP_ALGORITHM), cp_model},
    {SHAPE, derive_dp},
    {BATCH, batch},
    {F(PP) | F(VIRTUAL_STAGES) | F(LAYERS_PER_STAGE), chunks},
    {BATCH | F(SCHEDULE) | F(VIRTUAL_STAGES), schedule},
    {F(TP) | F(SEQUENCE_PARALLEL) | F(TP_COMM_OVERLAP), tp},
    {SHAPE | F(EP) | F(ZERO_STAGE) | F(OFFLOAD), ep},
    {F(OFFLOAD) | F(OFFLOAD_LAYERS) | F(RECOMPUTE) | F(LAYERS_PER_STAGE), offload},
};
#define RULES G_N_ELEMENTS(rules)

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
#define READS_MAX 11
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
    GHashTable *refusals[G_N_ELEMENTS(rules)]; /* per rule: Reads -> its reason */
    int reads[G_N_ELEMENTS(rules)][READS_MAX]; /* per rule: the scalar fields it reads */
    int n_reads[G_N_ELEMENTS(rules)];
} Walk;

/* Whether the rules of `level` admit the plan so far; if not, says so
 * (refused) for the `below` combinations under it. */
static Reads reads_of(const Walk *w, guint r)
{
    Reads k = {{w->cluster}};
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
    for (guint r = 0; r < RULES; r++) {
        if (!(w->level_rules[level * RULES + r]))
            continue;
        Reads key = reads_of(w, r);
        const char *reason = g_hash_table_lookup(w->refusals[r], &key);
        GError *error = NULL;
        if (!reason && !rules[r].check(w->plan, &w->c, &error)) {
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
              .level_rules = g_new0(guint8, (gsize)(n_axes + 1) * RULES),
              .below = g_new(gint64, n_axes + 1),
              .leaf = leaf,
              .refused = refused,
              .user = user};
    /* a rule is held at the level of the last axis it reads (0: the
     * cluster's, before any axis) */
    for (guint r = 0; r < RULES; r++) {
        int level = 0;
        for (int a = 0; a < n_axes; a++)
            if (rules[r].reads & (G_GUINT64_CONSTANT(1) << w.axes[a].field))
                level = a + 1;
        w.level_rules[level * RULES + r] = 1;
    }
    for (int a = 0; a < n_axes; a++)
        w.c.dp_swept |= w.axes[a].field == PLAN_DP;
    w.below[n_axes] = 1;
    for (int l = n_axes; l > 0; l--)
        w.below[l - 1] = w.below[l] * w.axes[l - 1].values->len;
    for (guint r = 0; r < RULES; r++) {
        w.refusals[r] = g_hash_table_new_full(reads_hash, reads_equal, g_free, g_free);
        for (int f = 0; f < PLAN_N_FIELDS; f++) {
            if (rules[r].reads >> f & 1 && plan_fields[f].kind != FIELD_LIST) {
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
    for (guint r = 0; r < RULES; r++)
        g_hash_table_destroy(w.refusals[r]);
    plan_spec_free(w.plan);
    g_free(w.level_rules);
    g_free(w.below);
    if (w.stopped)
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--grid: expected a space of at most %" G_GINT64_FORMAT
                    " steps to walk (values set one by one), got more: narrow it",
                    SPACE_MAX_STEPS);
    return !w.stopped;
}
