/* bench_sweep.c: how fast a sweep finds the best plans, pruned and
 * exhaustive.
 *
 * Two searches on 1,024 A100s (128 DGX nodes), each run REPEATS times with
 * branch and bound (--top 10) and once exhaustively (every valid plan
 * replayed), on every core:
 *   - GPT-3 175B, global batch 1,536, ZeRO-1, sequence parallelism, over
 *     bench/grid-gpt3-66.json (tp 2/4/8 x pp 4/8/16 x micro-batch 1/2 x
 *     recompute selective/full x 1F1B/interleaved: 66 valid plans);
 *   - Llama 2 70B, global batch 1,024, over the whole default grid.
 * Prints the combinations, the plans per status, the median wall seconds,
 * plans evaluated per second (every valid plan: replayed, pruned or ruled
 * out by the memory check) and whether the best plan and the 10 best rows
 * are the exhaustive search's. Figures, not pass/fail: `make bench`.
 *
 *   bench/bench_sweep [REPEATS [EXHAUSTIVE]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/sweep.h"
#include "bench.h"

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

static void bench(const char *name, const char *model_file, const char *grid_file, int batch,
                  int zero, gboolean sp, int repeats, gboolean exhaustive)
{
    g_autofree char *model_path = bench_shipped("models", model_file);
    g_autofree char *cluster_path = bench_shipped("topologies", "dgx-a100-80gb.json");
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    bench_load("bench_sweep", model_path, cluster_path, &model, &cluster);
    GError *error = NULL;
    g_autoptr(PlanSpec) base = plan_spec_new();
    base->global_batch_size = batch;
    g_autoptr(PlanGrid) grid = plan_grid_default(model, cluster);
    if (zero >= 0) {
        base->zero_stage = zero;
        base->sequence_parallel = sp;
        plan_grid_remove(grid, PLAN_ZERO_STAGE);
        plan_grid_remove(grid, PLAN_SEQUENCE_PARALLEL);
    }
    g_autofree char *grid_path = grid_file ? bench_shipped("bench", grid_file) : NULL;
    if (grid_path && !plan_grid_load(grid, grid_path, &error)) {
        fprintf(stderr, "bench_sweep: %s\n", error->message);
        exit(2);
    }
    volatile gint stop = 0;
    int threads = (int)g_get_num_processors();
    SweepSpec spec = {.model = model, .cluster = cluster, .base = base, .grid = grid,
                      .gpus = 1024, .threads = threads, .shard = 1, .shards = 1, .stop = &stop,
                      .top = 10};
    g_autofree double *wall = g_new(double, repeats);
    SweepResult *r = NULL;
    for (int i = 0; i < repeats; i++) {
        sweep_result_free(r);
        r = run(&spec, &wall[i]);
    }
    bench_sort(wall, repeats);
    int valid = r->count[REPORT_SIMULATED] + r->count[REPORT_PRUNED] + r->count[REPORT_DOES_NOT_FIT];
    double median = wall[repeats / 2];
    printf("%s: %" G_GINT64_FORMAT " combinations, %d valid, %d threads\n", name, r->combinations,
           valid, threads);
    printf("  pruned search   median %.3f s of %d: %d simulated (%" G_GINT64_FORMAT
           " replayed), %d pruned, %d ruled out by memory, %.0f valid plans/s\n",
           median, repeats, r->count[REPORT_SIMULATED], r->replayed, r->count[REPORT_PRUNED],
           r->count[REPORT_DOES_NOT_FIT], valid / median);
    if (exhaustive) {
        spec.exhaustive = TRUE;
        double full_s;
        g_autoptr(SweepResult) all = run(&spec, &full_s);
        g_autofree char *mine = best_rows(r, 10), *theirs = best_rows(all, 10);
        printf("  exhaustive      %.3f s: %d replayed (%.1fx the pruned search); the 10 best "
               "rows are %s\n",
               full_s, all->count[REPORT_SIMULATED], full_s / median,
               strcmp(mine, theirs) == 0 ? "the same" : "DIFFERENT");
    }
    sweep_result_free(r);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? MAX(1, atoi(argv[1])) : 3;
    gboolean exhaustive = argc > 2 ? atoi(argv[2]) != 0 : TRUE;
    bench("gpt3-175b, 66-plan grid", "gpt3-175b.json", "grid-gpt3-66.json", 1536, 1, TRUE, repeats,
          exhaustive);
    fflush(stdout);
    bench("llama2-70b, default grid", "llama2-70b.json", NULL, 1024, -1, FALSE, repeats,
          exhaustive);
    return 0;
}
