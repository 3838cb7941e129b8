/* bench_run.c: how fast a whole run simulates, and ETTR against cluster
 * size (issue 23).
 *
 * Llama 3 70B (tp 8, pp 4, ZeRO-1, SP, 2,048 sequences of 8,192 tokens a
 * step) for 15T tokens on dgx-h100 at 64 to 16,384 GPUs, the cluster's
 * default failure rates (Llama 3 405B's) and restarts, synchronous saves
 * at the best interval simulated, 100 trials: one row per size with the
 * step, the days without and with failures (P10, P50, P90), ETTR, the
 * failures and the interval. Then the time of 100 trials on one core,
 * alone (at the chosen interval) and with the interval's search, medians
 * of REPEATS (default 5), for Llama 3 405B on 16,384 GPUs (Meta's plan). */
#include <math.h>

#include "app/simulate.h"
#include "bench.h"
#include "metrics/runplan.h"
#include "strategy/strategy.h"

/* Llama 3 70B's plan, dp from the cluster. */
static PlanSpec *plan_70b(void)
{
    PlanSpec *plan = plan_spec_new();
    plan->tp = 8, plan->pp = 4, plan->zero_stage = 1, plan->sequence_parallel = TRUE;
    plan->global_batch_size = 2048;
    return plan;
}

/* Meta's plan for Llama 3 405B (Dubey et al. 2024, table 4). */
static PlanSpec *plan_405b(void)
{
    PlanSpec *plan = plan_spec_new();
    plan->tp = 8, plan->pp = 16, plan->dp = 128, plan->virtual_stages = 4;
    plan->schedule = SCHEDULE_INTERLEAVED, plan->zero_stage = 2, plan->sequence_parallel = TRUE;
    plan->global_batch_size = 2048;
    return plan;
}

/* The replayed step of `plan` (resolved) on `nodes` nodes; exits on error. */
static double replayed_step_s(const ModelSpec *model, ClusterSpec *cluster, PlanSpec *plan)
{
    GError *error = NULL;
    Report rep;
    if (!strategy_resolve(plan, model, cluster, &error) ||
        !simulate_run(model, cluster, plan, &rep, &error)) {
        fprintf(stderr, "bench_run: %s\n", error->message);
        exit(2);
    }
    double step = rep.metrics.step_time_s;
    report_clear(&rep);
    return step;
}

static ClusterSpec *cluster_at(int nodes)
{
    g_autofree char *path = bench_shipped("topologies", "dgx-h100.json");
    GError *error = NULL;
    ClusterSpec *c = cluster_spec_load(path, nodes, &error);
    if (!c) {
        fprintf(stderr, "bench_run: %s\n", error->message);
        exit(2);
    }
    return c;
}

static ModelSpec *model_named(const char *file)
{
    g_autofree char *path = bench_shipped("models", file);
    GError *error = NULL;
    ModelSpec *m = model_spec_load(path, &error);
    if (!m) {
        fprintf(stderr, "bench_run: %s\n", error->message);
        exit(2);
    }
    return m;
}

/* The median seconds of `repeats` runs of runplan_compute. */
static double median_s(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan,
                       double step, const RunChoice *choice, int repeats, RunPlan *out)
{
    g_autofree double *t = g_new(double, repeats);
    Step resolved = step_of(model, cluster, plan);
    for (int i = 0; i < repeats; i++) {
        gint64 start = g_get_monotonic_time();
        if (!runplan_compute(&resolved, step, 15.6e12, choice, FALSE, out, NULL))
            exit(2);
        t[i] = (g_get_monotonic_time() - start) / 1e6;
    }
    bench_sort(t, repeats);
    return t[repeats / 2];
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 5;
    if (repeats < 1)
        repeats = 1;
    g_autoptr(ModelSpec) m70 = model_named("llama3-70b.json");
    printf("bench_run: llama3-70b, tp 8 x pp 4, ZeRO-1, SP, 2048 x 8192 tokens a step, 15T "
           "tokens, dgx-h100, default reliability, synchronous saves, best interval, 100 "
           "trials\n");
    printf("%7s %6s %8s %8s %8s %8s %8s %8s %9s %9s %9s\n", "GPUs", "step s", "clean d", "mean d",
           "P10 d", "P50 d", "P90 d", "ETTR %", "failures", "every s", "MTBF h");
    static const int nodes[] = {8, 32, 128, 256, 512, 1024, 2048};
    for (gsize i = 0; i < G_N_ELEMENTS(nodes); i++) {
        g_autoptr(ClusterSpec) cluster = cluster_at(nodes[i]);
        g_autoptr(PlanSpec) plan = plan_70b();
        double step = replayed_step_s(m70, cluster, plan);
        RunChoice choice;
        runplan_choice_init(&choice);
        RunPlan p;
        Step resolved = step_of(m70, cluster, plan);
        if (!runplan_compute(&resolved, step, 15e12, &choice, FALSE, &p, NULL))
            return 2;
        const RunStats *s = &p.stats;
        printf("%7d %6.3g %8.4g %8.4g %8.4g %8.4g %8.4g %8.2f %9.4g %9.4g %9.4g\n", p.gpus, step,
               p.model.steps * step / 86400, s->mean.wall_s / 86400, s->wall_s.p10 / 86400,
               s->wall_s.p50 / 86400, s->wall_s.p90 / 86400, 100 * s->ettr_mean,
               s->mean.failures[0] + s->mean.failures[1] + s->mean.failures[2], s->every * step,
               p.mtbf_s / 3600);
    }
    g_autoptr(ModelSpec) m405 = model_named("llama3-405b.json");
    g_autoptr(ClusterSpec) big = cluster_at(2048);
    g_autoptr(PlanSpec) plan = plan_405b();
    double step = replayed_step_s(m405, big, plan);
    RunChoice choice;
    runplan_choice_init(&choice);
    RunPlan p;
    double searched = median_s(m405, big, plan, step, &choice, repeats, &p);
    choice.every_steps = p.stats.every;
    double alone = median_s(m405, big, plan, step, &choice, repeats, &p);
    printf("bench_run: llama3-405b, 16384 GPUs (Meta's plan), 15.6T tokens, 100 trials, one "
           "thread, median of %d\n",
           repeats);
    printf("  at a given interval    %.4g s (%.4g failures a trial)\n", alone,
           p.stats.mean.failures[0] + p.stats.mean.failures[1] + p.stats.mean.failures[2]);
    printf("  with the best searched %.4g s (every %.0f steps; ETTR %.2f %%)\n", searched,
           p.stats.every, 100 * p.stats.ettr_mean);
    return 0;
}
