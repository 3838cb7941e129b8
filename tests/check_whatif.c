/* check_whatif.c: what-ifs held to hand calculations, in the setting of
 * check_simulate.c where the step is the sum of its parts (zero latency and
 * launch cost, the gradient all-reduce after the whole backward, not
 * overlapped): step = m (t_f + t_b) + t_allreduce + t_optimizer. */
#include <math.h>
#include <string.h>

#include "app/simulate.h"
#include "app/whatif.h"
#include "base/error.h"
#include "cost/transformer.h"
#include "testutil.h"

enum { L = 4, H = 256, A = 8, V = 1024, S = 128, D = 4, B = 2, M = 3 };

/* Pure data parallelism over D nodes of one GPU each (InfiniBand at
 * 25 GB/s), M micro-batches of B, a ring all-reduce after backward. */
static Run dp_case(void)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(D, 1, 300e9, 25e9));
    c.plan->micro_batch_size = B;
    c.plan->global_batch_size = B * M * D;
    c.plan->overlap_grad_reduce = FALSE;
    c.plan->collective_algorithm = ALGORITHM_RING;
    c.plan->grad_accum_dtype = GRAD_ACCUM_BF16; /* 2-byte gradients: 2 Psi reduced */
    run_simulate(&c);
    return c;
}

/* The report of c's plan under the what-ifs of the flags' texts. */
static Report whatif_run(const Run *c, const char *gpu, const char *link, const char *jitter,
                         const char *seed)
{
    char *gpus[] = {(char *)gpu, NULL}, *links[] = {(char *)link, NULL};
    g_autoptr(WhatIf) w = whatif_new();
    GError *error = NULL;
    ck_assert_msg(whatif_parse(w, gpu ? gpus : NULL, link ? links : NULL, jitter, seed, &error),
                  "%s", error ? error->message : "");
    Report rep;
    ck_assert_msg(simulate_run_whatif(c->model, c->cluster, c->plan, w, NULL, FALSE, &rep, &error),
                  "%s", error ? error->message : "");
    rep.whatif = NULL; /* w's, freed here */
    return rep;
}

/* A GPU twice as slow: the all-reduce waits for its backward and its
 * optimizer step ends last, so the step grows by exactly its compute time
 * (every forward, backward and its optimizer step: compute_s) x (2 - 1),
 * and it becomes the critical rank. */
START_TEST(slow_gpu_stretches_the_step_by_its_extra_compute)
{
    Run c = dp_case();
    const Metrics *clean = &c.rep.metrics;
    Report rep = whatif_run(&c, "2:2", NULL, NULL, NULL);
    ck_assert_rel(rep.metrics.step_time_s, clean->step_time_s + (2 - 1) * clean->compute_s, 1e-12);
    ck_assert_int_eq(rep.metrics.critical_rank, 2);
    ck_assert_rel(rep.clean_step_time_s, clean->step_time_s, 1e-15);
    ck_assert_int_eq(rep.clean_critical_rank, clean->critical_rank);
    /* the slow rank replayed alone and one for the other three, which
     * run alike (symmetry_new_cells: the dp shift's cells around rank 2),
     * and said so */
    ck_assert_int_eq(rep.metrics.simulated_ranks, 2);
    ck_assert_str_eq(rep.metrics.symmetry, "dp around the what-if");
    report_clear(&rep);
    run_free(&c);
}
END_TEST

/* One NIC at half its bandwidth (2, or 2x, times slower): every ring step crosses it, so the ring
 * all-reduce, 2 (d - 1)/d x 2 Psi / beta (docs/model.md), takes twice as
 * long, and nothing else changes. Either direction alone or both give the
 * same: every ring step has a transfer out of and one into that node. */
START_TEST(slow_nic_stretches_the_all_reduce_by_the_ratio)
{
    Run c = dp_case();
    double t_ar = 2.0 * (D - 1) / D * 2 * transformer_params(c.model) / 25e9;
    ck_assert_rel(c.rep.metrics.exposed_comm_s, t_ar, 1e-9);
    static const char *const links[] = {"node 1 nic 0:2", "node 1 nic 0 out:2x",
                                        "node 1 nic 0 in:2"};
    for (gsize i = 0; i < G_N_ELEMENTS(links); i++) {
        Report rep = whatif_run(&c, NULL, links[i], NULL, NULL);
        ck_assert_rel(rep.metrics.exposed_comm_s, t_ar / 0.5, 1e-9);
        ck_assert_rel(rep.metrics.step_time_s, c.rep.metrics.step_time_s + t_ar * (1 / 0.5 - 1),
                      1e-9);
        report_clear(&rep);
    }
    run_free(&c);
}
END_TEST

/* An NVLink port: a two-GPU node's all-reduce over NVLink (300 GB/s) at a
 * quarter of it (4 times slower) takes four times as long. */
START_TEST(slow_nvlink_port_stretches_the_all_reduce)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 2, 300e9, 25e9));
    c.plan->overlap_grad_reduce = FALSE;
    c.plan->collective_algorithm = ALGORITHM_RING;
    c.plan->grad_accum_dtype = GRAD_ACCUM_BF16;
    run_simulate(&c);
    double t_ar = 2.0 * (2 - 1) / 2 * 2 * transformer_params(c.model) / 300e9;
    Report rep = whatif_run(&c, NULL, "node 0 gpu 1 nvlink:4", NULL, NULL);
    ck_assert_rel(rep.metrics.exposed_comm_s, t_ar / 0.25, 1e-9);
    report_clear(&rep);
    run_free(&c);
}
END_TEST

/* Noise: the same seed gives the same bytes, another seed another step;
 * sigma 0 is the clean run; and its mean is 1, so over the step's many
 * tasks the step stays near the clean one. */
START_TEST(jitter_is_deterministic_per_seed)
{
    Run c = dp_case();
    Report a = whatif_run(&c, NULL, NULL, "0.2", "7"), b = whatif_run(&c, NULL, NULL, "0.2", "7");
    Report other = whatif_run(&c, NULL, NULL, "0.2", "8");
    Report none = whatif_run(&c, NULL, NULL, "0", NULL);
    g_autofree char *csv_a = report_render(&a, FORMAT_CSV, FALSE);
    g_autofree char *csv_b = report_render(&b, FORMAT_CSV, FALSE);
    ck_assert_str_eq(csv_a, csv_b);
    ck_assert_double_ne(a.metrics.step_time_s, other.metrics.step_time_s);
    ck_assert_double_eq(none.metrics.step_time_s, c.rep.metrics.step_time_s);
    ck_assert_double_ne(a.metrics.step_time_s, c.rep.metrics.step_time_s);
    /* noise on every task: no two ranks alike, every one replayed */
    ck_assert_int_eq(a.metrics.simulated_ranks, D);
    ck_assert_str_eq(a.metrics.symmetry, "none (jitter)");
    /* ~60 tasks of sigma 0.2 per rank: the sum's spread is a few per cent */
    ck_assert_rel(a.metrics.step_time_s, c.rep.metrics.step_time_s, 0.15);
    report_clear(&a);
    report_clear(&b);
    report_clear(&other);
    report_clear(&none);
    run_free(&c);
}
END_TEST

/* A GPU and a link 1 time slower slow nothing: the clean step, with the
 * clean replay's symmetry (the dp shift: one rank of the 4). */
START_TEST(factor_one_is_the_clean_step)
{
    Run c = dp_case();
    Report rep = whatif_run(&c, "2:1", "node 1 nic 0:1", NULL, NULL);
    ck_assert_double_eq(rep.metrics.step_time_s, c.rep.metrics.step_time_s);
    ck_assert_int_eq(rep.metrics.simulated_ranks, 1);
    ck_assert_str_eq(rep.metrics.symmetry, "dp");
    report_clear(&rep);
    run_free(&c);
}
END_TEST

/* Ranks and links are checked against the plan, one error line each. */
START_TEST(unknown_rank_or_link_is_refused)
{
    Run c = dp_case();
    static const char *const bad[][2] = {
        {"4:2", NULL}, {NULL, "node 4 nic 0:2"}, {NULL, "node 0 gpu 0 nvlink sideways:2"}};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *gpus[] = {(char *)bad[i][0], NULL}, *links[] = {(char *)bad[i][1], NULL};
        g_autoptr(WhatIf) w = whatif_new();
        ck_assert(
            whatif_parse(w, bad[i][0] ? gpus : NULL, bad[i][1] ? links : NULL, NULL, NULL, NULL));
        Report rep;
        GError *error = NULL;
        ck_assert(!simulate_run_whatif(c.model, c.cluster, c.plan, w, NULL, FALSE, &rep, &error));
        ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_INPUT));
        ck_assert_ptr_null(strchr(error->message, '\n'));
        g_error_free(error);
    }
    run_free(&c);
}
END_TEST

Suite *suite_whatif(void)
{
    Suite *s = suite_create("whatif");
    TCase *tc = tcase_create("whatif");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, slow_gpu_stretches_the_step_by_its_extra_compute);
    tcase_add_test(tc, slow_nic_stretches_the_all_reduce_by_the_ratio);
    tcase_add_test(tc, slow_nvlink_port_stretches_the_all_reduce);
    tcase_add_test(tc, jitter_is_deterministic_per_seed);
    tcase_add_test(tc, factor_one_is_the_clean_step);
    tcase_add_test(tc, unknown_rank_or_link_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
