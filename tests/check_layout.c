/* check_layout.c: rank coordinates, placement on nodes and communicator
 * groups, for every rank_order.
 *
 * The sizes tp 2, dp 3, pp 4 are distinct on purpose, so that a stride or a
 * group taken from the wrong coordinate changes the numbers. Expected
 * values follow layout.h's rule: ranks are numbered fastest-varying
 * coordinate first, so with order (x, y, z) rank = x + X (y + Y z). */
#include "layout/layout.h"
#include "net/topology.h"
#include "testutil.h"

enum { T = 2, D = 3, P = 4, RANKS = T * D * P };

static Layout *layout_of(int tp, int dp, int pp, RankOrder order, const ClusterSpec *c)
{
    PlanSpec *plan = plan_spec_new();
    plan->tp = tp;
    plan->dp = dp;
    plan->pp = pp;
    plan->rank_order = order;
    Layout *l = layout_new(plan, c);
    plan_spec_free(plan);
    return l;
}

/* Strides (rank = tp st_tp + dp st_dp + pp st_pp) of each order for
 * T = 2, D = 3, P = 4, by hand: the first kind 1, the second the first's
 * size, the third the product of the first two. */
static const struct {
    RankOrder order;
    int tp, dp, pp;
} strides[] = {
    {RANK_ORDER_TP_DP_PP, 1, 2, 6},  /* tp 1, dp T = 2, pp T D = 6 */
    {RANK_ORDER_TP_PP_DP, 1, 8, 2},  /* tp 1, pp T = 2, dp T P = 8 */
    {RANK_ORDER_DP_TP_PP, 3, 1, 6},  /* dp 1, tp D = 3, pp D T = 6 */
    {RANK_ORDER_DP_PP_TP, 12, 1, 3}, /* dp 1, pp D = 3, tp D P = 12 */
    {RANK_ORDER_PP_TP_DP, 4, 8, 1},  /* pp 1, tp P = 4, dp P T = 8 */
    {RANK_ORDER_PP_DP_TP, 12, 4, 1}, /* pp 1, dp P = 4, tp P D = 12 */
};

/* The default order, tp-dp-pp, on a few ranks worked out by hand:
 * rank = tp + 2 (dp + 3 pp). */
START_TEST(default_order_by_hand)
{
    ClusterSpec *c = test_cluster(3, 8, 1e9, 1e9);
    Layout *l = layout_of(T, D, P, RANK_ORDER_TP_DP_PP, c);
    ck_assert_int_eq(layout_ranks(l), 24);
    Coord c0 = layout_coord(l, 0);
    ck_assert(c0.tp == 0 && c0.dp == 0 && c0.pp == 0);
    Coord c1 = layout_coord(l, 1); /* 1 = 1 + 2 (0 + 3 x 0) */
    ck_assert(c1.tp == 1 && c1.dp == 0 && c1.pp == 0);
    Coord c7 = layout_coord(l, 7); /* 7 = 1 + 2 x 3: dp + 3 pp = 3, so dp 0, pp 1 */
    ck_assert(c7.tp == 1 && c7.dp == 0 && c7.pp == 1);
    Coord c13 = layout_coord(l, 13); /* 13 = 1 + 2 x 6: dp 0, pp 2 */
    ck_assert(c13.tp == 1 && c13.dp == 0 && c13.pp == 2);
    Coord c22 = layout_coord(l, 22); /* 22 = 0 + 2 x 11: dp 2, pp 3 */
    ck_assert(c22.tp == 0 && c22.dp == 2 && c22.pp == 3);
    ck_assert_int_eq(layout_rank(l, (Coord){.tp = 1, .dp = 2, .pp = 3}), 23); /* the last */
    ck_assert_int_eq(layout_rank(l, (Coord){.tp = 0, .dp = 1, .pp = 2}), 14); /* 2 (1 + 6) */

    /* groups: TP groups numbered dp + D pp, DP groups tp + T pp, PP groups
     * tp + T dp (the two other coordinates, the lower kind fastest) */
    ck_assert_int_eq(layout_groups(l, GROUP_TP), 12); /* 24 / 2 */
    ck_assert_int_eq(layout_groups(l, GROUP_DP), 8);  /* 24 / 3 */
    ck_assert_int_eq(layout_groups(l, GROUP_PP), 6);  /* 24 / 4 */
    int n;
    /* rank 13 = (tp 1, dp 0, pp 2): TP group 0 + 3 x 2 = 6, ranks 12, 13 */
    ck_assert_int_eq(layout_group_of(l, GROUP_TP, 13), 6);
    const int *m = layout_group(l, GROUP_TP, 6, &n);
    ck_assert_int_eq(n, 2);
    ck_assert(m[0] == 12 && m[1] == 13);
    /* its DP group 1 + 2 x 2 = 5: dp 0, 1, 2 are ranks 1 + 2 (d + 6) */
    ck_assert_int_eq(layout_group_of(l, GROUP_DP, 13), 5);
    m = layout_group(l, GROUP_DP, 5, &n);
    ck_assert_int_eq(n, 3);
    ck_assert(m[0] == 13 && m[1] == 15 && m[2] == 17);
    /* its PP group 1 + 2 x 0 = 1: pp 0 .. 3 are ranks 1 + 6 p */
    ck_assert_int_eq(layout_group_of(l, GROUP_PP, 13), 1);
    m = layout_group(l, GROUP_PP, 1, &n);
    ck_assert_int_eq(n, 4);
    ck_assert(m[0] == 1 && m[1] == 7 && m[2] == 13 && m[3] == 19);
    layout_free(l);
    cluster_spec_free(c);
}
END_TEST

/* Every order: rank and coordinates follow the strides above, both ways,
 * and every rank 0 .. 23 is one coordinate triple. */
START_TEST(every_order_numbers_ranks_by_its_strides)
{
    ClusterSpec *c = test_cluster(3, 8, 1e9, 1e9);
    int o = _i;
    Layout *l = layout_of(T, D, P, strides[o].order, c);
    ck_assert_int_eq(layout_ranks(l), RANKS);
    int seen[RANKS] = {0};
    for (int t = 0; t < T; t++)
        for (int d = 0; d < D; d++)
            for (int p = 0; p < P; p++) {
                Coord co = {.tp = t, .dp = d, .pp = p};
                int r = t * strides[o].tp + d * strides[o].dp + p * strides[o].pp;
                ck_assert_int_eq(layout_rank(l, co), r);
                Coord back = layout_coord(l, r);
                ck_assert_msg(back.tp == t && back.dp == d && back.pp == p,
                              "order %d rank %d: (%d, %d, %d), expected (%d, %d, %d)", o, r,
                              back.tp, back.dp, back.pp, t, d, p);
                seen[r]++;
            }
    for (int r = 0; r < RANKS; r++)
        ck_assert_int_eq(seen[r], 1);
    layout_free(l);
    cluster_spec_free(c);
}
END_TEST

/* Every order, every kind: the groups partition the ranks; a group's
 * member i has coordinate i of its kind and the group's other two
 * coordinates; the group's index is those two coordinates, the lower kind
 * (tp < dp < pp) fastest, whatever the rank order. */
START_TEST(every_order_groups_partition_the_ranks)
{
    ClusterSpec *c = test_cluster(3, 8, 1e9, 1e9);
    int o = _i;
    Layout *l = layout_of(T, D, P, strides[o].order, c);
    static const int size[] = {[GROUP_TP] = T, [GROUP_DP] = D, [GROUP_PP] = P};
    for (int k = GROUP_TP; k <= GROUP_PP; k++) { /* cp is 1; check_layout's cp test has it */
        ck_assert_int_eq(layout_groups(l, (GroupKind)k), RANKS / size[k]);
        int in_group[RANKS] = {0};
        for (int gi = 0; gi < layout_groups(l, (GroupKind)k); gi++) {
            int n;
            const int *m = layout_group(l, (GroupKind)k, gi, &n);
            ck_assert_int_eq(n, size[k]);
            for (int i = 0; i < n; i++) {
                ck_assert(m[i] >= 0 && m[i] < RANKS);
                in_group[m[i]]++;
                ck_assert_int_eq(layout_group_of(l, (GroupKind)k, m[i]), gi);
                Coord co = layout_coord(l, m[i]);
                Coord first = layout_coord(l, m[0]);
                int own = k == GROUP_TP ? co.tp : k == GROUP_DP ? co.dp : co.pp;
                ck_assert_int_eq(own, i); /* members in coordinate order */
                int index = k == GROUP_TP   ? co.dp + D * co.pp
                            : k == GROUP_DP ? co.tp + T * co.pp
                                            : co.tp + T * co.dp;
                ck_assert_int_eq(index, gi);
                if (k != GROUP_TP)
                    ck_assert_int_eq(co.tp, first.tp);
                if (k != GROUP_DP)
                    ck_assert_int_eq(co.dp, first.dp);
                if (k != GROUP_PP)
                    ck_assert_int_eq(co.pp, first.pp);
            }
        }
        for (int r = 0; r < RANKS; r++)
            ck_assert_msg(in_group[r] == 1, "order %d kind %d: rank %d in %d groups", o, k, r,
                          in_group[r]);
    }
    layout_free(l);
    cluster_spec_free(c);
}
END_TEST

/* Rank r runs on GPU r, on node r / gpus_per_node. tp 4 x dp 2 x pp 2 on
 * four nodes of 4 GPUs: in the default order (rank = tp + 4 (dp + 2 pp))
 * a TP group is ranks 4 g .. 4 g + 3, one node (node g); a PP group's two
 * stages are ranks 8 apart, two nodes apart. In dp-tp-pp order
 * (rank = dp + 2 (tp + 4 pp)) the TP group of rank 0 is ranks 0, 2, 4, 6,
 * on nodes 0, 0, 1, 1. */
START_TEST(placement_on_nodes)
{
    ClusterSpec *c = test_cluster(4, 4, 1e9, 1e9);
    Topology *topo = topology_new(c, 4);
    for (int g = 0; g < 16; g++)
        ck_assert_int_eq(topology_node(topo, g), g / 4);
    Layout *l = layout_of(4, 2, 2, RANK_ORDER_TP_DP_PP, c);
    for (int gi = 0; gi < layout_groups(l, GROUP_TP); gi++) {
        int n;
        const int *m = layout_group(l, GROUP_TP, gi, &n);
        for (int i = 0; i < n; i++)
            ck_assert_int_eq(topology_node(topo, m[i]), gi); /* TP group g fills node g */
    }
    for (int gi = 0; gi < layout_groups(l, GROUP_PP); gi++) {
        int n;
        const int *m = layout_group(l, GROUP_PP, gi, &n);
        ck_assert_int_eq(n, 2);
        ck_assert_int_eq(m[1] - m[0], 8);
        ck_assert_int_eq(topology_node(topo, m[1]) - topology_node(topo, m[0]), 2);
    }
    layout_free(l);

    l = layout_of(4, 2, 2, RANK_ORDER_DP_TP_PP, c);
    int n;
    const int *m = layout_group(l, GROUP_TP, layout_group_of(l, GROUP_TP, 0), &n);
    ck_assert_int_eq(n, 4);
    ck_assert(m[0] == 0 && m[1] == 2 && m[2] == 4 && m[3] == 6);
    ck_assert_int_eq(topology_node(topo, m[1]), 0);
    ck_assert_int_eq(topology_node(topo, m[2]), 1);
    layout_free(l);
    topology_free(topo);
    cluster_spec_free(c);
}
END_TEST

/* A plan using fewer GPUs than the cluster has: 2 ranks on 8 GPUs. */
START_TEST(fewer_ranks_than_gpus)
{
    ClusterSpec *c = test_cluster(1, 8, 1e9, 1e9);
    Layout *l = layout_of(1, 2, 1, RANK_ORDER_TP_DP_PP, c);
    ck_assert_int_eq(layout_ranks(l), 2);
    ck_assert_int_eq(layout_groups(l, GROUP_TP), 2); /* each rank its own TP group */
    ck_assert_int_eq(layout_groups(l, GROUP_DP), 1);
    int n;
    const int *m = layout_group(l, GROUP_DP, 0, &n);
    ck_assert(n == 2 && m[0] == 0 && m[1] == 1);
    m = layout_group(l, GROUP_TP, 1, &n);
    ck_assert(n == 1 && m[0] == 1);
    layout_free(l);
    cluster_spec_free(c);
}
END_TEST

/* Context parallelism: tp 2, cp 2, dp 3 in the default order numbers
 * rank = t + 2 (c + 2 d) (Megatron-Core's tp-cp-dp-pp); the CP group of
 * rank 1 is {1, 3}, its dp x cp group the ranks of tp coordinate 1,
 * {1, 3, 5, 7, 9, 11}. With cp = 1 the orders that name cp number ranks as
 * the default does. */
START_TEST(cp_sits_after_tp)
{
    ClusterSpec *c = test_cluster(2, 8, 1e9, 1e9);
    PlanSpec *plan = plan_spec_new();
    plan->tp = 2;
    plan->cp = 2;
    plan->dp = 3;
    Layout *l = layout_new(plan, c);
    ck_assert_int_eq(layout_rank(l, (Coord){.tp = 1, .cp = 1, .dp = 2}), 1 + 2 * (1 + 2 * 2));
    int n;
    const int *m = layout_group(l, GROUP_CP, layout_group_of(l, GROUP_CP, 1), &n);
    ck_assert_int_eq(n, 2);
    ck_assert(m[0] == 1 && m[1] == 3);
    m = layout_group(l, GROUP_DP_CP, layout_group_of(l, GROUP_DP_CP, 1), &n);
    ck_assert_int_eq(n, 6);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(m[i], 1 + 2 * i);
    layout_free(l);
    plan->cp = 1;
    Layout *by_default = layout_new(plan, c);
    for (RankOrder o = RANK_ORDER_CP_TP_DP_PP; o <= RANK_ORDER_TP_DP_CP_PP; o++) {
        plan->rank_order = o;
        l = layout_new(plan, c);
        for (int r = 0; r < layout_ranks(l); r++) {
            Coord a = layout_coord(l, r), b = layout_coord(by_default, r);
            ck_assert(a.tp == b.tp && a.dp == b.dp && a.pp == b.pp && a.cp == 0);
        }
        layout_free(l);
    }
    layout_free(by_default);
    plan_spec_free(plan);
    cluster_spec_free(c);
}
END_TEST

/* Every group of every kind along the coordinates, for every rank order
 * with tp 2, cp 3, dp 2, pp 5 (distinct sizes but the two 2s, each one's
 * stride distinct): its members are the ranks that layout_group_of puts in
 * it, from layout_coord, in increasing order. The groups are filled in one
 * pass that advances the coordinates rank by rank (layout.c); this is
 * their definition, checked rank by rank. */
START_TEST(groups_hold_the_ranks_their_coordinates_say)
{
    ClusterSpec *c = test_cluster(8, 8, 1e9, 1e9);
    for (int order = 0; order < RANK_ORDERS; order++) {
        PlanSpec *plan = plan_spec_new();
        plan->tp = 2;
        plan->cp = 3;
        plan->dp = 2;
        plan->pp = 5;
        plan->rank_order = (RankOrder)order;
        Layout *l = layout_new(plan, c);
        ck_assert_int_eq(layout_ranks(l), 60);
        for (int kind = 0; kind < GROUP_EP; kind++)
            for (int g = 0; g < layout_groups(l, (GroupKind)kind); g++) {
                int n, at = 0;
                const int *members = layout_group(l, (GroupKind)kind, g, &n);
                for (int r = 0; r < layout_ranks(l); r++)
                    if (layout_group_of(l, (GroupKind)kind, r) == g) {
                        ck_assert_int_lt(at, n);
                        ck_assert_msg(members[at++] == r, "order %d kind %d group %d", order, kind,
                                      g);
                    }
                ck_assert_int_eq(at, n);
            }
        layout_free(l);
        plan_spec_free(plan);
    }
    cluster_spec_free(c);
}
END_TEST

Suite *suite_layout(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("ranks");
    tcase_add_test(tc, default_order_by_hand);
    tcase_add_test(tc, cp_sits_after_tp);
    tcase_add_loop_test(tc, every_order_numbers_ranks_by_its_strides, 0, G_N_ELEMENTS(strides));
    tcase_add_loop_test(tc, every_order_groups_partition_the_ranks, 0, G_N_ELEMENTS(strides));
    tcase_add_test(tc, placement_on_nodes);
    tcase_add_test(tc, fewer_ranks_than_gpus);
    tcase_add_test(tc, groups_hold_the_ranks_their_coordinates_say);
    suite_add_tcase(s, tc);
    return s;
}
