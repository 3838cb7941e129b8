/* check_diagnosis.c: the data loader's stalls held to the schedule's
 * closed form, and the diagnosis checklist's verdicts.
 *
 * One GPU (no communication) runs m micro-batches, each a forward and a
 * backward of C seconds together, then the optimizer: step0 = m C + t_opt,
 * so C = step0(m + 1) - step0(m). A loader reading each micro-batch in
 * t_load, back to back from the step's start, holds forward i until
 * (i + 1) t_load: when t_load <= C only the first read shows,
 *     step = step0 + t_load,
 * and when t_load > C every forward waits for its read,
 *     step = m t_load + C + t_opt = step0 + m t_load - (m - 1) C. */
#include <math.h>
#include <string.h>

#include "layout/layout.h"
#include "metrics/diagnosis.h"
#include "strategy/data_loader.h"
#include "strategy/strategy.h"
#include "testutil.h"

enum { L = 4, H = 256, A = 8, V = 1024, S = 128, BYTES = 1000000 };

/* The checklist of simulated run `c`. */
static void diagnose(const Run *c, Diagnosis *d)
{
    Step step = step_of(c->model, c->cluster, c->plan);
    diagnosis_compute(d, &c->rep.metrics, &step);
}

/* The step time of m micro-batches of one sequence on one GPU, reading
 * BYTES per sequence at `storage_Bps` (0: not modelled). */
static double step_s(int m, double storage_Bps, Diagnosis *d)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 1, 300e9, 25e9));
    c.plan->global_batch_size = m;
    c.plan->bytes_per_sample = storage_Bps > 0 ? BYTES : 0;
    c.cluster->storage_Bps = storage_Bps;
    run_simulate(&c);
    double step = c.rep.metrics.step_time_s;
    if (d)
        diagnose(&c, d);
    run_free(&c);
    return step;
}

START_TEST(fast_loader_costs_its_first_read)
{
    const int m = 4;
    double step0 = step_s(m, 0, NULL), C = step_s(m + 1, 0, NULL) - step0;
    double load = C / 2; /* t_load = BYTES / storage_Bps */
    Diagnosis d;
    ck_assert_rel(step_s(m, BYTES / load, &d), step0 + load, 1e-9);
    ck_assert_str_eq(d.item[DIAG_DATA].verdict, "not a bottleneck");
    /* the first stage's compute: the whole step without the loader */
    ck_assert_rel(d.item[DIAG_DATA].value, m * load / step0, 1e-9);
    diagnosis_clear(&d);
}
END_TEST

START_TEST(slow_loader_stalls_every_forward)
{
    const int m = 4;
    double step0 = step_s(m, 0, NULL), C = step_s(m + 1, 0, NULL) - step0;
    double load = 3 * C;
    Diagnosis d;
    ck_assert_rel(step_s(m, BYTES / load, &d), step0 + m * load - (m - 1) * C, 1e-9);
    ck_assert_str_eq(d.item[DIAG_DATA].verdict, "bottleneck");
    diagnosis_clear(&d);
}
END_TEST

/* bytes_per_sample without storage limits reads in no time: no task, the
 * same step. */
START_TEST(unlimited_storage_adds_nothing)
{
    Run a = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 1, 300e9, 25e9));
    Run b = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 1, 300e9, 25e9));
    a.plan->global_batch_size = b.plan->global_batch_size = 4;
    b.plan->bytes_per_sample = BYTES;
    run_simulate(&a);
    run_simulate(&b);
    ck_assert_double_eq(a.rep.metrics.step_time_s, b.rep.metrics.step_time_s);
    ck_assert_int_eq(a.rep.metrics.events, b.rep.metrics.events);
    run_free(&a);
    run_free(&b);
}
END_TEST

/* tp 2 x dp 4 on 2 nodes of 4 GPUs, tp-dp-pp: the readers (tp 0) are
 * ranks 0, 2 | 4, 6, two per node, sharing its storage: a read of b
 * sequences takes 2 b BYTES / read_Bps, or 2 b / rate when preprocessing
 * is slower. */
START_TEST(readers_share_a_node)
{
    g_autoptr(ModelSpec) model = test_gpt(L, H, A, V, S);
    g_autoptr(ClusterSpec) cluster = test_cluster(2, 4, 300e9, 25e9);
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = 2;
    plan->micro_batch_size = 3;
    plan->bytes_per_sample = BYTES;
    test_resolve(plan, model, cluster);
    g_autoptr(Layout) layout = layout_new(plan, cluster);
    ck_assert_int_eq(data_loader_readers_per_node(layout, cluster), 2);
    cluster->storage_Bps = 1e9;
    ck_assert_rel(data_loader_micro_batch_s(cluster, plan, 2), 2 * 3 * BYTES / 1e9, 1e-12);
    cluster->preprocess_samples_s = 100; /* 6 samples at 100/s: 0.06 s > 0.006 s */
    ck_assert_rel(data_loader_micro_batch_s(cluster, plan, 2), 2 * 3 / 100.0, 1e-12);
}
END_TEST

/* A rank and its images run the same reads: the symmetric replay gives
 * the full one's step. */
START_TEST(loader_keeps_the_symmetry)
{
    double step[2];
    for (int full = 0; full < 2; full++) {
        Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(2, 4, 300e9, 25e9));
        c.plan->tp = 2;
        c.plan->pp = 2;
        c.plan->global_batch_size = 8;
        c.plan->bytes_per_sample = BYTES;
        c.plan->full_fidelity = full;
        c.cluster->storage_Bps = 2e9;
        run_simulate(&c);
        step[full] = c.rep.metrics.step_time_s;
        if (!full)
            ck_assert_int_lt(c.rep.metrics.simulated_ranks, 8);
        run_free(&c);
    }
    ck_assert_double_eq(step[0], step[1]);
}
END_TEST

/* The compute check's figure is the MFU; the bubble check with one stage
 * says so; a plan that fits needs neither recomputation nor ZeRO-2/3. */
START_TEST(checklist_reads_the_metrics)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 1, 300e9, 25e9));
    c.plan->global_batch_size = 4;
    run_simulate(&c);
    Diagnosis d;
    diagnose(&c, &d);
    ck_assert_double_eq(d.item[DIAG_COMPUTE].value, c.rep.metrics.mfu);
    ck_assert_str_eq(d.item[DIAG_BUBBLE].verdict, "no pipeline");
    ck_assert_str_eq(d.item[DIAG_COMMUNICATION].verdict, "none");
    ck_assert_str_eq(d.item[DIAG_MEMORY].verdict, "fits");
    ck_assert_str_eq(d.item[DIAG_DATA].verdict, "not modelled");
    diagnosis_clear(&d);
    run_free(&c);
}
END_TEST

/* 1F1B over p = 4 stages with m = 4 micro-batches: the bubble is about
 * (p - 1) / (m + p - 1) = 3/7 of the step, over 10 %; under 10 % needs
 * m >= 9 (p - 1) = 27 micro-batches. */
START_TEST(large_bubble_asks_for_micro_batches)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 4, 300e9, 25e9));
    c.plan->pp = 4;
    c.plan->global_batch_size = 4;
    run_simulate(&c);
    Diagnosis d;
    diagnose(&c, &d);
    ck_assert_str_eq(d.item[DIAG_BUBBLE].verdict, "bubble-bound");
    ck_assert_ptr_nonnull(strstr(d.item[DIAG_BUBBLE].text, "27 or more micro-batches"));
    diagnosis_clear(&d);
    run_free(&c);
}
END_TEST

/* A last stage made heavy by its head: a GPT of 4 layers of h = 256 and a
 * vocabulary of 2^20 on p = 4 stages, one layer each; the head's logits
 * GEMM, 2 s h V FLOPs a sequence, is V / 12h = 341 times a layer's GEMMs
 * (24 s h^2), so stages 0 to 2 wait for stage 3 most of the step: with
 * m = 32 micro-batches 1F1B's bubble alone would be 3/35, but the stages
 * idle more, at least half of it for the last stage, and the check names
 * it and the flags that move layers off it, not micro-batches. */
START_TEST(heavy_head_is_an_imbalance)
{
    Run c = run_new(test_gpt(4, 256, 8, 1 << 20, 64), test_cluster(1, 4, 300e9, 25e9));
    c.plan->pp = 4;
    c.plan->global_batch_size = 32;
    run_simulate(&c);
    Diagnosis d;
    diagnose(&c, &d);
    const Metrics *m = &c.rep.metrics;
    double mean = 0;
    for (int k = 0; k < 4; k++)
        mean += m->stages[k].busy_s / 4;
    ck_assert(m->stages[3].busy_s > 2 * m->stages[0].busy_s);
    ck_assert(m->bubble_fraction >= 0.1 &&
              (m->stages[3].busy_s - mean) / m->step_time_s >= m->bubble_fraction / 2);
    ck_assert_str_eq(d.item[DIAG_BUBBLE].verdict, "stage-imbalanced");
    ck_assert_ptr_nonnull(strstr(d.item[DIAG_BUBBLE].text, "waiting for stage 3"));
    ck_assert_ptr_nonnull(strstr(d.item[DIAG_BUBBLE].text, "--decoder-last-pipeline-num-layers"));
    diagnosis_clear(&d);
    run_free(&c);
}
END_TEST

/* What --explain advises for the most exposed communication fits the
 * plan (issue 21): tp within a node of 8 without sequence parallelism
 * gets both flags, --tp-comm-overlap needing the other; with it, the
 * overlap; tp 16 on nodes of 8, to keep it within one; dp without
 * overlap, --overlap-grad-reduce; ZeRO-3, a lower stage. */
START_TEST(communication_advice_fits_the_plan)
{
    g_autoptr(ClusterSpec) c = test_shipped_cluster("dgx-a100-80gb.json", 4);
    static const struct {
        TaskTag tag;
        int tp, sp, overlap, zero;
        const char *says, *not_says;
    } cases[] = {
        {TAG_TP, 8, 0, 0, 0, "--sequence-parallel --tp-comm-overlap", "within a node"},
        {TAG_TP, 8, 1, 0, 0, "(--tp-comm-overlap)", "within a node"},
        {TAG_TP, 16, 1, 1, 0, "keep tp within a node (--tp 8 or less", "--tp-comm-overlap"},
        {TAG_DP, 1, 0, 0, 0, "--overlap-grad-reduce", "--tp"},
        {TAG_ZERO, 1, 0, 0, 3, "--zero-stage 2", "--overlap"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->tp = cases[i].tp;
        plan->sequence_parallel = cases[i].sp;
        plan->tp_comm_overlap = cases[i].overlap;
        plan->overlap_grad_reduce = FALSE;
        plan->zero_stage = cases[i].zero;
        g_autofree char *advice = strategy_comm_advice(cases[i].tag, plan, c);
        ck_assert_ptr_nonnull(advice);
        ck_assert_msg(strstr(advice, cases[i].says) && !strstr(advice, cases[i].not_says),
                      "case %zu: %s", i, advice);
    }
    g_autoptr(PlanSpec) plan = plan_spec_new();
    ck_assert_ptr_null(strategy_comm_advice(TAG_AMAX, plan, c));
}
END_TEST

Suite *suite_diagnosis(void)
{
    Suite *s = suite_create("diagnosis");
    TCase *tc = tcase_create("loader");
    tcase_add_test(tc, fast_loader_costs_its_first_read);
    tcase_add_test(tc, slow_loader_stalls_every_forward);
    tcase_add_test(tc, unlimited_storage_adds_nothing);
    tcase_add_test(tc, readers_share_a_node);
    tcase_add_test(tc, loader_keeps_the_symmetry);
    suite_add_tcase(s, tc);
    tc = tcase_create("checklist");
    tcase_add_test(tc, checklist_reads_the_metrics);
    tcase_add_test(tc, large_bubble_asks_for_micro_batches);
    tcase_add_test(tc, heavy_head_is_an_imbalance);
    tcase_add_test(tc, communication_advice_fits_the_plan);
    suite_add_tcase(s, tc);
    return s;
}
