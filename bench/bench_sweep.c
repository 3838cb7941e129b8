/* bench_sweep.c: how many plans a second a sweep simulates.
 *
 * The default grid of Llama 2 70B on 1,024 A100s (128 DGX nodes), global
 * batch 1,024 sequences: one hash-chosen shard of it (1/64 by default, a
 * fair sample of the whole), on every core. Prints the combinations, the
 * plans simulated and skipped, wall seconds, plans per second and the time
 * the whole grid would take. Figures, not pass/fail: `make bench`.
 *
 *   bench/bench_sweep [SHARDS] */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "app/sweep.h"

int main(int argc, char **argv)
{
    int shards = argc > 1 ? MAX(1, atoi(argv[1])) : 64;
    g_autofree char *model_path = bench_shipped("models", "llama2-70b.json");
    g_autofree char *cluster_path = bench_shipped("topologies", "dgx-a100-80gb.json");
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    bench_load("bench_sweep", model_path, cluster_path, &model, &cluster);
    GError *error = NULL;
    g_autoptr(PlanSpec) base = plan_spec_new();
    base->global_batch_size = 1024;
    g_autoptr(PlanGrid) grid = plan_grid_default(model, cluster);
    volatile gint stop = 0;
    int threads = (int)g_get_num_processors();
    SweepSpec spec = {model, cluster, base, grid, 1024, threads, 1, shards, FALSE, &stop};
    gint64 started = g_get_monotonic_time();
    g_autoptr(SweepResult) r = sweep_run(&spec, &error);
    double wall = (g_get_monotonic_time() - started) / 1e6;
    gint64 whole = plan_grid_size(grid);
    printf("bench_sweep: %s on 1024 GPUs, default grid of %" G_GINT64_FORMAT
           " combinations, shard 1/%d, %d threads\n",
           model->name, whole, shards, threads);
    printf("  combinations   %" G_GINT64_FORMAT "\n", r->combinations);
    printf("  simulated      %u\n", r->rows->len);
    printf("  skipped        %d\n", r->skipped);
    printf("  wall s         %.2f\n", wall);
    printf("  plans per s    %.3g simulated, %.3g combinations\n", r->rows->len / wall,
           r->combinations / wall);
    printf("  whole grid     about %.0f s at this rate\n", wall * whole / MAX(r->combinations, 1));
    return 0;
}
