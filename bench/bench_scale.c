/* bench_scale.c: how fast one step simulates at scale, symmetry-reduced and
 * in full.
 *
 * Three steps, each replayed REPEATS times (default 5) with the symmetry
 * reduction (one rank per orbit of the tp and dp shifts) and, when it has
 * at most FULL_GPUS GPUs (default 16,384), once at full fidelity (every
 * GPU), whose step time must be the same (or, when that step has more
 * tasks than plansim holds, EMIT_MAX_TASKS, the refusal):
 *   - GPT-3 175B on 1,024 A100s (128 DGX nodes): tp 8, pp 8, dp 16,
 *     micro-batch 1, global batch 1,536, ZeRO-1, sequence parallelism,
 *     selective recomputation;
 *   - Llama 3 405B on 16,384 H100s (2,048 DGX nodes): tp 8, pp 16, dp 128,
 *     global batch 2,048, sequence parallelism, ZeRO-1, the 126 layers as
 *     7 + 14 x 8 + 7;
 *   - the tiny GPT on 2^20 A100s (131,072 nodes): dp 2^20, the
 *     hierarchical all-reduce forced (auto picks NCCL's tree there);
 *   - NCCL's double binary tree, whose roots break the dp shift, kept in
 *     cells around them (net_marks): Llama 3 70B on 4,000 H100s (500 DGX
 *     nodes, tp 8, pp 4, dp 125, global batch 1,000, sequence
 *     parallelism, the tree forced: auto picks rings there), and Llama 3 405B on 100,000 H100s
 * (12,500 DGX nodes, tp 8, pp 4, dp 3,125, global batch 12,500, no ZeRO: the tree's all-reduce,
 * where ZeRO-1's rings would keep every shift);
 *   - what-ifs (app/whatif.h), replayed in the cells around what they slow
 *     (symmetry_new_cells): Llama 3 70B on 2,048 H100s (256 DGX nodes, tp
 *     8, pp 4, dp 64, global batch 1,024, sequence parallelism) with GPU 5
 *     1.2 times slower, and with one NIC 4 times slower; GPT-3 175B on
 *     131,072 A100s (16,384 nodes, tp 8, pp 8, dp 2,048, global batch
 *     2,048, ZeRO-1, sequence parallelism, selective recomputation) with
 *     GPU 5 1.2 times slower. Each also times the clean step, and prints
 *     the what-if's median over the clean one's.
 * Prints the median wall seconds, the peak RSS of the step's reduced runs
 * (on Linux; elsewhere the process's so far), the simulated ranks and
 * events, and the full replay's figures. Figures, not pass/fail:
 * `make bench`.
 *
 *   bench/bench_scale [REPEATS [FULL_GPUS [CASE]]]
 * CASE: run only the cases whose name contains it ("2^20"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/simulate.h"
#include "app/whatif.h"
#include "bench.h"

typedef struct {
    const char *name, *model, *cluster;
    int nodes, tp, pp, dp, micro_batch, batch, zero;
    gboolean sp;
    Recompute recompute;
    const char *layers; /* layers_per_stage, or NULL */
    CollAlgorithm algorithm;
    const char *slow_gpu, *slow_link; /* what-ifs, as the flags take them, or NULL */
} Case;

static const Case cases[] = {
    {"gpt3-175b x 1024 A100", "gpt3-175b.json", "dgx-a100-80gb.json", 128, 8, 8, 16, 1, 1536, 1,
     TRUE, RECOMPUTE_SELECTIVE, NULL, ALGORITHM_AUTO, NULL, NULL},
    {"llama3-405b x 16384 H100", "llama3-405b.json", "dgx-h100.json", 2048, 8, 16, 128, 1, 2048, 1,
     TRUE, RECOMPUTE_NONE, "7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7", ALGORITHM_AUTO, NULL, NULL},
    {"tiny-gpt x 2^20 A100", "tiny-gpt.json", "dgx-a100-80gb.json", 131072, 1, 1, 1048576, 1,
     1048576, 0, FALSE, RECOMPUTE_NONE, NULL, ALGORITHM_HIERARCHICAL, NULL, NULL},
    {"llama3-70b x 4000 H100, tree", "llama3-70b.json", "dgx-h100.json", 500, 8, 4, 125, 1, 1000, 0,
     TRUE, RECOMPUTE_NONE, NULL, ALGORITHM_TREE, NULL, NULL},
    {"llama3-405b x 100000 H100, tree", "llama3-405b.json", "dgx-h100.json", 12500, 8, 4, 3125, 1,
     12500, 0, FALSE, RECOMPUTE_NONE, NULL, ALGORITHM_AUTO, NULL, NULL},
    {"llama3-70b x 2048 H100, slow gpu", "llama3-70b.json", "dgx-h100.json", 256, 8, 4, 64, 1, 1024,
     0, TRUE, RECOMPUTE_NONE, NULL, ALGORITHM_AUTO, "5:1.2", NULL},
    {"llama3-70b x 2048 H100, slow nic", "llama3-70b.json", "dgx-h100.json", 256, 8, 4, 64, 1, 1024,
     0, TRUE, RECOMPUTE_NONE, NULL, ALGORITHM_AUTO, NULL, "node 3 nic 2:4"},
    {"gpt3-175b x 131072 A100, slow gpu", "gpt3-175b.json", "dgx-a100-80gb.json", 16384, 8, 8, 2048,
     1, 2048, 1, TRUE, RECOMPUTE_SELECTIVE, NULL, ALGORITHM_AUTO, "5:1.2", NULL},
};

/* Simulates `plan` once, under `w` (NULL: none); wall seconds, and the
 * report in *rep; -1 with *error set when plansim refuses the step. */
static double run_once(const ModelSpec *m, const ClusterSpec *c, const PlanSpec *plan,
                       const WhatIf *w, Report *rep, GError **error)
{
    gint64 start = g_get_monotonic_time();
    if (!simulate_run_whatif(m, c, plan, w, NULL, FALSE, rep, error))
        return -1;
    rep->whatif = NULL; /* w's text, which outlives no report here */
    return (g_get_monotonic_time() - start) / 1e6;
}

/* The median of `repeats` runs of `plan` under `w`, the last report in
 * *rep; exits on a refusal. */
static double median_s(const Case *k, const ModelSpec *m, const ClusterSpec *c,
                       const PlanSpec *plan, const WhatIf *w, int repeats, Report *rep)
{
    g_autofree double *wall = g_new(double, repeats);
    GError *error = NULL;
    for (int i = 0; i < repeats; i++) {
        wall[i] = run_once(m, c, plan, w, rep, &error);
        if (wall[i] < 0) {
            fprintf(stderr, "bench_scale: %s: %s\n", k->name, error->message);
            exit(1);
        }
        if (i + 1 < repeats)
            report_clear(rep);
    }
    bench_sort(wall, repeats);
    return wall[repeats / 2];
}

static void bench(const Case *k, int repeats, int full_gpus)
{
    g_autofree char *model_path = bench_shipped("models", k->model);
    g_autofree char *cluster_path = bench_shipped("topologies", k->cluster);
    GError *error = NULL;
    g_autoptr(ModelSpec) m = model_spec_load(model_path, &error);
    g_autoptr(ClusterSpec) c = m ? cluster_spec_load(cluster_path, k->nodes, &error) : NULL;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    if (c) {
        plan->tp = k->tp;
        plan->pp = k->pp;
        plan->dp = k->dp;
        plan->micro_batch_size = k->micro_batch;
        plan->global_batch_size = k->batch;
        plan->zero_stage = k->zero;
        plan->sequence_parallel = k->sp;
        plan->recompute = k->recompute;
        plan->collective_algorithm = k->algorithm;
    }
    char *gpus[] = {(char *)k->slow_gpu, NULL}, *links[] = {(char *)k->slow_link, NULL};
    g_autoptr(WhatIf) w = whatif_new();
    if (!c ||
        (k->layers && !plan_spec_set(plan, PLAN_LAYERS_PER_STAGE, k->layers, "bench", &error)) ||
        !plan_spec_resolve(plan, m, c, &error) ||
        !whatif_parse(w, k->slow_gpu ? gpus : NULL, k->slow_link ? links : NULL, NULL, NULL,
                      &error)) {
        fprintf(stderr, "bench_scale: %s: %s\n", k->name, error->message);
        exit(2);
    }
    Report rep;
    bench_reset_peak_rss(); /* not the steps' before */
    double median = median_s(k, m, c, plan, w, repeats, &rep);
    printf("%-26s reduced (%s): %d ranks, %8" G_GUINT64_FORMAT
           " events, median %.4f s of %d, peak RSS %.0f MB, step %.6g s\n",
           k->name, rep.metrics.symmetry, rep.metrics.simulated_ranks, rep.metrics.events, median,
           repeats, bench_peak_rss_mib(), rep.metrics.step_time_s);
    double reduced_step = rep.metrics.step_time_s;
    report_clear(&rep);
    if (whatif_active(w)) {
        double clean = median_s(k, m, c, plan, NULL, repeats, &rep);
        printf("%-26s clean:             %d ranks, median %.4f s of %d: the what-if %.1fx\n",
               k->name, rep.metrics.simulated_ranks, clean, repeats, median / clean);
        report_clear(&rep);
    }
    if ((long long)k->tp * k->pp * k->dp > full_gpus)
        return;
    plan->full_fidelity = TRUE;
    double full_s = run_once(m, c, plan, w, &rep, &error);
    if (full_s < 0) { /* too big to hold: say so, and go on */
        printf("%-26s full:              refused: %s\n", k->name, error->message);
        g_clear_error(&error);
        return;
    }
    printf("%-26s full:              %d ranks, %8" G_GUINT64_FORMAT
           " events, %.3f s (%.0fx the reduced), step %.6g s (%s)\n",
           k->name, rep.metrics.simulated_ranks, rep.metrics.events, full_s, full_s / median,
           rep.metrics.step_time_s,
           fabs(rep.metrics.step_time_s - reduced_step) <= 1e-9 * reduced_step ? "the same"
                                                                               : "DIFFERENT");
    report_clear(&rep);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? MAX(1, atoi(argv[1])) : 5;
    int full_gpus = argc > 2 ? atoi(argv[2]) : 16384;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        if (argc > 3 && !strstr(cases[i].name, argv[3]))
            continue;
        bench(&cases[i], repeats, full_gpus);
        fflush(stdout);
    }
    return 0;
}
