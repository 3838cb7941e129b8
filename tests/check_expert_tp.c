/* check_expert_tp.c: expert tensor parallelism (--expert-tensor-parallel-size,
 * expert_parallel.c, layout.h's expert grid, docs/model.md "Expert tensor
 * parallelism") held to closed forms worked by hand. A MoE model of L
 * layers, every one MoE, E experts of f_e each (SwiGLU: 3 h f_e weights an
 * expert, no biases), k per token, on one node of 4 GPUs, tp 2 x dp 2:
 *   - the expert grid, by hand: Megatron-Core's RankGenerator "tp-ep-dp"
 *     over a stage's ranks numbers rank = etp_i + etp (ep_i + ep edp_i);
 *   - parameters: each rank holds E / ep experts, each split over etp: with
 *     etp 1 against etp 2 (= tp) a rank holds the other half of each of
 *     its experts, L (E / ep) 3 h f_e / 2 weights more, 2 bytes each;
 *   - gradients: the routed experts' all-reduce over the expert
 *     data-parallel group of tp x dp / (etp x ep) ranks, a ring sending
 *     2 (n - 1)/n of its 4-byte gradients (Rajbhandari et al. 2020, section
 *     7.1): with ep 2, 1 rank at etp 2 (nothing sent), 2 at etp 1, X = L (E /
 *     ep) 3 h f_e weights: 4 X more bytes; the dense rest is the same;
 *   - the token exchange: each rank routes its share of its tensor-parallel
 *     group's b s tokens, b s etp / tp, and an all-to-all of its n k h bf16
 *     elements sends (ep - 1)/ep of them, 4 per layer and micro-batch;
 *   - hardware FLOPs: the experts' GEMMs do the same work whatever etp (tp /
 *     etp times the rows at 1 / (tp / etp) of f_e); the router, replicated
 *     over a tensor-parallel group at etp = tp, runs once per token at etp
 *     1: (tp - 1) 2 s h E fewer FLOPs per sequence and layer, 3 times with
 *     the backward;
 *   - the full replay reports what the reduced one does (the expert groups
 *     cut across tp, which the symmetry must respect);
 *   - etp must divide tp, and ep x etp tp x cp x dp. */
#include "cost/transformer.h"
#include "layout/layout.h"
#include "strategy/strategy.h"
#include "testutil.h"

enum { L = 2, H = 256, A = 8, V = 512, S = 128, E = 8, K = 2, FE = 512 };

/* A replay on one node of 4 GPUs at tp 2 x dp 2, m micro-batches of b. */
static Run etp_run(int etp, int ep, int m, int b, gboolean full)
{
    Run run = run_new(test_moe(L, H, A, V, S, E, K, FE), test_cluster(1, 4, 300e9, 25e9));
    run.plan->tp = 2;
    run.plan->expert_tensor_parallel_size = etp;
    run.plan->ep = ep;
    run.plan->micro_batch_size = b;
    run.plan->global_batch_size = 2 * m * b;
    run.plan->collective_algorithm = ALGORITHM_RING;
    run.plan->full_fidelity = full;
    run_simulate(&run);
    return run;
}

/* The members of group `index` of `kind`, as a set of rank bits. */
static unsigned group_bits(const Layout *l, GroupKind kind, int index)
{
    int n;
    const int *members = layout_group(l, kind, index, &n);
    unsigned bits = 0;
    for (int i = 0; i < n; i++)
        bits |= 1u << members[i];
    return bits;
}

START_TEST(expert_grid_by_hand)
{
    /* tp 4 x dp 2 on 8 GPUs, etp 2, ep 2: expert data parallel 4 x 2 / 4 = 2 */
    PlanSpec *plan = plan_spec_new();
    plan->tp = 4;
    plan->dp = 2;
    plan->ep = 2;
    plan->expert_tensor_parallel_size = 2;
    ClusterSpec *c = test_cluster(1, 8, 300e9, 25e9);
    g_autoptr(Layout) l = layout_new(plan, c);
    ck_assert_int_eq(layout_size(l, GROUP_ETP), 2);
    ck_assert_int_eq(layout_size(l, GROUP_EDP), 2);
    /* rank = etp_i + 2 ep_i + 4 edp_i */
    for (int r = 0; r < 8; r++) {
        int etp_i = r % 2, ep_i = r / 2 % 2, edp_i = r / 4;
        unsigned etp = 3u << (r - etp_i);
        unsigned ep = 1u << (etp_i + 4 * edp_i) | 1u << (etp_i + 2 + 4 * edp_i);
        unsigned edp = 1u << (etp_i + 2 * ep_i) | 1u << (etp_i + 2 * ep_i + 4);
        ck_assert_uint_eq(group_bits(l, GROUP_ETP, layout_group_of(l, GROUP_ETP, r)), etp);
        ck_assert_uint_eq(group_bits(l, GROUP_EP, layout_group_of(l, GROUP_EP, r)), ep);
        ck_assert_uint_eq(group_bits(l, GROUP_EDP, layout_group_of(l, GROUP_EDP, r)), edp);
    }
    cluster_spec_free(c);
    plan_spec_free(plan);
}
END_TEST

START_TEST(experts_whole_and_their_gradients)
{
    const int ep = 2;
    Run split = etp_run(2, ep, 1, 1, FALSE), whole = etp_run(1, ep, 1, 1, FALSE);
    double x = (double)L * E / ep * 3 * H * FE; /* a rank's experts' weights, whole */
    ck_assert_rel(whole.rep.metrics.peak_split[MEM_PARAMS] -
                      split.rep.metrics.peak_split[MEM_PARAMS],
                  2 * x / 2, 1e-12);
    const CommStat *a = &split.rep.metrics.comm[TAG_DP][COLL_ALL_REDUCE];
    const CommStat *b = &whole.rep.metrics.comm[TAG_DP][COLL_ALL_REDUCE];
    ck_assert_rel(b->bytes - a->bytes, 2 * (2 - 1.0) / 2 * 4 * x, 1e-12);
    run_free(&split);
    run_free(&whole);
}
END_TEST

START_TEST(tokens_exchanged)
{
    const int m = 3, b = 2;
    for (int etp = 1; etp <= 2; etp++) {
        for (int ep = 2; ep <= 4 / etp; ep *= 2) {
            Run run = etp_run(etp, ep, m, b, FALSE);
            const CommStat *x = &run.rep.metrics.comm[TAG_EP][COLL_ALL_TO_ALL];
            double buffer = 2.0 * b * S * etp / 2 * K * H;
            ck_assert_int_eq(x->count, m * L * 4);
            ck_assert_rel(x->bytes, m * L * 4 * (ep - 1.0) / ep * buffer, 1e-12);
            run_free(&run);
        }
    }
}
END_TEST

START_TEST(router_runs_once_per_token)
{
    const int m = 2;
    Run split = etp_run(2, 2, m, 1, FALSE), whole = etp_run(1, 2, m, 1, FALSE);
    double sequences = 2 * m, tp = 2;
    ck_assert_rel(split.rep.metrics.hardware_flops - whole.rep.metrics.hardware_flops,
                  sequences * L * 3 * (tp - 1) * 2.0 * S * H * E, 1e-9);
    ck_assert_double_eq(split.rep.metrics.model_flops, whole.rep.metrics.model_flops);
    run_free(&split);
    run_free(&whole);
}
END_TEST

START_TEST(full_replay_is_the_reduced_one)
{
    for (int ep = 1; ep <= 4; ep *= 2) {
        Run fast = etp_run(1, ep, 2, 1, FALSE), full = etp_run(1, ep, 2, 1, TRUE);
        ck_assert_int_eq(full.rep.metrics.simulated_ranks, 4);
        ck_assert_double_eq(fast.rep.metrics.step_time_s, full.rep.metrics.step_time_s);
        ck_assert_double_eq(fast.rep.metrics.peak_bytes, full.rep.metrics.peak_bytes);
        for (int t = 0; t < TAG_KINDS; t++)
            for (int op = 0; op < COLL_N_OPS; op++)
                ck_assert_double_eq(fast.rep.metrics.comm[t][op].bytes,
                                    full.rep.metrics.comm[t][op].bytes);
        run_free(&fast);
        run_free(&full);
    }
}
END_TEST

/* The checks name the field and what it must be. */
static void refused(int tp, int etp, int ep, const char *field, const char *want)
{
    ModelSpec *m = test_moe(L, H, A, V, S, E, K, FE);
    ClusterSpec *c = test_cluster(1, 8, 300e9, 25e9);
    PlanSpec *plan = plan_spec_new();
    plan->tp = tp;
    plan->expert_tensor_parallel_size = etp;
    plan->ep = ep;
    GError *error = NULL;
    ck_assert(!strategy_resolve(plan, m, c, &error));
    ck_assert_msg(strstr(error->message, field) && strstr(error->message, want), "%s",
                  error->message);
    g_error_free(error);
    plan_spec_free(plan);
    cluster_spec_free(c);
    model_spec_free(m);
}

START_TEST(checks)
{
    refused(4, 3, 1, "expert_tensor_parallel_size", "a divisor of tp = 4");
    /* tp 4 x dp 2 / etp 2 = 4 ranks for ep */
    refused(4, 2, 8, "ep", "a divisor of tp x cp x dp / expert-tensor-parallel-size = 4");
    ModelSpec *dense = test_gpt(L, H, A, V, S);
    ClusterSpec *c = test_cluster(1, 8, 300e9, 25e9);
    PlanSpec *plan = plan_spec_new();
    plan->tp = 4;
    plan->expert_tensor_parallel_size = 1;
    GError *error = NULL;
    ck_assert(!strategy_resolve(plan, dense, c, &error));
    ck_assert_msg(strstr(error->message, "for a model without experts"), "%s", error->message);
    g_error_free(error);
    /* ep 8 folds over tp 4 x dp 2 with etp 1 */
    plan->expert_tensor_parallel_size = 1;
    plan->ep = 8;
    ModelSpec *moe = test_moe(L, H, A, V, S, E, K, FE);
    ck_assert(strategy_resolve(plan, moe, c, NULL));
    plan_spec_free(plan);
    cluster_spec_free(c);
    model_spec_free(dense);
    model_spec_free(moe);
}
END_TEST

Suite *suite_expert_tp(void)
{
    Suite *s = suite_create("expert_tp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, expert_grid_by_hand);
    tcase_add_test(tc, experts_whole_and_their_gradients);
    tcase_add_test(tc, tokens_exchanged);
    tcase_add_test(tc, router_runs_once_per_token);
    tcase_add_test(tc, full_replay_is_the_reduced_one);
    tcase_add_test(tc, checks);
    suite_add_tcase(s, tc);
    return s;
}
