/* check_context_parallel.c: context parallelism (context_parallel.c) held
 * to closed forms by hand (docs/model.md, "Context parallelism"). With c
 * ranks per CP group, b sequences of s tokens per micro-batch, h hidden,
 * h_kv = kv_heads x h / a, t tp, L layers, m micro-batches per rank:
 *   - activations: every kept tensor is per token (Korthikanti et al.
 *     2022, section 4: sbh terms) and a rank holds b s / c tokens; the
 *     standard scores' 5as^2b/t becomes 5a (s/c) s b / t (its queries
 *     against every key): all of it divides by c;
 *   - ring attention (Megatron-Core's CP): per layer and micro-batch the
 *     forward makes c - 1 exchanges of the K and V of s/c tokens, 2 x 2 b
 *     (s/c) h_kv bytes each: (c - 1) x 4 b (s/c) h_kv = 2 (c - 1)/c x KV
 *     with KV = 2 b s h_kv, one of K and V for the whole sequence in bf16
 *     (the "2(cp-1)/cp x KV per layer"); backward sends K and V
 *     with dK and dV, twice that;
 *   - DeepSpeed-Ulysses (Jacobs et al. 2023, section 3.1): all-to-alls of
 *     Q, K, V before attention and of the output after, and their mirrors
 *     in backward; a rank sends (c - 1)/c of its buffer of each;
 *   - gradients and ZeRO-1's shards over d x c ranks: a ring
 *     reduce-scatter of 4 Psi fp32 gradient bytes sends (n - 1)/n of it,
 *     n = d c (Rajbhandari et al. 2020, section 7.1);
 *   - cp = 1 is the plan without context parallelism, and bad sizes are
 *     refused. */
#include <math.h>

#include "cost/transformer.h"
#include "strategy/strategy.h"
#include "testutil.h"

enum { L = 2, H = 256, A = 8, V = 512, S = 128 };

/* Activations a micro-batch keeps, all of a layer's blocks and the
 * embedding and head, for a shard. */
static double kept(const ModelSpec *m, Shard sh)
{
    double bytes =
        transformer_embedding_activation_bytes(m, sh) + transformer_head_activation_bytes(m, sh);
    for (int b = 0; b < TRANSFORMER_BLOCKS; b++)
        bytes += transformer_block_activation_bytes(m, (Block)b, sh, RECOMPUTE_NONE);
    return bytes;
}

START_TEST(activations_divide_by_cp)
{
    ModelSpec *m = test_gpt(L, H, A, V, S);
    for (int att = 0; att < 2; att++) {
        Shard one = {.micro_batch = 2, .tp = 2, .attention = (Attention)att};
        Shard two = one;
        two.cp = 2;
        ck_assert_rel(kept(m, two), kept(m, one) / 2, 1e-12);
        /* and a replay's peak: one micro-batch in flight without a pipeline */
        double peak[2];
        for (int c = 1; c <= 2; c++) {
            Run run = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 4, 300e9, 25e9));
            run.plan->tp = 2;
            run.plan->cp = c;
            run.plan->attention = (Attention)att;
            run.plan->global_batch_size = 4;
            run_simulate(&run);
            peak[c - 1] = run.rep.metrics.peak_split[MEM_ACTIVATIONS];
            run_free(&run);
        }
        ck_assert_rel(peak[1], peak[0] / 2, 1e-12);
    }
    model_spec_free(m);
}
END_TEST

/* A replay of c ranks (one CP group, tp 1, dp 1), m micro-batches of b. */
static Run cp_run(int c, CpAlgorithm algorithm, int m, int b)
{
    Run run = run_new(test_gpt(L, H, A, V, S), test_cluster(1, c, 300e9, 25e9));
    run.plan->cp = c;
    run.plan->cp_algorithm = algorithm;
    run.plan->micro_batch_size = b;
    run.plan->global_batch_size = m * b;
    run_simulate(&run);
    return run;
}

START_TEST(ring_bytes_per_layer)
{
    const int m = 3, b = 2;
    for (int c = 2; c <= 4; c *= 2) {
        Run run = cp_run(c, CP_RING, m, b);
        const CommStat *x = &run.rep.metrics.comm[TAG_CP][COLL_RING_EXCHANGE];
        double kv = 2.0 * b * S * H; /* one of K and V, whole sequence, bf16 (h_kv = h) */
        double forward = 2.0 * (c - 1) / c * kv;
        ck_assert_int_eq(x->count, m * L * 2 * (c - 1));
        ck_assert_rel(x->bytes, m * L * (forward + 2 * forward), 1e-12);
        run_free(&run);
    }
}
END_TEST

START_TEST(ulysses_all_to_all_bytes)
{
    const int m = 2, b = 1;
    for (int c = 2; c <= 4; c *= 2) {
        Run run = cp_run(c, CP_ALL_TO_ALL, m, b);
        const CommStat *x = &run.rep.metrics.comm[TAG_CP][COLL_ALL_TO_ALL];
        double q = 2.0 * b * (S / c) * H, kv = 2 * q; /* a rank's Q (or output), K with V */
        /* forward: Q K V, then the output; backward: its gradient, then dQ dK dV */
        double buffers = (q + kv) + q + q + (q + kv);
        ck_assert_int_eq(x->count, m * L * 4);
        ck_assert_rel(x->bytes, m * L * (c - 1.0) / c * buffers, 1e-12);
        ck_assert_int_eq(run.rep.metrics.comm[TAG_CP][COLL_RING_EXCHANGE].count, 0);
        run_free(&run);
    }
}
END_TEST

/* Under the zero-bubble schedules a backward is B then W: the exchanges
 * around attention belong to B (attention has no weights), so with 2
 * pipeline stages each rank exchanges, for its L/2 layers, what the two
 * tests above count for 1F1B, in either algorithm: ring, per micro-batch
 * and layer, c - 1 exchanges forward and c - 1 backward (of twice the
 * bytes); Ulysses, 4 all-to-alls. (It used to exchange again in W: 1.5
 * times the ring's calls.) */
START_TEST(zero_bubble_exchanges_as_1f1b)
{
    const int m = 4, b = 1, c = 2, pp = 2;
    const Schedule schedules[] = {SCHEDULE_1F1B, SCHEDULE_ZBH1, SCHEDULE_ZBH2};
    for (gsize i = 0; i < G_N_ELEMENTS(schedules); i++) {
        for (int ring = 0; ring < 2; ring++) {
            Run run = run_new(test_gpt(L, H, A, V, S), test_cluster(1, c * pp, 300e9, 25e9));
            run.plan->cp = c;
            run.plan->pp = pp;
            run.plan->schedule = schedules[i];
            run.plan->cp_algorithm = ring ? CP_RING : CP_ALL_TO_ALL;
            run.plan->micro_batch_size = b;
            run.plan->global_batch_size = m * b;
            run_simulate(&run);
            const CommStat *x =
                &run.rep.metrics.comm[TAG_CP][ring ? COLL_RING_EXCHANGE : COLL_ALL_TO_ALL];
            double q = 2.0 * b * (S / c) * H; /* a rank's Q: Ulysses' buffers */
            double kv = 2.0 * b * S * H;      /* ring: one of K and V, whole sequence */
            double per_layer = ring ? 3 * 2.0 * (c - 1) / c * kv
                                    : (c - 1.0) / c * ((q + 2 * q) + q + q + (q + 2 * q));
            ck_assert_int_eq(x->count, m * (L / pp) * (ring ? 2 * (c - 1) : 4));
            ck_assert_rel(x->bytes, m * (L / pp) * per_layer, 1e-12);
            run_free(&run);
        }
    }
}
END_TEST

START_TEST(gradients_reduce_over_dp_times_cp)
{
    Run run = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 4, 300e9, 25e9));
    run.plan->cp = 2; /* dp = 4 / 2 = 2 */
    run.plan->zero_stage = 1;
    run.plan->collective_algorithm = ALGORITHM_RING;
    run_simulate(&run);
    ck_assert_int_eq(run.plan->dp, 2);
    double psi = transformer_params(run.model), n = 4; /* d x c */
    const CommStat *z = run.rep.metrics.comm[TAG_ZERO];
    ck_assert_rel(z[COLL_REDUCE_SCATTER].bytes, (n - 1) / n * 4 * psi, 1e-12);
    ck_assert_rel(z[COLL_ALL_GATHER].bytes, (n - 1) / n * 2 * psi, 1e-12);
    ck_assert_rel(run.rep.metrics.peak_split[MEM_OPTIMIZER], 12 * psi / n, 1e-12);
    run_free(&run);
}
END_TEST

/* cp = 1 is no context parallelism, whichever algorithm. */
START_TEST(cp_one_is_today)
{
    char *json[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        Run run = run_new(test_gpt(L, H, A, V, S), test_cluster(2, 4, 300e9, 25e9));
        run.plan->tp = 2;
        run.plan->pp = 2;
        run.plan->cp_algorithm = i ? CP_ALL_TO_ALL : CP_RING;
        run.plan->global_batch_size = 8;
        run_simulate(&run);
        run.rep.sim_wall_s = 0;
        json[i] = report_render(&run.rep, FORMAT_JSON, FALSE);
        run_free(&run);
    }
    /* the reports differ only in the cp_algorithm field */
    g_autofree char *ring = g_strdup(json[0]);
    char *at = g_strstr_len(ring, -1, "\"cp_algorithm\": \"ring\"");
    ck_assert_ptr_nonnull(at);
    g_autofree char *expected = g_strdup_printf("%.*s\"cp_algorithm\": \"all_to_all\"%s",
                                                (int)(at - ring), ring,
                                                at + strlen("\"cp_algorithm\": \"ring\""));
    ck_assert_str_eq(json[1], expected);
    g_free(json[0]);
    g_free(json[1]);
}
END_TEST

/* The message of the check that refuses `plan` on m and c. */
static char *refusal(PlanSpec *plan, const ModelSpec *m, const ClusterSpec *c)
{
    GError *error = NULL;
    gboolean ok = plan_spec_resolve(plan, m, c, &error) && strategy_check(plan, m, &error);
    ck_assert(!ok);
    char *message = g_strdup(error->message);
    g_error_free(error);
    return message;
}

START_TEST(bad_sizes_are_refused)
{
    ModelSpec *m = test_gpt(L, H, A, V, 100); /* 100 tokens: 2 x 4 does not divide them */
    ClusterSpec *c = test_cluster(1, 8, 300e9, 25e9);
    PlanSpec *p = plan_spec_new();
    p->cp = 3; /* 3 does not divide 8 GPUs */
    g_autofree char *gpus = refusal(p, m, c);
    ck_assert_msg(strstr(gpus, "cp: expected a size for which tp x cp x pp divides the cluster's 8 GPUs"), "%s",
                  gpus);
    plan_spec_free(p);
    p = plan_spec_new();
    p->cp = 4;
    p->tp = 4; /* 16 > 8 GPUs */
    g_autofree char *many = refusal(p, m, c);
    ck_assert_msg(strstr(many, "tp 4 x cp 4 x pp 1 = 16"), "%s", many);
    plan_spec_free(p);
    p = plan_spec_new();
    p->cp = 4;
    p->tp = 2;
    p->dp = 1;
    p->cp_algorithm = CP_ALL_TO_ALL; /* 8 heads over tp x cp = 8: fine */
    ClusterSpec *c16 = test_cluster(2, 8, 300e9, 25e9);
    GError *error = NULL;
    ck_assert(plan_spec_resolve(p, m, c16, &error) && strategy_check(p, m, &error));
    p->tp = 4; /* 16 does not divide 8 heads */
    g_autofree char *heads = refusal(p, m, c16);
    ck_assert_msg(strstr(heads, "tp x cp = 4 x 4 divides attention_heads = 8"), "%s", heads);
    plan_spec_free(p);
    p = plan_spec_new();
    p->cp = 2; /* ring: 2 x 2 divides 100 tokens */
    GError *ok = NULL;
    ck_assert(plan_spec_resolve(p, m, c, &ok) && strategy_check(p, m, &ok));
    plan_spec_free(p);
    p = plan_spec_new();
    p->cp = 4; /* ring: 2 x 4 = 8 does not divide 100 */
    g_autofree char *seq = refusal(p, m, c);
    ck_assert_msg(strstr(seq, "2 x cp divides seq_length = 100"), "%s", seq);
    plan_spec_free(p);
    cluster_spec_free(c16);
    cluster_spec_free(c);
    model_spec_free(m);
}
END_TEST

Suite *suite_context_parallel(void)
{
    Suite *s = suite_create("context_parallel");
    TCase *tc = tcase_create("closed forms");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, activations_divide_by_cp);
    tcase_add_test(tc, ring_bytes_per_layer);
    tcase_add_test(tc, ulysses_all_to_all_bytes);
    tcase_add_test(tc, zero_bubble_exchanges_as_1f1b);
    tcase_add_test(tc, gradients_reduce_over_dp_times_cp);
    tcase_add_test(tc, cp_one_is_today);
    tcase_add_test(tc, bad_sizes_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
