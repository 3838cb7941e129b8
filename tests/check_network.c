/* check_network.c: collectives on links, alone and together, against the
 * alpha-beta forms of docs/model.md, "Choosing an algorithm" (zero latency,
 * so the forms are bandwidth only) and nccl-tests' bus bandwidth. */
#include <math.h>

#include "engine/engine.h"
#include "app/collbench.h"
#include "app/simulate.h"
#include "testutil.h"

enum { DP, PP, TAGS }; /* purposes of the transfers in these tests */

static const double NVLINK = 300e9, IB = 25e9, S = 1 << 28;

/* The time of one all-reduce of S bytes over the first n GPUs. */
static CollRow one(ClusterSpec *c, CollOp op, int n, CollAlgorithm a)
{
    GArray *rows = collbench_run(c, op, n, S, S, a, NULL);
    ck_assert_ptr_nonnull(rows);
    CollRow row = g_array_index(rows, CollRow, 0);
    g_array_free(rows, TRUE);
    return row;
}

/* Inside a node (docs/model.md, alpha-beta with alpha = 0): ring all-reduce
 * 2 (n - 1)/n S / beta, so busbw = NVLink's 300 GB/s; ring all-gather and
 * reduce-scatter and direct all-to-all (n - 1)/n S / beta; send/recv
 * S / beta. */
START_TEST(ring_inside_a_node)
{
    ClusterSpec *c = test_cluster(1, 8, NVLINK, IB);
    CollRow r = one(c, COLL_ALL_REDUCE, 8, ALGORITHM_RING);
    ck_assert_rel(r.time_s, 2.0 * 7 / 8 * S / NVLINK, 1e-12);
    ck_assert_rel(r.busbw_Bps, NVLINK, 1e-12);
    r = one(c, COLL_ALL_GATHER, 8, ALGORITHM_RING); /* (n - 1)/n S / beta */
    ck_assert_rel(r.time_s, 7.0 / 8 * S / NVLINK, 1e-12);
    r = one(c, COLL_REDUCE_SCATTER, 8, ALGORITHM_RING); /* (n - 1)/n S / beta */
    ck_assert_rel(r.time_s, 7.0 / 8 * S / NVLINK, 1e-12);
    r = one(c, COLL_ALL_TO_ALL, 8, ALGORITHM_AUTO); /* direct: (n - 1)/n S / beta */
    ck_assert_rel(r.time_s, 7.0 / 8 * S / NVLINK, 1e-12);
    ck_assert_int_eq(r.algorithm, ALGORITHM_DIRECT);
    r = one(c, COLL_SEND_RECV, 2, ALGORITHM_AUTO); /* alpha + S / beta, alpha = 0 */
    ck_assert_rel(r.time_s, S / NVLINK, 1e-12);
    cluster_spec_free(c);
}
END_TEST

/* With latency: a ring all-reduce sends 2 (n - 1) messages one after the
 * other, 2 (n - 1) alpha + 2 (n - 1)/n S / beta; across nodes alpha is
 * InfiniBand's. */
START_TEST(latency_per_message)
{
    ClusterSpec *c = test_cluster(1, 8, NVLINK, IB);
    c->intra.latency_s = 2e-6;
    CollRow r = one(c, COLL_ALL_REDUCE, 8, ALGORITHM_RING);
    ck_assert_rel(r.time_s, 14 * 2e-6 + 2.0 * 7 / 8 * S / NVLINK, 1e-12);
    cluster_spec_free(c);
    c = test_cluster(4, 1, NVLINK, IB);
    c->inter.latency_s = 5e-6;
    r = one(c, COLL_ALL_GATHER, 4, ALGORITHM_RING);
    ck_assert_rel(r.time_s, 3 * 5e-6 + 3.0 / 4 * S / IB, 1e-12);
    cluster_spec_free(c);
}
END_TEST

/* Ring across nodes, one GPU each: every hop crosses InfiniBand, busbw =
 * 25 GB/s. With 8 GPUs and 8 NICs a node, NCCL's 8 channels leave each
 * node through 8 NICs: busbw = 8 x 25 GB/s (NVLink, 7/8 as loaded, is not
 * the bottleneck). */
START_TEST(ring_across_nodes)
{
    ClusterSpec *c = test_cluster(4, 1, NVLINK, IB);
    CollRow r = one(c, COLL_ALL_REDUCE, 4, ALGORITHM_RING);
    ck_assert_rel(r.time_s, 2.0 * 3 / 4 * S / IB, 1e-12);
    ck_assert_rel(r.busbw_Bps, IB, 1e-12);
    cluster_spec_free(c);
    c = test_cluster(2, 8, NVLINK, IB);
    r = one(c, COLL_ALL_REDUCE, 16, ALGORITHM_RING);
    ck_assert_rel(r.busbw_Bps, 8 * IB, 1e-12);
    cluster_spec_free(c);
}
END_TEST

/* Hierarchical over k nodes of g GPUs (docs/model.md): reduce-scatter in the
 * node (g - 1)/g S / beta_intra, all-reduce of S/g on each rail
 * 2 (k - 1)/k (S/g) / beta_inter, all-gather in the node. */
START_TEST(hierarchical_across_nodes)
{
    const int k = 2, g = 8;
    ClusterSpec *c = test_cluster(k, g, NVLINK, IB);
    CollRow r = one(c, COLL_ALL_REDUCE, k * g, ALGORITHM_HIERARCHICAL);
    double expected = 2 * (g - 1.0) / g * S / NVLINK + 2 * (k - 1.0) / k * (S / g) / IB;
    ck_assert_rel(r.time_s, expected, 1e-12);
    ck_assert_int_eq(r.algorithm, ALGORITHM_HIERARCHICAL);
    cluster_spec_free(c);
}
END_TEST

/* Double binary tree: about 2 S / beta for large S (docs/model.md). */
START_TEST(tree_inside_a_node)
{
    ClusterSpec *c = test_cluster(1, 8, NVLINK, IB);
    CollRow r = one(c, COLL_ALL_REDUCE, 8, ALGORITHM_TREE);
    ck_assert_rel(r.time_s, 2 * S / NVLINK, 1e-12);
    cluster_spec_free(c);
}
END_TEST

/* auto takes the faster alone: with latency, the tree's 2 log2 n messages
 * beat the ring's 2 (n - 1) for small sizes; the ring's 2 (n - 1)/n S
 * beats the tree's 2 S for large ones. */
START_TEST(auto_picks_by_size)
{
    ClusterSpec *c = test_cluster(8, 8, NVLINK, IB);
    c->intra.latency_s = 2e-6;
    c->inter.latency_s = 5e-6;
    GArray *rows = collbench_run(c, COLL_ALL_REDUCE, 64, 1024, 1 << 30, ALGORITHM_AUTO, NULL);
    ck_assert_int_eq(g_array_index(rows, CollRow, 0).algorithm, ALGORITHM_TREE);
    ck_assert_int_ne(g_array_index(rows, CollRow, rows->len - 1).algorithm, ALGORITHM_TREE);
    g_array_free(rows, TRUE);
    cluster_spec_free(c);
}
END_TEST

/* A data-parallel all-reduce of S and a pipeline send of S/2, both from
 * node 0 to node 1 over its one NIC (25 GB/s), at once. Alone: S / beta and
 * S/2 / beta. Together they share the NIC: each is slower, and the NIC,
 * never idle, has moved the S + S/2 bytes when the last ends, at
 * (S + S/2) / beta. Without contention each takes its time alone. */
static Replay *dp_and_pp(gboolean contention, TaskId *ar, TaskId *send)
{
    ClusterSpec *c = test_cluster(2, 1, NVLINK, IB);
    Graph *g = graph_new(2, 2);
    int both[2] = {0, 1};
    int group = graph_add_group(g, both, 2), pair = graph_add_group(g, both, 2);
    for (int r = 0; r < 2; r++)
        *ar = graph_collective(g, group, r, 0, COLL_ALL_REDUCE, S, DP, (TaskName){.fmt = "dp"});
    *send = graph_collective(g, pair, 0, 1, COLL_SEND_RECV, S / 2, PP, (TaskName){.fmt = "pp"});
    graph_collective(g, pair, 1, GRAPH_OFF_STREAM, COLL_SEND_RECV, S / 2, PP,
                     (TaskName){.fmt = "pp"});
    ck_assert(graph_seal(g, NULL));
    EngineNet net = {
        .cluster = c, .algorithm = ALGORITHM_RING, .contention = contention, .tags = TAGS};
    Replay *r = engine_run(g, &net, NULL);
    ck_assert_ptr_nonnull(r);
    graph_free(g);
    cluster_spec_free(c);
    return r;
}

START_TEST(dp_and_pipeline_share_a_nic)
{
    TaskId ar, send;
    Replay *r = dp_and_pp(TRUE, &ar, &send);
    double ar_s = r->end_s[ar] - r->start_s[ar], send_s = r->end_s[send] - r->start_s[send];
    ck_assert(ar_s > S / IB * (1 + 1e-9));
    ck_assert(send_s > S / 2 / IB * (1 + 1e-9));
    ck_assert_rel(r->makespan_s, 1.5 * S / IB, 1e-12);
    int out0 = -1; /* node 0's NIC, out: the one both cross */
    for (int l = 0; l < topology_links(replay_topology(r)); l++)
        if (replay_link_bytes(r, l) > 1.4 * S)
            out0 = l;
    ck_assert_int_ge(out0, 0);
    ck_assert_rel(replay_link_tag_bytes(r, out0, DP), S, 1e-12);
    ck_assert_rel(replay_link_tag_bytes(r, out0, PP), S / 2, 1e-12);
    replay_free(r);

    r = dp_and_pp(FALSE, &ar, &send);
    ck_assert_rel(r->end_s[ar], S / IB, 1e-12);
    ck_assert_rel(r->end_s[send], S / 2 / IB, 1e-12);
    replay_free(r);
}
END_TEST

/* comm_compute_interference 0.5: a 1 s compute task beside a 0.5 s
 * collective on its GPU runs at half speed while the collective runs,
 * 0.25 s of work in 0.5 s, then 0.75 s more: it ends at 1.25 s. */
START_TEST(communication_slows_compute)
{
    ClusterSpec *c = test_cluster(1, 2, NVLINK, IB);
    Graph *g = graph_new(2, 2);
    int both[2] = {0, 1};
    int group = graph_add_group(g, both, 2);
    TaskId work = graph_compute(g, 0, 0, 1.0, 0, 0, (TaskName){.fmt = "work"});
    double bytes = 0.5 * NVLINK; /* a ring of 2 sends S: 0.5 s */
    for (int r = 0; r < 2; r++)
        graph_collective(g, group, r, 1, COLL_ALL_REDUCE, bytes, 0, (TaskName){.fmt = "ar"});
    ck_assert(graph_seal(g, NULL));
    EngineNet net = {.cluster = c,
                     .algorithm = ALGORITHM_RING,
                     .contention = TRUE,
                     .tags = 1,
                     .interference = 0.5};
    Replay *r = engine_run(g, &net, NULL);
    ck_assert_rel(r->end_s[work], 1.25, 1e-12);
    replay_free(r);
    graph_free(g);
    cluster_spec_free(c);
}
END_TEST

/* Conservation over a whole step: a 3D plan on two nodes (tp 4 x pp 2 x
 * dp 2), every link's bytes within its capacity times the step. */
START_TEST(no_link_carries_more_than_capacity)
{
    ModelSpec *m = test_gpt(4, 256, 8, 1024, 128);
    ClusterSpec *c = test_cluster(2, 8, NVLINK, IB);
    PlanSpec *plan = plan_spec_new();
    plan->tp = 4;
    plan->pp = 2;
    plan->global_batch_size = 8;
    test_resolve(plan, m, c);
    Report rep;
    ck_assert(sim_run(m, c, plan, &rep, NULL));
    ck_assert(rep.metrics.n_hottest > 0);
    for (int i = 0; i < rep.metrics.n_hottest; i++)
        ck_assert(rep.metrics.hottest[i].utilization <= 1 + 1e-12);
    for (int k = 0; k < LINK_CLASSES; k++)
        ck_assert(rep.metrics.busiest[k].utilization <= 1 + 1e-12);
    ck_assert(rep.metrics.busiest[LINK_NIC].bytes > 0); /* pipeline and DP cross nodes */
    report_clear(&rep);
    plan_spec_free(plan);
    cluster_spec_free(c);
    model_spec_free(m);
}
END_TEST

Suite *suite_network(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("links");
    tcase_add_test(tc, ring_inside_a_node);
    tcase_add_test(tc, latency_per_message);
    tcase_add_test(tc, ring_across_nodes);
    tcase_add_test(tc, hierarchical_across_nodes);
    tcase_add_test(tc, tree_inside_a_node);
    tcase_add_test(tc, auto_picks_by_size);
    tcase_add_test(tc, dp_and_pipeline_share_a_nic);
    tcase_add_test(tc, communication_slows_compute);
    tcase_add_test(tc, no_link_carries_more_than_capacity);
    suite_add_tcase(s, tc);
    return s;
}
