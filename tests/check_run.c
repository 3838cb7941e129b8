/* check_run.c: a whole run (metrics/run.h, checkpoint.h, runplan.h)
 * against closed forms and Llama 3's published run.
 *
 * Monte-Carlo figures are held to their closed forms within 4 standard
 * errors of the mean over the trials (a two-sided 99.99 % confidence
 * bound): a right model fails one in ~16,000 seeds, and the seeds are
 * fixed, so a test's outcome is reproducible. */
#include <math.h>
#include <string.h>

#include "metrics/checkpoint.h"
#include "metrics/run.h"
#include "metrics/runplan.h"
#include "output/run_report.h"
#include "cost/transformer.h"
#include "strategy/states.h"
#include "strategy/strategy.h"
#include "testutil.h"

/* Standard errors a mean may stray from its expected value. */
#define BOUND_SE 4.0

/* A run of `steps` one-second steps with failures of one kind at
 * `rate` per second. */
static RunModel model_of(double steps, double rate, double restart_s, double pause_s,
                         double write_s, int trials)
{
    RunModel m = {.step_s = 1,
                  .steps = steps,
                  .restart_s = restart_s,
                  .pause_s = pause_s,
                  .write_s = write_s,
                  .trials = trials,
                  .seed = 7};
    m.rate_per_s[FAILURE_GPU] = rate;
    return m;
}

static double failures(const RunTrial *t)
{
    double n = 0;
    for (int k = 0; k < FAILURE_KINDS; k++)
        n += t->failures[k];
    return n;
}

/* With instant saves and restarts, a failure at a time uniform over an
 * interval of tau loses, given it falls within it (exponential arrivals
 * at rate L), E[f | f < tau] = 1/L - tau / (e^(L tau) - 1) = tau/2 -
 * L tau^2 / 12 + ...: half the interval to first order. Here L = 1e-3/s,
 * tau = 20 s (L tau = 0.02): 9.9667 s. The spread of one loss is at most
 * tau / sqrt(12) (uniform), so the mean of N losses strays by
 * tau / sqrt(12 N) at most per standard error. */
START_TEST(instant_restarts_lose_half_an_interval)
{
    double rate = 1e-3, tau = 20;
    RunModel m = model_of(2e5, rate, 0, 0, 0, 200);
    RunStats s;
    ck_assert(run_trials(&m, tau, &s, NULL));
    double n = failures(&s.mean) * m.trials, per_failure = s.mean.lost_s / failures(&s.mean);
    double exact = 1 / rate - tau / expm1(rate * tau);
    ck_assert_rel(exact, tau / 2, rate * tau / 6 + 1e-12); /* first order */
    double se = tau / sqrt(12 * n);
    ck_assert_msg(fabs(per_failure - exact) <= BOUND_SE * se,
                  "lost per failure %.6g s, expected %.6g s +- %.3g (%.0f failures)", per_failure,
                  exact, BOUND_SE * se, n);
    ck_assert_double_eq(s.mean.save_s, 0);
    ck_assert_double_eq(s.mean.restart_s, 0);
}
END_TEST

/* ETTR with instant saves and restarts, to first order 1 - L tau / 2
 * (each failure loses tau/2 of work, L W failures): L = 1e-3/s, tau =
 * 20 s, T = 1e5 s of work (~100 failures a trial): 0.99. The exact
 * expectation, L tau / (e^(L tau) - 1) = 0.990033, is 3.3e-5 away, below
 * the bound at 1,000 trials (about 1.5e-4). */
START_TEST(ettr_matches_the_first_order_formula)
{
    double rate = 1e-3, tau = 20;
    RunModel m = model_of(1e5, rate, 0, 0, 0, 1000);
    RunStats s;
    ck_assert(run_trials(&m, tau, &s, NULL));
    double first = 1 - rate * tau / 2, se = s.ettr_sd / sqrt(m.trials);
    ck_assert_msg(fabs(s.ettr_mean - first) <= BOUND_SE * se, "ETTR %.6f, expected %.6f +- %.2g",
                  s.ettr_mean, first, BOUND_SE * se);
    ck_assert(BOUND_SE * se < rate * tau / 10); /* the bound is tight enough to tell */
}
END_TEST

/* Daly 2006's exact expectation for synchronous saves: a run of n
 * intervals of tau, each followed by a save of C, failures at rate L
 * during everything, restarts of R begun anew by a failure, takes
 *     E[W] = n e^(L R) (e^(L (tau + C)) - 1) / L
 * (one interval: it needs a failure-free window of tau + C; each failure
 * costs the time to it and a restart, which itself needs a failure-free
 * window of R). L = 1/3600 s, tau = 600 s, C = 30 s, R = 300 s, n = 500. */
START_TEST(sync_saves_match_dalys_expectation)
{
    double rate = 1 / 3600.0, tau = 600, c = 30, r = 300, n = 500;
    RunModel m = model_of(n * tau, rate, r, c, 0, 400);
    RunStats s;
    ck_assert(run_trials(&m, tau, &s, NULL));
    double expected = n * exp(rate * r) * expm1(rate * (tau + c)) / rate;
    double se = s.wall_sd / sqrt(m.trials);
    ck_assert_msg(fabs(s.mean.wall_s - expected) <= BOUND_SE * se,
                  "wall %.8g s, expected %.8g s +- %.3g", s.mean.wall_s, expected, BOUND_SE * se);
    /* the parts add up: work, saves, lost work and restarts */
    ck_assert_rel(s.mean.wall_s, n * tau + s.mean.save_s + s.mean.lost_s + s.mean.restart_s, 1e-9);
    /* each completed interval's save, and those begun before failures */
    ck_assert(s.mean.save_s >= n * c);
    /* failures seen: L times the wall time (a Poisson process watched until
     * the run ends: E[N] = L E[W]); their count's spread is about its
     * square root per trial */
    double seen = failures(&s.mean), se_n = sqrt(seen / m.trials) + s.wall_sd * rate;
    ck_assert_msg(fabs(seen - rate * s.mean.wall_s) <= BOUND_SE * se_n,
                  "failures %.5g, expected %.5g", seen, rate * s.mean.wall_s);
}
END_TEST

/* An asynchronous save pauses only for its snapshot, but its checkpoint
 * is durable a write W later, so a failure loses, on average, tau/2 + W
 * (the time since the last durable checkpoint's step is uniform over
 * [W, tau + W) once W < tau), to first order. tau = 20 s, W = 5 s, L =
 * 1e-3/s: 15 s, less L tau^2/12 ~ 0.03 s. */
START_TEST(async_saves_lose_the_write_too)
{
    double rate = 1e-3, tau = 20, w = 5;
    RunModel m = model_of(2e5, rate, 0, 0, w, 200);
    RunStats s;
    ck_assert(run_trials(&m, tau, &s, NULL));
    double n = failures(&s.mean) * m.trials, per_failure = s.mean.lost_s / failures(&s.mean);
    double exact = w + 1 / rate - tau / expm1(rate * tau), se = tau / sqrt(12 * n);
    ck_assert_msg(fabs(per_failure - exact) <= BOUND_SE * se + w * rate * tau,
                  "lost per failure %.6g s, expected %.6g s", per_failure, exact);
    /* no pause but for the last write, which the run waits for (again
     * when a failure strikes during it) */
    ck_assert(s.mean.save_s >= w && s.mean.save_s < 2 * w);
}
END_TEST

/* The best interval simulated against the closed forms where they hold
 * (C << M): C = 10 s, M = 10,000 s, R = 60 s: Young sqrt(2 C M) = 447.2 s,
 * Daly sqrt(2 C (R + M)) = 448.6 s, Saxena C + sqrt(2 (M + R) C + C^2) =
 * 458.7 s. The expected wall time is flat around its minimum (W ~ T (1 +
 * C/tau + tau/(2M)): 15 % off tau costs ~0.1 % of W), so agreement is
 * asked within 15 %. */
START_TEST(best_interval_agrees_with_young_and_daly)
{
    double c = 10, mtbf = 1e4, r = 60;
    RunModel m = model_of(1e6, 1 / mtbf, r, c, 0, 400);
    double best;
    ck_assert(run_best_interval(&m, &best, NULL));
    ck_assert_rel(run_young_s(c, mtbf), 447.2136, 1e-6);
    ck_assert_rel(run_daly_s(c, r, mtbf), 448.5532, 1e-6);
    ck_assert_rel(run_saxena_s(c, r, mtbf), 458.6646, 1e-6);
    ck_assert_rel(best * m.step_s, run_young_s(c, mtbf), 0.15);
    ck_assert_rel(best * m.step_s, run_daly_s(c, r, mtbf), 0.15);
    ck_assert_rel(best * m.step_s, run_saxena_s(c, r, mtbf), 0.15);
    /* and it beats intervals twice and half as long */
    RunStats at, shorter, longer;
    ck_assert(run_trials(&m, best, &at, NULL));
    ck_assert(run_trials(&m, round(best / 2), &shorter, NULL));
    ck_assert(run_trials(&m, best * 2, &longer, NULL));
    ck_assert(at.mean.wall_s < shorter.mean.wall_s && at.mean.wall_s < longer.mean.wall_s);
}
END_TEST

/* The same seed gives the same trials; another seed other ones; no
 * failures give the failure-free run plus its saves exactly. */
START_TEST(seeds_and_no_failures)
{
    RunModel m = model_of(1e5, 1e-3, 30, 2, 0, 50);
    RunStats a, b, c;
    ck_assert(run_trials(&m, 100, &a, NULL));
    ck_assert(run_trials(&m, 100, &b, NULL));
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    m.seed = 8;
    ck_assert(run_trials(&m, 100, &c, NULL));
    ck_assert(a.mean.wall_s != c.mean.wall_s);
    m.rate_per_s[FAILURE_GPU] = 0; /* 1,000 saves of 2 s */
    ck_assert(run_trials(&m, 100, &a, NULL));
    ck_assert_double_eq(a.mean.wall_s, 1e5 + 1000 * 2);
    ck_assert_rel(a.ettr_mean, 1e5 / 1.02e5, 1e-12);
    ck_assert_double_eq(a.mean.checkpoints, 1000);
}
END_TEST

/* Failures faster than restarts: an error, not a hang. */
START_TEST(a_run_that_cannot_end_is_refused)
{
    RunModel m = model_of(1e6, 1.0 / 60, 600, 1, 0, 10);
    RunStats s;
    g_autoptr(GError) error = NULL;
    ck_assert(!run_trials(&m, 100, &s, &error));
    ck_assert(strstr(error->message, "rare enough for the run to end") != NULL);
}
END_TEST

/* Each rank writes the states it holds (14 bytes a parameter: bf16
 * weights and Adam's 12), its ZeRO shard of them, replicated states from
 * one replica. A GPT of 4 layers, h 1024, 32,000 tokens, 2,048 positions
 * (Psi = 85,252,096) on 2 nodes of 8, tp 2 x pp 2 x dp 4, holds by hand
 *     Psi
 *   + 32,768,000  the last stage's copy of the tied word embedding
 *                 (32,000 x 1,024; Megatron-LM keeps one there)
 *   + 2,123,776   the second tensor-parallel rank's copies of what tp does
 *                 not split: 2,048 x 1,024 positions, and per layer two
 *                 LayerNorms (4h) and the row-parallel biases (2h), 4 x
 *                 6,144, and the final LayerNorm, 2,048
 *   = 120,143,872 parameters, 14 bytes each, whatever the ZeRO stage; on
 * one GPU, Psi exactly. ZeRO 0: a dp-0 rank writes its stage's 14 bytes
 * a parameter; 1 and 2: its weights and a quarter of Adam's; 3: a
 * quarter of all. */
START_TEST(checkpoint_bytes_by_zero_stage)
{
    g_autoptr(ModelSpec) model = test_gpt(4, 1024, 16, 32000, 2048);
    g_autoptr(ClusterSpec) cluster = test_cluster(2, 8, 300e9, 25e9);
    ck_assert_double_eq(transformer_params(model), 85252096);
    for (int zero = 0; zero <= 3; zero++) {
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->tp = 2, plan->pp = 2, plan->dp = 4, plan->zero_stage = zero;
        plan->global_batch_size = 16;
        test_resolve(plan, model, cluster);
        Checkpoint c;
        Step step = step_of(model, cluster, plan);
        checkpoint_of_plan(&c, &step);
        ck_assert_rel(c.total_bytes, 14 * 120143872.0, 1e-12);
        double most = 0;
        for (int s = 0; s < 2; s++)
            most = MAX(most, states_stage_params_of(model, plan, s).params);
        double expected = zero == 0   ? 14 * most
                          : zero == 3 ? 14 * most / 4
                                      : 2 * most + 12 * most / 4;
        ck_assert_rel(c.gpu_bytes, expected, 1e-9);
        ck_assert_rel(c.save_s, c.node_bytes / CHECKPOINT_NODE_Bps, 1e-12);
    }
    g_autoptr(PlanSpec) one = plan_spec_new();
    one->dp = 1, one->global_batch_size = 1;
    g_autoptr(ClusterSpec) gpu = test_cluster(1, 1, 300e9, 25e9);
    test_resolve(one, model, gpu);
    Checkpoint c;
    Step step = step_of(model, gpu, one);
    checkpoint_of_plan(&c, &step);
    ck_assert_double_eq(c.total_bytes, 14 * 85252096.0);
}
END_TEST

/* Experts: ep 4 over dp 8 splits the experts' states over the
 * expert-data-parallel group (2 ranks), the rest over all 8; without tp
 * or pp every parameter is held once, 14 x Psi in all at every stage. */
START_TEST(checkpoint_of_experts)
{
    g_autoptr(ModelSpec) model = test_moe(2, 512, 8, 32000, 1024, 8, 2, 1024);
    g_autoptr(ClusterSpec) cluster = test_cluster(1, 8, 300e9, 25e9);
    for (int zero = 0; zero <= 3; zero++) {
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->dp = 8, plan->ep = 4, plan->zero_stage = zero;
        plan->global_batch_size = 8;
        test_resolve(plan, model, cluster);
        Checkpoint c;
        Step step = step_of(model, cluster, plan);
        checkpoint_of_plan(&c, &step);
        ck_assert_rel(c.total_bytes, 14 * transformer_params(model), 1e-12);
    }
}
END_TEST

/* Llama 3 405B (Dubey et al. 2024, section 3.3.4): 419 unexpected
 * interruptions in 54 days on 16,384 H100s, more than 90 % effective
 * training time with automated recovery. Inputs: the shipped H100 cluster
 * on 2,048 nodes, whose default failure rates are those 419 in 54 days
 * (cluster.c); Meta's plan (tp 8, pp 16, dp 128, interleaved x4, ZeRO-2,
 * SP) at 2,048 sequences of 8,192 tokens; 15.6T tokens; synchronous saves
 * of the 5.7 TB checkpoint at the default 10 GB/s a node; restarts of 2 +
 * 8 minutes and the load; the best interval simulated. ETTR above 90 %. */
START_TEST(llama3_405b_keeps_above_90_percent)
{
    g_autoptr(ModelSpec) model = test_shipped_model("models", "llama3-405b.json");
    g_autoptr(ClusterSpec) cluster = test_shipped_cluster("dgx-h100.json", 2048);
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = 8, plan->pp = 16, plan->dp = 128, plan->virtual_stages = 4;
    plan->schedule = SCHEDULE_INTERLEAVED, plan->zero_stage = 2, plan->sequence_parallel = TRUE;
    plan->global_batch_size = 2048;
    test_resolve(plan, model, cluster);
    Report rep;
    ck_assert(simulate_run(model, cluster, plan, &rep, NULL));
    RunChoice choice;
    runplan_choice_init(&choice);
    RunPlan p;
    Step step = step_of(model, cluster, plan);
    ck_assert(runplan_compute(&step, rep.metrics.step_time_s, 15.6e12, &choice, FALSE, &p, NULL));
    /* the job's failures: 419 in 54 days */
    ck_assert_rel(run_rate_per_s(&p.model) * 54 * 86400, 419, 1e-9);
    ck_assert_msg(p.stats.ettr_mean > 0.90, "ETTR %.4f", p.stats.ettr_mean);
    ck_assert_msg(p.stats.ettr.p10 > 0.90, "ETTR P10 %.4f", p.stats.ettr.p10);
    report_clear(&rep);
}
END_TEST

/* The report's bytes depend on the seed alone: the same run renders the
 * same text, JSON and CSV. */
START_TEST(reports_are_deterministic)
{
    g_autoptr(ModelSpec) model = test_gpt(4, 1024, 16, 32000, 2048);
    g_autoptr(ClusterSpec) cluster = test_cluster(2, 8, 300e9, 25e9);
    cluster->reliability.per_node_hour[FAILURE_NODE] = 1e-3;
    cluster->reliability.restart_s = 600;
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = 2, plan->pp = 2, plan->dp = 4, plan->global_batch_size = 16;
    test_resolve(plan, model, cluster);
    RunChoice choice;
    runplan_choice_init(&choice);
    char *first[3];
    for (int round = 0; round < 2; round++) {
        RunPlan p;
        Step step = step_of(model, cluster, plan);
        ck_assert(runplan_compute(&step, 0.5, 1e11, &choice, TRUE, &p, NULL));
        RunReport r = {"gpt", "test", plan, &p, 2, FALSE};
        for (int f = 0; f < 3; f++) {
            char *text = run_report_render(&r, (ReportFormat)f);
            if (round == 0)
                first[f] = text;
            else {
                ck_assert_str_eq(text, first[f]);
                g_free(text);
                g_free(first[f]);
            }
        }
    }
}
END_TEST

Suite *suite_run(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("closed forms");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, instant_restarts_lose_half_an_interval);
    tcase_add_test(tc, ettr_matches_the_first_order_formula);
    tcase_add_test(tc, sync_saves_match_dalys_expectation);
    tcase_add_test(tc, async_saves_lose_the_write_too);
    tcase_add_test(tc, best_interval_agrees_with_young_and_daly);
    tcase_add_test(tc, seeds_and_no_failures);
    tcase_add_test(tc, a_run_that_cannot_end_is_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("plans");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, checkpoint_bytes_by_zero_stage);
    tcase_add_test(tc, checkpoint_of_experts);
    tcase_add_test(tc, llama3_405b_keeps_above_90_percent);
    tcase_add_test(tc, reports_are_deterministic);
    suite_add_tcase(s, tc);
    return s;
}
