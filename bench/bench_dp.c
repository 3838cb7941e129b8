/* bench_dp.c: how fast the engine replays a large data-parallel step.
 *
 * Simulates Llama 2 7B (or the model given) data-parallel on 1,024 GPUs
 * (128 DGX A100 nodes) with many micro-batches, every rank replayed (at
 * full fidelity: no symmetry reduction), several times, and prints events,
 * the median wall time, events per second and the peak resident memory.
 * Figures, not pass/fail: run it with `make bench`.
 *
 *   bench/bench_dp [MODEL_JSON [CLUSTER_JSON [REPEATS]]] */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "app/simulate.h"

int main(int argc, char **argv)
{
    g_autofree char *model_path =
        argc > 1 ? g_strdup(argv[1]) : bench_shipped("models", "llama2-7b.json");
    g_autofree char *cluster_path =
        argc > 2 ? g_strdup(argv[2]) : bench_shipped("topologies", "dgx-a100-80gb.json");
    int repeats = argc > 3 ? MAX(1, atoi(argv[3])) : 5;
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    bench_load("bench_dp", model_path, cluster_path, &model, &cluster);
    GError *error = NULL;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->micro_batch_size = 1;
    plan->global_batch_size = 1024 * 16; /* 16 micro-batches per rank */
    plan->full_fidelity = TRUE;          /* every rank replayed: the engine's load */
    if (!plan_spec_resolve(plan, model, cluster, &error)) {
        fprintf(stderr, "bench_dp: %s\n", error->message);
        return 2;
    }
    double *wall = g_new(double, MAX(repeats, 1));
    Report rep = {0};
    for (int i = 0; i < repeats; i++) {
        if (i)
            report_clear(&rep);
        if (!simulate_run(model, cluster, plan, &rep, &error)) {
            fprintf(stderr, "bench_dp: %s\n", error->message);
            return 2;
        }
        wall[i] = rep.sim_wall_s;
    }
    bench_sort(wall, repeats);
    double median = wall[repeats / 2];
    printf("bench_dp: %s, %d GPUs (dp %d), %d micro-batches, %d layers\n", model->name, rep.gpus,
           plan->dp, rep.micro_batches, model->layers);
    printf("  events            %" G_GUINT64_FORMAT "\n", rep.metrics.events);
    printf("  wall s (median)   %.3f  (min %.3f, max %.3f, %d runs)\n", median, wall[0],
           wall[repeats - 1], repeats);
    printf("  events per s      %.3g\n", rep.metrics.events / median);
    printf("  simulated step s  %.4f, MFU %.3f\n", rep.metrics.step_time_s, rep.metrics.mfu);
    printf("  peak RSS MiB      %.0f\n", bench_peak_rss_mib());
    g_free(wall);
    report_clear(&rep);
    return 0;
}
