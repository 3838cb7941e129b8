/* fuzz_sim.c: a libFuzzer target that simulates a fuzzed small plan on a
 * fuzzed small cluster, reports it, sweeps a tiny grid over it and runs
 * it: the code past the parsers, under caps that keep an input to a few
 * milliseconds.
 *
 * The input is up to five parts, each ended by a NUL byte (which no JSON
 * text holds) or by the input's end:
 *   1. a model file; empty: the shipped tiny-gpt;
 *   2. a cluster file; empty: the shipped dgx-a100-80gb;
 *   3. a plan file; empty: the defaults;
 *   4. a grid file; empty: no sweep;
 *   5. the choices no file gives, a byte each (Choices; missing bytes 0).
 * Each file is loaded by its real loader (fuzz_common.h); a cluster of
 * more than MAX_GPUS GPUs is loaded again at the most nodes that fit, and
 * skipped when one node has more. Then, as simulate does: strategy_resolve,
 * a replay of at most MAX_TASKS tasks (simulate_run_within), the training
 * totals, the diagnosis and a report (text, JSON or CSV; with --explain's
 * prose or as --breakdown); the same step under a what-if (a slow GPU,
 * jitter), when small enough (MAX_WHATIF_EVENTS); a sweep of the grid over the plan file's plan (at
 * most MAX_COMBINATIONS combinations, each one checked first to resolve or to replay within
 * MAX_TASKS), its best rows, their summaries and the axes' gains; and the whole run
 * (runplan_compute) when its failures are few enough to simulate quickly (run_events).
 *
 * Everything is freed, so that a leak is a finding, as a crash, a
 * sanitizer report or an error that is not bad input (fuzz_check_error)
 * is: a g_assert or g_error reached from these files is a bug. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#include "app/cli.h"
#include "app/simulate.h"
#include "app/sweep.h"
#include "app/whatif.h"
#include "metrics/breakdown.h"
#include "metrics/checkpoint.h"
#include "metrics/diagnosis.h"
#include "metrics/run.h"
#include "metrics/runplan.h"
#include "metrics/training.h"
#include "output/report.h"
#include "strategy/strategy.h"
#include "base/error.h"
#include "base/shipped.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The caps that keep an execution to milliseconds. */
#define MAX_GPUS          16
#define MAX_TASKS         5000
#define MAX_WHATIF_EVENTS 5e3 /* the plain replay's events times its GPUs: a bound of the
                               * what-if's, which replays every GPU */
#define MAX_COMBINATIONS  4
#define MAX_RUN_EVENTS    1e4 /* failures and restarts a run's trials simulate */

enum { PART_MODEL, PART_CLUSTER, PART_PLAN, PART_GRID, PART_CHOICES, PARTS };

/* The choices, one byte each in this order. */
typedef struct {
    guint8 render;  /* % 3 the format, / 3 % 3: the report, with --explain, --breakdown */
    guint8 trials;  /* 1 + trials % 4 */
    guint8 every;   /* steps between checkpoints, less one; with FLAG_BEST, 0: auto */
    guint8 flags;   /* FLAG_* */
    guint8 steps;   /* the run's steps, less one */
    guint8 failure; /* failures per 1000 node-days: failure^2 x 100 */
    guint8 restart; /* seconds of a restart, less one; 0: the cluster's */
    guint8 seed;
    guint8 slow_gpu;    /* the what-if's slow rank, modulo the plan's GPUs */
    guint8 slow_factor; /* it computes 1 + slow_factor / 8 times slower */
    guint8 jitter;      /* sigma x 256 */
    guint8 sweep;       /* % 3: top - 1; / 3 % 4: rank_by; / 12 % 3: shard 1/1, 1/2, 2/2 */
    guint8 price;       /* a GPU-hour's */
} Choices;
G_STATIC_ASSERT(sizeof(Choices) == 13); /* read by memcpy: no padding */

enum {
    FLAG_ASYNC = 1 << 0,      /* asynchronous checkpoints */
    FLAG_BEST = 1 << 1,       /* search the best interval (the slowest part of a run) */
    FLAG_HOT_SPARES = 1 << 2, /* ... with FLAG_SPARES_SET: hot spares, or none */
    FLAG_SPARES_SET = 1 << 3, /* else the cluster's */
    FLAG_WHATIF = 1 << 4,     /* replay the step under the what-if */
    FLAG_EXHAUSTIVE = 1 << 5, /* sweep: no pruning */
    FLAG_TWO_SIZES = 1 << 6,  /* sweep the cluster at one node too (--nodes N,1) */
    FLAG_CSV = 1 << 7         /* sweep: every row's CSV (-o) */
};

static char *tiny_gpt, *a100; /* the defaults' shipped files */
static volatile gint never;   /* the sweep's stop flag, never set */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    tiny_gpt = shipped_path("models/tiny-gpt.json");
    a100 = shipped_path("topologies/dgx-a100-80gb.json");
    if (!g_file_test(tiny_gpt, G_FILE_TEST_IS_REGULAR) || !g_file_test(a100, G_FILE_TEST_IS_REGULAR))
        abort();
    return 0;
}

/* The input cut into its parts (a missing one empty). */
static void split_parts(const uint8_t *data, size_t size, GBytes *parts[PARTS])
{
    size_t at = 0;
    for (int p = 0; p < PARTS; p++) {
        const uint8_t *start = at < size ? data + at : NULL;
        const uint8_t *nul = start && p < PART_CHOICES ? memchr(start, 0, size - at) : NULL;
        size_t len = !start ? 0 : nul ? (size_t)(nul - start) : size - at;
        parts[p] = g_bytes_new(start, len);
        at += len + 1;
    }
}

static Choices choices_of(GBytes *part)
{
    Choices c = {0};
    gsize n;
    const guint8 *bytes = g_bytes_get_data(part, &n);
    if (n)
        memcpy(&c, bytes, MIN(n, sizeof c));
    return c;
}

/* The part's file, or `fallback` when the part is empty. */
static const char *part_path(GBytes *part, const char *fallback)
{
    gsize n;
    const void *bytes = g_bytes_get_data(part, &n);
    return n ? fuzz_file_set(bytes, n) : fallback;
}

/* The cluster, at most MAX_GPUS of it. */
static ClusterSpec *load_cluster(GBytes *part, GError **error)
{
    const char *path = part_path(part, a100);
    ClusterSpec *cluster = cluster_spec_load(path, 0, error);
    if (!cluster || cluster_spec_gpus(cluster) <= MAX_GPUS)
        return cluster;
    int nodes = MAX_GPUS / cluster->gpus_per_node;
    cluster_spec_free(cluster);
    return nodes ? cluster_spec_load(path, nodes, error) : NULL;
}

/* The report of the replayed step, rendered as the choices say. */
static void render(const Report *rep, const ModelSpec *model, const ClusterSpec *cluster,
                   const PlanSpec *plan, const Choices *c)
{
    ReportFormat format = (ReportFormat)(c->render % 3);
    int mode = c->render / 3 % 3;
    char *text;
    if (mode == 2) {
        Breakdown b;
        Step step = step_of(model, cluster, plan);
        breakdown_compute(&step, rep->metrics.critical_stage, &b);
        text = report_breakdown_render(rep, &b, format);
    } else {
        text = report_render(rep, format, TRUE);
    }
    g_free(text);
    if (mode == 1)
        g_free(report_explain(rep));
}

/* The what-if of the choices: a slow GPU if slow_factor, jitter if jitter. */
static WhatIf *whatif_of(const Choices *c, long long gpus, GError **error)
{
    g_autofree char *slow = g_strdup_printf("%lld:%g", c->slow_gpu % gpus, 1 + c->slow_factor / 8.0);
    g_autofree char *sigma = g_strdup_printf("%g", c->jitter / 256.0);
    g_autofree char *seed = g_strdup_printf("%d", c->seed);
    char *slow_gpus[] = {slow, NULL};
    g_autoptr(WhatIf) w = whatif_new();
    if (!whatif_parse(w, c->slow_factor ? slow_gpus : NULL, NULL, c->jitter ? sigma : NULL,
                      c->jitter ? seed : NULL, error))
        return NULL;
    return g_steal_pointer(&w);
}

/* The step replayed under the choices' what-if. */
static void replay_whatif(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                          const Choices *c, GError **error)
{
    g_autoptr(WhatIf) w = whatif_of(c, plan_spec_gpus(plan), error);
    Report rep;
    if (w && whatif_check(w, cluster, (int)plan_spec_gpus(plan), error) &&
        simulate_run_whatif(model, cluster, plan, w, NULL, FALSE, &rep, error)) {
        g_free(report_render(&rep, FORMAT_JSON, TRUE));
        report_clear(&rep);
    }
}

static RunChoice run_choice(const Choices *c)
{
    RunChoice run;
    runplan_choice_init(&run);
    run.trials = 1 + c->trials % 4;
    run.seed = c->seed;
    run.every_steps = c->flags & FLAG_BEST ? c->every : 1 + c->every;
    run.async = (c->flags & FLAG_ASYNC) != 0;
    run.failures_per_1000_node_days = c->failure * c->failure * 100.0;
    run.restart_s = c->restart ? c->restart - 1 : -1;
    run.hot_spares = c->flags & FLAG_SPARES_SET ? (c->flags & FLAG_HOT_SPARES) != 0 : -1;
    return run;
}

/* A bound of the failures and restarts the run's trials simulate (each
 * trial stops past RUN_MAX_SLOWDOWN times its failure-free time, which
 * checkpoints after every step bound): to skip the runs too long to fuzz
 * quickly. */
static double run_events(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                         double step_s, double steps, const RunChoice *run)
{
    Checkpoint ck;
    Step step = step_of(model, cluster, plan);
    checkpoint_of_plan(&ck, &step);
    double nodes = ceil((double)plan_spec_gpus(plan) / cluster->gpus_per_node);
    double rate_per_s = run->failures_per_1000_node_days / 24000 * nodes / 3600;
    double clean_s = steps * (step_s + ck.save_s + ck.snapshot_s) + ck.save_s;
    return run->trials * (1 + rate_per_s * RUN_MAX_SLOWDOWN * clean_s);
}

/* The whole run of 1 + c->steps steps, each of step_s as replayed. */
static void run_plan(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                     double step_s, const Choices *c, GError **error)
{
    RunChoice run = run_choice(c);
    double steps = 1 + c->steps;
    double tokens = steps * plan->global_batch_size * model->seq_length;
    RunPlan rp;
    Step step = step_of(model, cluster, plan);
    if (tokens <= TRAINING_MAX_TOKENS &&
        run_events(model, cluster, plan, step_s, steps, &run) <= MAX_RUN_EVENTS)
        runplan_compute(&step, step_s, tokens, &run, (c->flags & FLAG_BEST) != 0, &rp, error);
}

/* Whether the plan of one combination of `grid` (`combination`, the last
 * axis fastest) on `cluster` resolves to a step of at most MAX_TASKS, or
 * not at all: one the sweep replays quickly. */
static gboolean combination_small(const ModelSpec *model, const ClusterSpec *cluster,
                                  const PlanSpec *base, const PlanGrid *grid, gint64 combination)
{
    g_autoptr(PlanSpec) plan = plan_spec_copy(base);
    for (guint a = grid->axes->len; a-- > 0;) {
        const GridAxis *axis = &g_array_index(grid->axes, GridAxis, a);
        plan_field_put(plan, axis->field,
                       g_array_index(axis->values, int, combination % axis->values->len), "grid");
        combination /= axis->values->len;
    }
    GError *error = NULL;
    Report rep;
    gboolean resolves = strategy_resolve(plan, model, cluster, &error);
    gboolean small =
        !resolves || simulate_run_within(model, cluster, plan, MAX_TASKS, &rep, &error);
    if (resolves && small)
        report_clear(&rep);
    fuzz_check_error(&error, 0);
    return small;
}

/* Whether every plan of the sweep of `grid` over `base` on `clusters` is
 * small (combination_small). */
static gboolean sweep_small(const ModelSpec *model, GPtrArray *clusters, const PlanSpec *base,
                            const PlanGrid *grid)
{
    gint64 n = plan_grid_size(grid);
    if (n < 1 || n > MAX_COMBINATIONS)
        return FALSE;
    for (guint k = 0; k < clusters->len; k++)
        for (gint64 i = 0; i < n; i++)
            if (!combination_small(model, g_ptr_array_index(clusters, k), base, grid, i))
                return FALSE;
    return TRUE;
}

/* The best rows of a sweep, their summaries and plans, and the winner's
 * gains. */
static void sweep_read(const SweepSpec *spec, const SweepResult *r)
{
    guint best[3];
    int n = sweep_best(r, spec->top, best);
    for (int i = 0; i < n; i++) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, best[i]);
        g_free(sweep_summary(spec, row));
        plan_spec_free(sweep_plan(spec, row));
    }
    g_autofree SweepAxisGain *gains =
        g_new(SweepAxisGain, MAX(spec->grid->axes->len, (guint)spec->n_clusters));
    if (n > 0) {
        sweep_axis_gains(spec, r, best[0], gains);
        sweep_cluster_bests(spec, r, best[0], gains);
    }
    GArray *near[3] = {NULL};
    int groups = sweep_best_distinct(spec, r, spec->top, best, near);
    for (int i = 0; i < groups; i++)
        g_array_free(near[i], TRUE);
    g_free(sweep_csv(r, spec->csv)); /* every row has its CSV only with spec->csv */
}

/* The sweep of the grid file in `part` over `base` on the cluster (and
 * on one node of it, with FLAG_TWO_SIZES). */
static void sweep(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *base,
                  GBytes *part, const Choices *c, GError **error)
{
    g_autoptr(PlanGrid) grid = plan_grid_new();
    if (!g_bytes_get_size(part) || !plan_grid_load(grid, part_path(part, NULL), error))
        return;
    g_autoptr(GPtrArray) clusters = g_ptr_array_new_with_free_func((GDestroyNotify)cluster_spec_free);
    g_ptr_array_add(clusters, cluster_spec_copy(cluster));
    if (c->flags & FLAG_TWO_SIZES && cluster->nodes > 1) {
        ClusterSpec *one = cluster_spec_copy(cluster);
        one->nodes = 1;
        g_ptr_array_add(clusters, one);
    }
    for (guint i = 0; i < clusters->len; i++) /* the price each cluster's run costs */
        ((ClusterSpec *)g_ptr_array_index(clusters, i))->gpu_hour_price = c->price;
    if (!sweep_small(model, clusters, base, grid))
        return;
    RunChoice run = run_choice(c);
    run.failures_per_1000_node_days = 0; /* a run per plan: no failures to simulate */
    SweepRank rank_by = (SweepRank)(c->sweep / 3 % 4);
    int shard = c->sweep / 12 % 3;
    SweepSpec spec = {.model = model,
                      .cluster = cluster,
                      .clusters = (const ClusterSpec *const *)clusters->pdata,
                      .n_clusters = (int)clusters->len,
                      .base = base,
                      .grid = grid,
                      .threads = 1,
                      .stop = &never,
                      .shard = shard == 2 ? 2 : 1,
                      .shards = shard ? 2 : 1,
                      .top = 1 + c->sweep % 3,
                      .exhaustive = (c->flags & FLAG_EXHAUSTIVE) != 0,
                      .tokens = rank_by == SWEEP_RANK_TOKENS_PER_S ? 0 : 1e9,
                      .rank_by = rank_by,
                      .run = &run,
                      .csv = (c->flags & FLAG_CSV) != 0};
    g_autoptr(SweepResult) r = sweep_run(&spec, error);
    if (r)
        sweep_read(&spec, r);
}

/* The plan simulated, reported, under a what-if and run. */
static void simulate(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                     const Choices *c, GError **error)
{
    Report rep;
    if (!simulate_run_within(model, cluster, plan, MAX_TASKS, &rep, error))
        return;
    double step_s = rep.metrics.step_time_s;
    training_of_step(&rep.training, 1e12, c->price, model, plan, step_s);
    Step step = step_of(model, cluster, plan);
    diagnosis_compute(&rep.diagnosis, &rep.metrics, &step);
    render(&rep, model, cluster, plan, c);
    gboolean whatif_small = rep.metrics.events * (double)plan_spec_gpus(plan) <= MAX_WHATIF_EVENTS;
    report_clear(&rep);
    if (c->flags & FLAG_WHATIF && whatif_small)
        replay_whatif(model, cluster, plan, c, error);
    if (!*error)
        run_plan(model, cluster, plan, step_s, c, error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GBytes *parts[PARTS];
    split_parts(data, size, parts);
    Choices c = choices_of(parts[PART_CHOICES]);
    GError *error = NULL;
    g_autoptr(ModelSpec) model = model_spec_load(part_path(parts[PART_MODEL], tiny_gpt), &error);
    g_autoptr(ClusterSpec) cluster = model ? load_cluster(parts[PART_CLUSTER], &error) : NULL;
    g_autoptr(PlanSpec) base = plan_spec_new();
    gboolean loaded = cluster && (!g_bytes_get_size(parts[PART_PLAN]) ||
                                  plan_spec_load(base, part_path(parts[PART_PLAN], NULL), &error));
    g_autoptr(PlanSpec) plan = loaded ? plan_spec_copy(base) : NULL;
    if (plan && strategy_resolve(plan, model, cluster, &error))
        simulate(model, cluster, plan, &c, &error);
    fuzz_check_error(&error, 0);
    if (plan)
        sweep(model, cluster, base, parts[PART_GRID], &c, &error);
    fuzz_check_error(&error, 0);
    for (int p = 0; p < PARTS; p++)
        g_bytes_unref(parts[p]);
    return model && cluster ? 0 : -1;
}
