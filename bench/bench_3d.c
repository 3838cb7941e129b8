/* bench_3d.c: the cost of modelling link contention, on a 3D plan.
 *
 * GPT-3 175B on 1,024 A100s (128 DGX nodes): 8-way tensor parallelism in
 * each node, 8 pipeline stages across nodes, 16-way data parallelism,
 * 1F1B, sequence parallelism, selective recomputation, ZeRO-1. The same
 * step is simulated with link contention (flows sharing NVLink ports, NICs
 * and the spine max-min fairly) and without (each collective alone, at its
 * algorithm's time), several times each; the benchmark prints events, the
 * median wall seconds, the ratio of the two and the simulated step times.
 * Figures, not pass/fail: `make bench`.
 *
 *   bench/bench_3d [REPEATS] */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "app/simulate.h"

/* Median wall seconds of `repeats` runs; the last run's report in *rep. */
static double median_run(const ModelSpec *m, const ClusterSpec *c, const PlanSpec *plan,
                         int repeats, Report *rep)
{
    double *wall = g_new(double, repeats);
    for (int i = 0; i < repeats; i++) {
        GError *error = NULL;
        if (i)
            report_clear(rep);
        if (!simulate_run(m, c, plan, rep, &error)) {
            fprintf(stderr, "bench_3d: %s\n", error->message);
            exit(2);
        }
        wall[i] = rep->sim_wall_s;
    }
    bench_sort(wall, repeats);
    double median = wall[repeats / 2];
    g_free(wall);
    return median;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? MAX(1, atoi(argv[1])) : 3;
    g_autofree char *model_path = bench_shipped("models", "gpt3-175b.json");
    g_autofree char *cluster_path = bench_shipped("topologies", "dgx-a100-80gb.json");
    g_autoptr(ModelSpec) model = NULL;
    g_autoptr(ClusterSpec) cluster = NULL;
    bench_load("bench_3d", model_path, cluster_path, &model, &cluster);
    GError *error = NULL;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = 8;
    plan->pp = 8;
    plan->dp = 16;
    plan->global_batch_size = 512; /* 32 micro-batches of 1 */
    plan->sequence_parallel = TRUE;
    plan->recompute = RECOMPUTE_SELECTIVE;
    plan->zero_stage = 1;
    if (!plan_spec_resolve(plan, model, cluster, &error)) {
        fprintf(stderr, "bench_3d: %s\n", error->message);
        return 2;
    }
    Report with = {0}, without = {0};
    double with_s = median_run(model, cluster, plan, repeats, &with);
    plan->link_contention = FALSE;
    double without_s = median_run(model, cluster, plan, repeats, &without);
    printf("bench_3d: %s, %d GPUs = tp %d x pp %d x dp %d, %d micro-batches, %d runs each\n",
           model->name, with.gpus, plan->tp, plan->pp, plan->dp, with.micro_batches, repeats);
    printf("  %-22s %12s %12s\n", "", "contention", "alone");
    printf("  %-22s %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT "\n", "events",
           with.metrics.events, without.metrics.events);
    printf("  %-22s %12.3f %12.3f\n", "wall s (median)", with_s, without_s);
    printf("  %-22s %12.3g %12.3g\n", "events per s", with.metrics.events / with_s,
           without.metrics.events / without_s);
    printf("  %-22s %12.4f %12.4f\n", "simulated step s", with.metrics.step_time_s,
           without.metrics.step_time_s);
    printf("  wall ratio contention / alone: %.2f\n", with_s / without_s);
    report_clear(&with);
    report_clear(&without);
    return 0;
}
