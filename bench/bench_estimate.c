/* bench_estimate.c: what one estimate costs in process (issue 39).
 *
 * One step simulated as `plansim simulate` does, REPEATS times (default
 * 21) in one process, no start-up: the median wall seconds, the events
 * the replay processed, those of a steady state it skipped (engine.h) and
 * the flows it ran without the fair share (net.h's routes apart); then the
 * same step replayed whole (simulate_run_whole, every period replayed,
 * every flow through the share), a third as many times: its median, and
 * how far apart the two steps are, relative. The
 * steps, with sequence parallelism where there is tensor parallelism, and
 * 1F1B unless named:
 *   - GPT-3 175B on 1,024 A100s (128 DGX nodes): tp 8, pp 8, dp 16,
 *     global batch 512 (32 micro-batches of 1 a rank), ZeRO-1, selective
 *     recomputation: the step, `plansim simulate`'s plan for it;
 *   - the same at 16 and at 1,024 micro-batches a rank (global batch 256
 *     and 16,384), and the ratio of the two;
 *   - Llama 3 405B on 16,384 H100s (2,048 DGX nodes): Meta's plan (Dubey
 *     et al. 2024, table 4: tp 8, pp 16, dp 128, interleaved over 4
 *     virtual stages, global batch 2,048), ZeRO-2;
 *   - DeepSeek-V3 (the shipped Hugging Face config) on 2,048 H800s (256
 *     DGX nodes) as DeepSeek trained it (arXiv 2412.19437, section 3.2:
 *     pp 16, ep 64, ZeRO-1 data parallelism), 4,096 sequences of 4,096
 *     tokens (32 micro-batches a rank; the config gives no training
 *     length), no tensor parallelism.
 * Figures, not pass/fail: `make bench`.
 *
 *   bench/bench_estimate [REPEATS [CASE]]
 * CASE: only the cases whose name contains it ("gpt3"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/simulate.h"
#include "bench.h"

typedef struct {
    const char *name, *model, *cluster;
    int nodes, tp, pp, dp, ep, virtual_stages, zero;
    gint64 batch;
    Schedule schedule;
    Recompute recompute;
} Case;

static const Case cases[] = {
    {"gpt3-175b x 1024 A100, 32 mb", "gpt3-175b.json", "dgx-a100-80gb.json", 128, 8, 8, 16, 1, 1, 1, 512,
     SCHEDULE_1F1B, RECOMPUTE_SELECTIVE},
    {"gpt3-175b x 1024 A100, 16 mb", "gpt3-175b.json", "dgx-a100-80gb.json", 128, 8, 8, 16, 1, 1, 1,
     256, SCHEDULE_1F1B, RECOMPUTE_SELECTIVE},
    {"gpt3-175b x 1024 A100, 1024 mb", "gpt3-175b.json", "dgx-a100-80gb.json", 128, 8, 8, 16, 1, 1,
     1, 16384, SCHEDULE_1F1B, RECOMPUTE_SELECTIVE},
    {"llama3-405b x 16384 H100", "llama3-405b.json", "dgx-h100.json", 2048, 8, 16, 128, 1, 4, 2,
     2048, SCHEDULE_INTERLEAVED, RECOMPUTE_NONE},
    {"deepseek-v3 x 2048 H800", "hf/deepseek-v3.json", "dgx-h800.json", 256, 1, 16, 128, 64, 1, 1,
     4096, SCHEDULE_1F1B, RECOMPUTE_NONE},
};

/* The median wall seconds of `repeats` estimates of `plan`, its steady
 * state skipped or (`whole`) not, the last report in *rep; exits on a
 * refusal. */
static double median_s(const Case *k, const ModelSpec *m, const ClusterSpec *c,
                       const PlanSpec *plan, int repeats, gboolean whole, Report *rep)
{
    g_autofree double *wall = g_new(double, repeats);
    for (int i = 0; i < repeats; i++) {
        GError *error = NULL;
        gint64 start = g_get_monotonic_time();
        if (!(whole ? simulate_run_whole(m, c, plan, rep, &error)
                    : simulate_run(m, c, plan, rep, &error))) {
            fprintf(stderr, "bench_estimate: %s: %s\n", k->name, error->message);
            exit(1);
        }
        wall[i] = (g_get_monotonic_time() - start) / 1e6;
        if (i + 1 < repeats)
            report_clear(rep);
    }
    bench_sort(wall, repeats);
    return wall[repeats / 2];
}

/* One case's row; its median in seconds. */
static double bench(const Case *k, int repeats)
{
    g_autoptr(ModelSpec) m = NULL;
    g_autoptr(ClusterSpec) c = NULL;
    bench_load_shipped("bench_estimate", k->model, k->cluster, k->nodes, &m, &c);
    GError *error = NULL;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = k->tp, plan->pp = k->pp, plan->dp = k->dp, plan->ep = k->ep;
    plan->virtual_stages = k->virtual_stages, plan->schedule = k->schedule;
    plan->zero_stage = k->zero, plan->global_batch_size = k->batch;
    plan->recompute = k->recompute, plan->sequence_parallel = k->tp > 1;
    if ((strstr(k->model, "hf/") && !model_spec_set_seq_length(m, "4096", "bench", &error)) ||
        !plan_spec_resolve(plan, m, c, &error)) {
        fprintf(stderr, "bench_estimate: %s: %s\n", k->name, error->message);
        exit(2);
    }
    Report rep, whole;
    double median = median_s(k, m, c, plan, repeats, FALSE, &rep);
    double replayed = median_s(k, m, c, plan, MAX(1, repeats / 3), TRUE, &whole);
    const Metrics *a = &rep.metrics;
    printf("%-32s %5d mb %9.5f s (whole %8.5f s) %9" G_GUINT64_FORMAT
           " events replayed %9" G_GUINT64_FORMAT " skipped %7" G_GUINT64_FORMAT
           " flows apart  step %.6f s (%.1e off whole)\n",
           k->name, rep.micro_batches, median, replayed, a->events - a->events_skipped,
           a->events_skipped, a->flows_apart, a->step_time_s,
           fabs(a->step_time_s - whole.metrics.step_time_s) / whole.metrics.step_time_s);
    report_clear(&rep);
    report_clear(&whole);
    return median;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? MAX(1, atoi(argv[1])) : 21;
    const char *only = argc > 2 ? argv[2] : NULL;
    printf("bench_estimate: one estimate in process, median of %d\n", repeats);
    double mb16 = 0, mb1024 = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        if (only && !strstr(cases[i].name, only))
            continue;
        double s = bench(&cases[i], repeats);
        if (g_str_has_suffix(cases[i].name, ", 16 mb"))
            mb16 = s;
        else if (g_str_has_suffix(cases[i].name, ", 1024 mb"))
            mb1024 = s;
    }
    if (mb16 > 0 && mb1024 > 0)
        printf("1024 micro-batches / 16: %.2f\n", mb1024 / mb16);
    return 0;
}
