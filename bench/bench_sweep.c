/* bench_sweep.c: how fast a sweep finds the best plans of a real space.
 *
 * Each case is a sweep of the 10 best plans on every core, run REPEATS
 * times (the median wall time printed), and, for the small ones unless
 * EXHAUSTIVE is 0, once exhaustively (every valid plan replayed) to say
 * whether the 10 best rows are the same:
 *   - gpt3-66: GPT-3 175B on 1,024 A100s, global batch 1,536, ZeRO-1,
 *     sequence parallelism, over bench/grid-gpt3-66.json (66 valid plans);
 *   - llama2-70b: Llama 2 70B on 1,024 A100s, global batch 1,024, the
 *     whole default space;
 *   - llama3-405b: Llama 3 405B on 16,384 H100s (2,048 nodes), global
 *     batch 2,048, the whole default space; its winner against Meta's
 *     plan (tp 8, pp 16, dp 128, interleaved with 4 chunks a stage,
 *     ZeRO-2-like sharding, sequence parallelism; Dubey et al. 2024,
 *     table 4), replayed alone;
 *   - mixtral-8x7b on 64 H100s and deepseek-v3 (the shipped Hugging Face
 *     config, 4,096 tokens) on one GB200 NVL72 rack (72 GPUs, issue 36's
 *     sweep): the default space, whether the winner uses expert
 *     parallelism (DeepSeek-V3's default space on 2,048 H100s, since the
 *     sweep's MoE axes, is past the walk's cap and refused: space.h);
 *   - llama3-8b-128k: Llama 3 8B at 131,072 tokens on 64 H100s, global
 *     batch 64: whether the winner uses context parallelism.
 * Prints the combinations, the plans per status, the median wall time and
 * the winner. Figures, not pass/fail: `make bench`.
 *
 *   bench/bench_sweep [REPEATS [EXHAUSTIVE [CASE]]]  (CASE: a name's part) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/simulate.h"
#include "app/sweep.h"
#include "bench.h"
#include "cost/transformer.h"
#include "strategy/strategy.h"

typedef struct {
    const char *name, *model, *cluster;
    int nodes, batch, seq_length;
    const char *grid; /* a grid file of bench/, over the default space; NULL: none */
    gboolean pinned;  /* ZeRO-1 and sequence parallelism fixed (the 66-plan grid's) */
    gboolean small;   /* compared with the exhaustive sweep */
} Case;

static const Case cases[] = {
    {"gpt3-66", "models/gpt3-175b.json", "dgx-a100-80gb.json", 128, 1536, 0, "grid-gpt3-66.json",
     TRUE, TRUE},
    {"llama2-70b", "models/llama2-70b.json", "dgx-a100-80gb.json", 128, 1024, 0, NULL, FALSE,
     FALSE},
    {"llama3-405b", "models/llama3-405b.json", "dgx-h100.json", 2048, 2048, 0, NULL, FALSE, FALSE},
    {"mixtral-8x7b", "models/mixtral-8x7b.json", "dgx-h100.json", 8, 1024, 0, NULL, FALSE, FALSE},
    {"deepseek-v3", "models/hf/deepseek-v3.json", "gb200-nvl72.json", 1, 4096, 4096, NULL, FALSE,
     FALSE},
    {"llama3-8b-128k", "models/llama3-8b.json", "dgx-h100.json", 8, 64, 131072, NULL, FALSE, FALSE},
};

/* The K best rows of a result, concatenated. */
static char *best_rows(const SweepResult *r, int k)
{
    g_autofree guint *best = g_new(guint, k);
    int n = sweep_best(r, k, best);
    GString *out = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append(out, g_array_index(r->rows, SweepRow, best[i]).csv);
    return g_string_free(out, FALSE);
}

static SweepResult *run(SweepSpec *spec, double *wall)
{
    GError *error = NULL;
    gint64 started = g_get_monotonic_time();
    SweepResult *r = sweep_run(spec, &error);
    *wall = (g_get_monotonic_time() - started) / 1e6;
    if (!r) {
        fprintf(stderr, "bench_sweep: %s\n", error->message);
        exit(2);
    }
    return r;
}

static void fail(GError *error)
{
    fprintf(stderr, "bench_sweep: %s\n", error->message);
    exit(2);
}

/* Meta's plan for Llama 3 405B (see above), replayed: its tokens/s. */
static double meta_plan(const ModelSpec *model, const ClusterSpec *cluster, int batch)
{
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = 8;
    plan->pp = 16;
    plan->schedule = SCHEDULE_INTERLEAVED;
    plan->virtual_stages = 4;
    plan->zero_stage = 2;
    plan->sequence_parallel = TRUE;
    plan->global_batch_size = batch;
    GError *error = NULL;
    Report rep;
    if (!strategy_resolve(plan, model, cluster, &error) ||
        !simulate_run(model, cluster, plan, &rep, &error))
        fail(error);
    double tokens = rep.metrics.fits ? rep.metrics.tokens_per_s : 0;
    report_clear(&rep);
    return tokens;
}

static void bench(const Case *c, int repeats, gboolean exhaustive)
{
    g_autofree char *model_path = bench_shipped(".", c->model);
    g_autofree char *cluster_path = bench_shipped("topologies", c->cluster);
    GError *error = NULL;
    g_autoptr(ModelSpec) model = model_spec_load(model_path, &error);
    g_autoptr(ClusterSpec) cluster =
        model ? cluster_spec_load(cluster_path, c->nodes, &error) : NULL;
    if (!cluster)
        fail(error);
    if (c->seq_length) {
        g_autofree char *seq = g_strdup_printf("%d", c->seq_length);
        if (!model_spec_set_seq_length(model, seq, "seq_length", &error))
            fail(error);
    }
    g_autoptr(PlanSpec) base = plan_spec_new();
    base->global_batch_size = c->batch;
    g_autoptr(PlanGrid) grid = plan_grid_default(model, cluster);
    if (c->pinned) {
        base->zero_stage = 1;
        base->sequence_parallel = TRUE;
        plan_grid_remove(grid, PLAN_ZERO_STAGE);
        plan_grid_remove(grid, PLAN_SEQUENCE_PARALLEL);
    }
    g_autofree char *grid_path = c->grid ? bench_shipped("bench", c->grid) : NULL;
    if (grid_path && !plan_grid_load(grid, grid_path, &error))
        fail(error);
    volatile gint stop = 0;
    int threads = (int)g_get_num_processors();
    SweepSpec spec = {.model = model,
                      .cluster = cluster,
                      .base = base,
                      .grid = grid,
                      .threads = threads,
                      .shard = 1,
                      .shards = 1,
                      .stop = &stop,
                      .top = 10,
                      .csv = c->small && exhaustive};
    g_autofree double *wall = g_new(double, repeats);
    SweepResult *r = NULL;
    for (int i = 0; i < repeats; i++) {
        sweep_result_free(r);
        r = run(&spec, &wall[i]);
    }
    bench_sort(wall, repeats);
    gint64 valid = r->combinations - r->count[REPORT_INVALID];
    printf("%s: %s on %d GPUs, %" G_GINT64_FORMAT " combinations, %" G_GINT64_FORMAT
           " valid, %d threads\n",
           c->name, model->name, cluster_spec_gpus(cluster), r->combinations, valid, threads);
    printf("  median %.3f s of %d (min %.3f, max %.3f): %" G_GINT64_FORMAT
           " simulated (%" G_GINT64_FORMAT " replayed), %" G_GINT64_FORMAT
           " pruned, %" G_GINT64_FORMAT " ruled out by memory\n",
           wall[repeats / 2], repeats, wall[0], wall[repeats - 1], r->count[REPORT_SIMULATED],
           r->replayed, r->count[REPORT_PRUNED], r->count[REPORT_DOES_NOT_FIT]);
    guint best;
    if (sweep_best(r, 1, &best) == 1) {
        const SweepRow *row = &g_array_index(r->rows, SweepRow, best);
        g_autoptr(PlanSpec) plan = sweep_plan(&spec, row);
        g_autofree char *summary = sweep_summary(&spec, row);
        printf("  winner %.4g tokens/s, MFU %.1f %%: %s\n", row->tokens_per_s, 100 * row->mfu,
               summary);
        if (strcmp(c->name, "llama3-405b") == 0) {
            double meta = meta_plan(model, cluster, c->batch);
            printf("  Meta's plan %.4g tokens/s: the winner %.2fx\n", meta,
                   row->tokens_per_s / meta);
        }
        if (transformer_moe(model))
            printf("  expert parallelism in the winner: %s (ep %d)\n", plan->ep > 1 ? "yes" : "no",
                   plan->ep);
        if (c->seq_length > 65536)
            printf("  context parallelism in the winner: %s (cp %d)\n", plan->cp > 1 ? "yes" : "no",
                   plan->cp);
    }
    if (exhaustive && c->small) {
        spec.exhaustive = TRUE;
        double full_s;
        g_autoptr(SweepResult) all = run(&spec, &full_s);
        g_autofree char *mine = best_rows(r, 10), *theirs = best_rows(all, 10);
        printf("  exhaustive %.3f s: %" G_GINT64_FORMAT
               " replayed (%.1fx the pruned search); the 10 best rows are %s\n",
               full_s, all->count[REPORT_SIMULATED], full_s / wall[repeats / 2],
               strcmp(mine, theirs) == 0 ? "the same" : "DIFFERENT");
    }
    sweep_result_free(r);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? MAX(1, atoi(argv[1])) : 3;
    gboolean exhaustive = argc > 2 ? atoi(argv[2]) != 0 : TRUE;
    const char *only = argc > 3 ? argv[3] : NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        if (!only || strstr(cases[i].name, only) != NULL)
            bench(&cases[i], repeats, exhaustive);
    return 0;
}
