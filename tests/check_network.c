/* check_network.c: collectives on links, alone and together, against the
 * alpha-beta forms of docs/model.md, "Choosing an algorithm" (clusters
 * built in code: ideal links, Simple alone, zero latency, so the forms are
 * bandwidth only), and the shipped clusters' collective model against
 * published nccl-tests bus bandwidths (topologies/SOURCES.md, "Network"). */
#include <math.h>
#include <string.h>

#include "engine/engine.h"
#include "app/collbench.h"
#include "app/simulate.h"
#include "net/algorithm.h"
#include "net/net.h"
#include "testutil.h"

enum { DP, PP, TAGS }; /* purposes of the transfers in these tests */

static const double NVLINK = 300e9, IB = 25e9, S = 1 << 28;

/* One collective of `bytes` over the first n GPUs, replayed. */
static CollRow at(ClusterSpec *c, CollOp op, int n, double bytes, CollAlgorithm a)
{
    GArray *rows = collbench_run(c, op, n, bytes, bytes, a, NULL);
    ck_assert_ptr_nonnull(rows);
    CollRow row = g_array_index(rows, CollRow, 0);
    g_array_free(rows, TRUE);
    return row;
}

/* One collective of S bytes over the first n GPUs. */
static CollRow one(ClusterSpec *c, CollOp op, int n, CollAlgorithm a)
{
    return at(c, op, n, S, a);
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

/* Every hop of a ring between nodes stays on a rail, the hop from the last
 * node back to the first too: over 3 nodes of 8 GPUs (3 not a multiple of
 * 8, so a ring whose entry moved one member a node would come back on
 * another rail) a spine 8 times thinner than the NICs beneath it changes
 * nothing, busbw = 8 x 25 GB/s as in ring_across_nodes. Replayed in full
 * and reduced (one rank: nodes shifted, members turned inside them), the
 * same time. */
START_TEST(ring_stays_on_rails)
{
    ClusterSpec *c = test_cluster(3, 8, NVLINK, IB);
    c->oversubscription = 8;
    GArray *full = collbench_run_with(c, COLL_ALL_REDUCE, 24, S, S, ALGORITHM_RING, 0, NULL);
    CollRow r = g_array_index(full, CollRow, 0);
    ck_assert_rel(r.busbw_Bps, 8 * IB, 1e-12);
    ck_assert_rel(one(c, COLL_ALL_REDUCE, 24, ALGORITHM_RING).time_s, r.time_s, 1e-12);
    g_array_free(full, TRUE);
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
 * beat the ring's 2 (n - 1) for small sizes; inside a node the ring's
 * 2 (n - 1)/n S beats the tree's 2 S for large ones. (Across nodes the
 * tree, one channel per NIC, moves as much through each NIC as the ring.) */
START_TEST(auto_picks_by_size)
{
    ClusterSpec *c = test_cluster(8, 8, NVLINK, IB);
    c->intra.latency_s = 2e-6;
    c->inter.latency_s = 5e-6;
    GArray *rows = collbench_run(c, COLL_ALL_REDUCE, 64, 1024, 1024, ALGORITHM_AUTO, NULL);
    ck_assert_int_eq(g_array_index(rows, CollRow, 0).algorithm, ALGORITHM_TREE);
    g_array_free(rows, TRUE);
    rows = collbench_run(c, COLL_ALL_REDUCE, 8, 1024, 1 << 30, ALGORITHM_AUTO, NULL);
    ck_assert_int_eq(g_array_index(rows, CollRow, 0).algorithm, ALGORITHM_TREE);
    ck_assert_int_eq(g_array_index(rows, CollRow, rows->len - 1).algorithm, ALGORITHM_RING);
    g_array_free(rows, TRUE);
    cluster_spec_free(c);
}
END_TEST

/* The tree across 4 nodes of 8 GPUs runs one channel per NIC, S/8 each,
 * its heads on the same rail: in the double binary tree over 4 nodes every
 * node sends 3 halves of its channel's share out of each NIC (two down and
 * one up, or one up, one down and one up), 3 S/16 in all, at 25 GB/s; the
 * NVLink chains (about 1.75 S per GPU at 300 GB/s) are faster. A tree
 * through one NIC per node would take 8 times as long. */
START_TEST(tree_uses_every_nic)
{
    ClusterSpec *c = test_cluster(4, 8, NVLINK, IB);
    CollRow r = one(c, COLL_ALL_REDUCE, 32, ALGORITHM_TREE);
    ck_assert_int_eq(r.algorithm, ALGORITHM_TREE);
    ck_assert_rel(r.time_s, 3 * S / 16 / IB, 1e-9);
    cluster_spec_free(c);
}
END_TEST

/* A link's efficiency stretches every transfer over it: at half NVLink's
 * efficiency the ring takes twice as long. */
START_TEST(efficiency_scales_link_time)
{
    ClusterSpec *c = test_cluster(1, 8, NVLINK, IB);
    c->intra.efficiency = 0.5;
    CollRow r = one(c, COLL_ALL_REDUCE, 8, ALGORITHM_RING);
    ck_assert_rel(r.time_s, 2 * (2.0 * 7 / 8 * S / NVLINK), 1e-12);
    ck_assert_rel(r.busbw_Bps, NVLINK / 2, 1e-12);
    cluster_spec_free(c);
}
END_TEST

/* ---- the shipped clusters against nccl-tests ------------------------------ */

static const double GB = 1e9, GiB = 1073741824.0;

/* A shipped cluster by name, without ".json". */
static ClusterSpec *shipped(const char *name)
{
    g_autofree char *file = g_strconcat(name, ".json", NULL);
    return test_shipped_cluster(file, 0);
}

/* 8 GPUs of a node, 1 GiB: A100 all-reduce 232.5 GB/s busbw
 * (nccl-tests#175), not NVLink's 300; H100 with NVLink SHARP about 480 GB/s,
 * and rings (NCCL_ALGO=RING, or all-gather) about 370 of 450
 * (nccl-tests#212); within 5 %. */
START_TEST(busbw_inside_a_node)
{
    ClusterSpec *a100 = shipped("dgx-a100-80gb");
    CollRow r = at(a100, COLL_ALL_REDUCE, 8, GiB, ALGORITHM_AUTO);
    ck_assert_rel(r.busbw_Bps, 232.5 * GB, 0.05);
    ck_assert_int_ne(r.algorithm, ALGORITHM_NVLS);
    r = at(a100, COLL_ALL_REDUCE, 8, GiB, ALGORITHM_NVLS); /* no NVLS: the choice */
    ck_assert_int_ne(r.algorithm, ALGORITHM_NVLS);
    cluster_spec_free(a100);
    static const char *const hopper[] = {"dgx-h100", "dgx-h200"};
    for (gsize i = 0; i < G_N_ELEMENTS(hopper); i++) {
        ClusterSpec *h = shipped(hopper[i]);
        r = at(h, COLL_ALL_REDUCE, 8, GiB, ALGORITHM_AUTO);
        ck_assert_int_eq(r.algorithm, ALGORITHM_NVLS);
        ck_assert_rel(r.busbw_Bps, 480 * GB, 0.05);
        r = at(h, COLL_ALL_REDUCE, 8, GiB, ALGORITHM_RING);
        ck_assert_rel(r.busbw_Bps, 370 * GB, 0.05);
        r = at(h, COLL_ALL_GATHER, 8, GiB, ALGORITHM_AUTO);
        ck_assert_rel(r.busbw_Bps, 370 * GB, 0.05);
        r = at(h, COLL_ALL_REDUCE, 8 * 2, GiB, ALGORITHM_AUTO); /* across nodes: no NVLS */
        ck_assert_int_ne(r.algorithm, ALGORITHM_NVLS);
        cluster_spec_free(h);
    }
}
END_TEST

/* Blackwell's NVLink 5 (topologies/SOURCES.md): 900 GB/s a direction at
 * the H100 profile's efficiency of 0.822, 739.8 GB/s. A ring all-reduce of
 * S = 1 GiB over n GPUs of one NVLink domain of `link_Bps` a direction
 * takes, alpha-beta (FORMULAS.md section 2): 2 (n - 1)/n S / (0.822
 * link_Bps), plus 2 (n - 1) messages of 3 us and the 9 us base latency;
 * its bus bandwidth is 2 (n - 1)/n S over that.
 * Inside a DGX B200, n = 8: 2.540 ms + 51 us, 726 GB/s. Across 64 GPUs
 * of one GB200 NVL72 rack, one NVLink domain: 2.858 ms + 387 us, 651.5
 * GB/s, with no NIC on the way, where 16 GPUs of two DGX B200s cross their
 * 400 Gb/s NICs (47 GB/s a NIC, as DGX H100's). Within 1 %. */
static double nvlink_ring_busbw(int n, double link_Bps)
{
    double data = 2.0 * (n - 1) / n * GiB, bw = link_Bps * 0.822;
    return data / (data / bw + 2.0 * (n - 1) * 3e-6 + 9e-6);
}

START_TEST(busbw_in_an_nvlink_domain)
{
    ClusterSpec *b200 = shipped("dgx-b200"), *nvl72 = shipped("gb200-nvl72");
    ck_assert_rel(at(b200, COLL_ALL_REDUCE, 8, GiB, ALGORITHM_RING).busbw_Bps, nvlink_ring_busbw(8, 900e9),
                  0.01);
    ck_assert_rel(at(nvl72, COLL_ALL_REDUCE, 64, GiB, ALGORITHM_RING).busbw_Bps,
                  nvlink_ring_busbw(64, 900e9), 0.01);
    CollRow r = at(b200, COLL_ALL_REDUCE, 16, GiB, ALGORITHM_RING);
    ck_assert_rel(r.busbw_Bps / b200->nics_per_node, 47 * GB, 0.05);
    cluster_spec_free(b200);
    cluster_spec_free(nvl72);
}
END_TEST

/* DGX H800 (topologies/SOURCES.md): DGX H100 with NVLink cut to 400 GB/s
 * a GPU, 200 a direction (the H800 datasheet); its GPU is the H100's in
 * all but its name. A ring all-reduce of 1 GiB over its 8 GPUs, as
 * nvlink_ring_busbw: 11.43 ms + 51 us, 163.7 GB/s, within 3 % of the
 * 160 GB/s of NVLink the DeepSeek-V3 report (arXiv 2412.19437, section
 * 3.2.2) gets on H800; across nodes its 400 Gb/s NICs are DGX H100's (47
 * GB/s a NIC, busbw_across_nodes), against the report's 50, but a ring
 * over several nodes is held back by NVLink: each GPU forwards the ring's
 * whole traffic over it, 164 GB/s, where a node's 8 NICs carry 376. */
START_TEST(busbw_on_h800)
{
    ClusterSpec *h800 = shipped("dgx-h800"), *h100 = shipped("dgx-h100");
    double busbw = at(h800, COLL_ALL_REDUCE, 8, GiB, ALGORITHM_RING).busbw_Bps;
    ck_assert_rel(busbw, nvlink_ring_busbw(8, 200e9), 0.01);
    ck_assert_rel(busbw, 160 * GB, 0.03);
    GpuSpec a = h800->gpu, b = h100->gpu;
    a.name = b.name;
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    ck_assert_double_eq(h800->inter.bandwidth_Bps, h100->inter.bandwidth_Bps);
    ck_assert_int_eq(h800->nics_per_node, h100->nics_per_node);
    cluster_spec_free(h800);
    cluster_spec_free(h100);
}
END_TEST

/* Across nodes, per NIC, 1 GiB: HDR 200 Gb/s 24 GB/s (nccl#412), 192 GB/s
 * for 8 NICs a node over several DGX A100s (nccl#812); NDR 400 Gb/s about
 * 47 GB/s (46-49 in nccl-tests#290 and #267); within 5 %. On 2 nodes the
 * ring shows it (auto's tree passes the network there, as NCCL's does);
 * on 4, auto's choice. */
START_TEST(busbw_across_nodes)
{
    static const struct {
        const char *name;
        double per_nic_GBps;
    } cases[] = {{"dgx-a100-80gb", 24}, {"dgx-h100", 47}, {"dgx-h200", 47}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        ClusterSpec *c = shipped(cases[i].name);
        double expected = cases[i].per_nic_GBps * GB;
        CollRow r = at(c, COLL_ALL_REDUCE, 16, GiB, ALGORITHM_RING);
        ck_assert_rel(r.busbw_Bps / c->nics_per_node, expected, 0.05);
        r = at(c, COLL_ALL_REDUCE, 32, GiB, ALGORITHM_AUTO);
        ck_assert_rel(r.busbw_Bps / c->nics_per_node, expected, 0.05);
        r = at(c, COLL_ALL_GATHER, 32, GiB, ALGORITHM_AUTO);
        ck_assert_rel(r.busbw_Bps / c->nics_per_node, expected, 0.05);
        cluster_spec_free(c);
    }
}
END_TEST

/* nccl-tests' curve, 8 B to 1 GiB doubling: busbw never falls as the size
 * grows, and small sizes are latency-bound: 8 B and 1 KiB take nearly the
 * same time, some microseconds, and reach a tiny fraction of the peak. */
START_TEST(busbw_grows_with_size)
{
    static const char *const names[] = {"dgx-a100-80gb", "dgx-h100"};
    static const int ranks[] = {8, 16, 32};
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        ClusterSpec *c = shipped(names[i]);
        for (gsize k = 0; k < G_N_ELEMENTS(ranks); k++) {
            GArray *rows =
                collbench_run(c, COLL_ALL_REDUCE, ranks[k], 8, GiB, ALGORITHM_AUTO, NULL);
            const CollRow *row = (const CollRow *)rows->data;
            for (guint j = 1; j < rows->len; j++)
                ck_assert_msg(row[j].busbw_Bps >= row[j - 1].busbw_Bps,
                              "%s, %d GPUs: busbw %g at %g B below %g at %g B", names[i], ranks[k],
                              row[j].busbw_Bps, row[j].bytes, row[j - 1].busbw_Bps,
                              row[j - 1].bytes);
            ck_assert(row[0].time_s > 5e-6 && row[0].time_s < 50e-6);
            ck_assert_rel(row[7].time_s, row[0].time_s, 0.05); /* 1 KiB */
            ck_assert(row[7].busbw_Bps < 0.01 * row[rows->len - 1].busbw_Bps);
            g_array_free(rows, TRUE);
        }
        cluster_spec_free(c);
    }
}
END_TEST

/* The time alone of a route on the links of `t` with each protocol (as the
 * network counts it: per phase its latency and the most loaded link's
 * time). */
static void alone_on(const CollRoute *route, unsigned protocols, double cost[PROTOCOLS], void *ctx)
{
    const Topology *t = ctx;
    g_autofree double *load = g_new0(double, topology_links(t));
    for (int p = 0; p < PROTOCOLS; p++) {
        cost[p] = 0;
        for (int ph = 0; ph < route->n_phases && protocols >> p & 1; ph++) {
            const CollPhase *phase = &route->phase[ph];
            for (int i = phase->first; i < phase->first + phase->count; i++) {
                const Transfer *tr = &route->transfers[i];
                int path[TOPOLOGY_MAX_PATH], n;
                topology_path(t, tr->src, tr->dst, path, &n);
                for (int k = 0; k < n; k++)
                    load[path[k]] +=
                        algo_transfer_bytes(route, i, algo_protocol_share((CollProtocol)p));
            }
            double slowest = 0;
            for (int l = 0; l < topology_links(t); l++) {
                slowest = MAX(slowest, load[l] / topology_capacity(t, l));
                load[l] = 0;
            }
            cost[p] += phase->latency_by[p] + slowest;
        }
    }
}

/* The protocol follows the size as NCCL's tuner has it: LL for small
 * all-reduces, LL128 in the middle, Simple for large; NVLS runs Simple and
 * moves S out of every GPU (each GPU's payload), where a ring sends
 * 2 (n - 1)/n S. */
START_TEST(protocol_by_size)
{
    ClusterSpec *c = shipped("dgx-h100");
    Topology *t = topology_new(c, 1);
    int members[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    CollRanks *r = algo_ranks_new(t, members, 8);
    static const struct {
        double bytes;
        CollProtocol protocol;
    } cases[] = {{8, PROTOCOL_LL}, {4 << 20, PROTOCOL_LL128}, {GiB, PROTOCOL_SIMPLE}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        CollRoute *route = algo_route_new();
        algo_choose(route, r, COLL_ALL_REDUCE, ALGORITHM_AUTO, cases[i].bytes, alone_on, t);
        ck_assert_str_eq(algo_protocol_name(route->protocol),
                         algo_protocol_name(cases[i].protocol));
        if (i == 2) { /* NVLS */
            ck_assert_int_eq(route->algorithm, ALGORITHM_NVLS);
            double sent = 0;
            for (int k = 0; k < route->n_transfers; k++)
                if (route->transfers[k].src == 0)
                    sent += route->payload[k];
            ck_assert_rel(sent, GiB, 1e-12);
        }
        algo_route_free(route);
    }
    algo_ranks_free(r);
    topology_free(t);
    cluster_spec_free(c);
}
END_TEST

/* Without contention a collective takes its time alone, the cost by which
 * the network chose its algorithm and protocol: exactly alone_on's (each
 * protocol's loads summed on their own; the network derives LL's from
 * Simple's, its share being exactly half), on one node and across four,
 * from sizes where LL wins to sizes where Simple does. */
START_TEST(time_alone_is_the_loads_exactly)
{
    static const double sizes[] = {8, 4096, 4 << 20, GiB};
    for (int nodes = 1; nodes <= 4; nodes *= 4) {
        ClusterSpec *c = test_shipped_cluster("dgx-h100.json", nodes);
        Topology *t = topology_new(c, nodes);
        int n = 8 * nodes, *members = g_new(int, n);
        for (int i = 0; i < n; i++)
            members[i] = i;
        CollRanks *r = algo_ranks_new(t, members, n);
        unsigned won = 0; /* the protocols chosen */
        for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
            CollRoute *route = algo_route_new();
            double want =
                algo_choose(route, r, COLL_ALL_REDUCE, ALGORITHM_AUTO, sizes[i], alone_on, t);
            won |= 1u << route->protocol;
            Net *net = net_new(c, n, NULL, ALGORITHM_AUTO, FALSE, 1, NULL, FALSE);
            net_start(net, 0, 0, net_route(net, COLL_ALL_REDUCE, members, n, sizes[i]), 0);
            ck_assert_msg(net_next_s(net) == want, "%d nodes, %g B: %.17g s, not %.17g", nodes,
                          sizes[i], net_next_s(net), want);
            net_free(net);
            algo_route_free(route);
        }
        ck_assert(won >> PROTOCOL_LL & 1 && won >> PROTOCOL_SIMPLE & 1);
        algo_ranks_free(r);
        g_free(members);
        topology_free(t);
        cluster_spec_free(c);
    }
}
END_TEST

/* LL or LL128 is modelled when both link classes give its latency: one
 * alone is refused, naming the other. */
START_TEST(protocol_latency_in_both_link_classes)
{
    char *path =
        test_write_tmp("{\"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 8,\n"
                       " \"gpu\": {\"name\": \"g\", \"peak_tflops\": 312, \"memory_GiB\": 80,\n"
                       "         \"memory_bandwidth_GBps\": 2039},\n"
                       " \"intra_node\": {\"bandwidth_GBps\": 300, \"ll_latency_us\": 0.8},\n"
                       " \"inter_node\": {\"bandwidth_GBps\": 25}}\n");
    GError *error = NULL;
    ck_assert_ptr_null(cluster_spec_load(path, 0, &error));
    ck_assert_ptr_nonnull(strstr(error->message, "$.inter_node.ll_latency_us"));
    g_error_free(error);
    test_remove(path);
}
END_TEST

/* `g` sealed and replayed on `c` by `net` (its cluster set to `c`);
 * frees both. */
static Replay *replay_by(Graph *g, ClusterSpec *c, EngineNet net)
{
    ck_assert(graph_seal(g, NULL));
    net.cluster = c;
    Replay *r = engine_run(g, &net, NULL);
    ck_assert_ptr_nonnull(r);
    graph_free(g);
    cluster_spec_free(c);
    return r;
}

/* A data-parallel all-reduce of S and a pipeline send of S/2, both from
 * node 0 to node 1 over its one NIC (25 GB/s), at once. Alone: S / beta and
 * S/2 / beta. Together they share the NIC: each is slower, and the NIC,
 * never idle, has moved the S + S/2 bytes when the last ends, at
 * (S + S/2) / beta. Without contention each takes its time alone. */
static Replay *dp_and_pp_of(gboolean contention, double send_bytes, TaskId *ar, TaskId *send)
{
    ClusterSpec *c = test_cluster(2, 1, NVLINK, IB);
    Graph *g = graph_new(2, 2);
    int both[2] = {0, 1};
    int group = graph_add_group(g, both, 2), pair = graph_add_group(g, both, 2);
    for (int r = 0; r < 2; r++)
        *ar = graph_collective(g, group, r, 0, COLL_ALL_REDUCE, S, DP, (TaskName){.fmt = "dp"});
    *send =
        graph_collective(g, pair, 0, 1, COLL_SEND_RECV, send_bytes, PP, (TaskName){.fmt = "pp"});
    graph_collective(g, pair, 1, GRAPH_OFF_STREAM, COLL_SEND_RECV, send_bytes, PP,
                     (TaskName){.fmt = "pp"});
    return replay_by(
        g, c, (EngineNet){.algorithm = ALGORITHM_RING, .contention = contention, .tags = TAGS});
}

static Replay *dp_and_pp(gboolean contention, TaskId *ar, TaskId *send)
{
    return dp_and_pp_of(contention, S / 2, ar, send);
}

START_TEST(dp_and_pipeline_share_a_nic)
{
    TaskId ar, send;
    Replay *r = dp_and_pp(TRUE, &ar, &send);
    double ar_s = r->task[ar].end_s - r->task[ar].start_s,
           send_s = r->task[send].end_s - r->task[send].start_s;
    ck_assert(ar_s > S / IB * (1 + 1e-9));
    ck_assert(send_s > S / 2 / IB * (1 + 1e-9));
    ck_assert_rel(r->makespan_s, 1.5 * S / IB, 1e-12);
    int out0 = -1; /* node 0's NIC, out: the one both cross */
    for (int l = 0; l < topology_links(engine_topology(r)); l++)
        if (engine_link_bytes(r, l) > 1.4 * S)
            out0 = l;
    ck_assert_int_ge(out0, 0);
    ck_assert_rel(engine_link_tag_bytes(r, out0, DP), S, 1e-12);
    ck_assert_rel(engine_link_tag_bytes(r, out0, PP), S / 2, 1e-12);
    engine_replay_free(r);

    r = dp_and_pp(FALSE, &ar, &send);
    ck_assert_rel(r->task[ar].end_s, S / IB, 1e-12);
    ck_assert_rel(r->task[send].end_s, S / 2 / IB, 1e-12);
    engine_replay_free(r);
}
END_TEST

/* Routes apart (net.c): on 3 nodes of 2 GPUs, group A (GPUs 0 and 1)
 * all-reduces S, reduce-scatters S and all-reduces S again on one stream;
 * group B (GPUs 2 and 3) all-reduces S on one stream while it all-gathers
 * S/2 on another, over the same NVLink; group D (GPUs 4 and 5) all-reduces
 * S on both streams at once, one route run twice; group C (GPUs 0 and 2)
 * all-reduces S over the NICs. A's routes run alone one after another:
 * apart, each all-reduce of 2 GPUs S / NVLINK alone (a ring of 2 sends
 * S). B's routes share their links from two streams, D's route runs on
 * two: neither is apart, and their all-reduces take longer than alone.
 * Replayed with and without routes apart, every task starts and ends at
 * the same instants to the bit, with the same events and the same bytes
 * on every link (same_replay). */
static Replay *apart_or_not(gboolean apart, TaskId *a0, TaskId *b0, TaskId *d0)
{
    ClusterSpec *c = test_cluster(3, 2, NVLINK, IB);
    Graph *g = graph_new(6, 2);
    int ga[2] = {0, 1}, gb[2] = {2, 3}, gc[2] = {0, 2}, gd[2] = {4, 5};
    int a = graph_add_group(g, ga, 2), b = graph_add_group(g, gb, 2),
        cc = graph_add_group(g, gc, 2), d = graph_add_group(g, gd, 2);
    static const CollOp ops[3] = {COLL_ALL_REDUCE, COLL_REDUCE_SCATTER, COLL_ALL_REDUCE};
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < 2; r++) {
            TaskId t = graph_collective(g, a, ga[r], 0, ops[k], S, DP, (TaskName){.fmt = "a"});
            *a0 = k == 0 ? t : *a0;
        }
    for (int r = 0; r < 2; r++) {
        *b0 = graph_collective(g, b, gb[r], 0, COLL_ALL_REDUCE, S, DP, (TaskName){.fmt = "b"});
        graph_collective(g, b, gb[r], 1, COLL_ALL_GATHER, S / 2, PP, (TaskName){.fmt = "b"});
        graph_collective(g, cc, gc[r], 1, COLL_ALL_REDUCE, S, DP, (TaskName){.fmt = "c"});
        for (int stream = 0; stream < 2; stream++) {
            TaskId t = graph_collective(g, d, gd[r], stream, COLL_ALL_REDUCE, S, DP,
                                        (TaskName){.fmt = "d"});
            *d0 = stream == 0 ? t : *d0;
        }
    }
    return replay_by(
        g, c,
        (EngineNet){.algorithm = ALGORITHM_RING, .contention = TRUE, .apart = apart, .tags = TAGS});
}

/* x and y, one graph replayed with and without routes apart: every task
 * at the same instants to the bit, the same events, the same bytes on
 * every link (within 1e-12: net_settle adds them in another order). */
static void same_replay(const Replay *x, const Replay *y)
{
    ck_assert_uint_eq(y->flows_apart, 0);
    for (gsize id = 0; id < x->tasks; id++) {
        ck_assert_double_eq(x->task[id].start_s, y->task[id].start_s);
        ck_assert_double_eq(x->task[id].end_s, y->task[id].end_s);
    }
    ck_assert_double_eq(x->makespan_s, y->makespan_s);
    ck_assert_uint_eq(x->events, y->events);
    for (int l = 0; l < topology_links(engine_topology(x)); l++)
        for (int tag = 0; tag < TAGS; tag++) { /* summed in another order: within 1e-12 */
            double a = engine_link_tag_bytes(x, l, tag), b = engine_link_tag_bytes(y, l, tag);
            ck_assert_msg(fabs(a - b) <= 1e-12 * b, "link %d: %.17g, not %.17g", l, a, b);
        }
}

/* One node of 4 GPUs all-to-alls S on one stream, by the direct
 * algorithm: its route alone on its links, but each phase's flows leave
 * a GPU over its one NVLink port together, so they share it: not apart. */
static Replay *all_to_all(gboolean apart)
{
    ClusterSpec *c = test_cluster(1, 4, NVLINK, IB);
    Graph *g = graph_new(4, 1);
    int all[4] = {0, 1, 2, 3};
    int group = graph_add_group(g, all, 4);
    for (int r = 0; r < 4; r++)
        graph_collective(g, group, r, 0, COLL_ALL_TO_ALL, S, DP, (TaskName){.fmt = "a2a"});
    return replay_by(
        g, c,
        (EngineNet){
            .algorithm = ALGORITHM_DIRECT, .contention = TRUE, .apart = apart, .tags = TAGS});
}

START_TEST(routes_apart_replay_as_the_share)
{
    TaskId a0, b0, d0;
    Replay *x = apart_or_not(TRUE, &a0, &b0, &d0), *y = apart_or_not(FALSE, &a0, &b0, &d0);
    ck_assert_uint_gt(x->flows_apart, 0);
    ck_assert_rel(x->task[a0].end_s - x->task[a0].start_s, S / NVLINK, 1e-12);
    ck_assert(x->task[b0].end_s - x->task[b0].start_s > S / NVLINK * (1 + 1e-9));
    ck_assert(x->task[d0].end_s - x->task[d0].start_s > S / NVLINK * (1 + 1e-9));
    same_replay(x, y);
    engine_replay_free(x);
    engine_replay_free(y);
    x = all_to_all(TRUE), y = all_to_all(FALSE);
    ck_assert_uint_eq(x->flows_apart, 0);
    same_replay(x, y);
    engine_replay_free(x);
    engine_replay_free(y);
}
END_TEST

/* A send of one packet (4,096 bytes, net.c) beside the all-reduce is
 * latency-bound: each takes its time alone, S / beta and 4096 / beta, and
 * the send loads no link. One byte more and it is a flow: it shares the
 * NIC and the all-reduce ends later than alone. */
START_TEST(one_packet_is_latency_bound)
{
    TaskId ar, send;
    Replay *r = dp_and_pp_of(TRUE, 4096, &ar, &send);
    ck_assert_rel(r->task[ar].end_s, S / IB, 1e-12);
    ck_assert_rel(r->task[send].end_s, 4096 / IB, 1e-12);
    for (int l = 0; l < topology_links(engine_topology(r)); l++)
        ck_assert_double_eq(engine_link_tag_bytes(r, l, PP), 0);
    engine_replay_free(r);

    r = dp_and_pp_of(TRUE, 4097, &ar, &send);
    ck_assert(r->task[ar].end_s > S / IB * (1 + 1e-12));
    ck_assert(r->task[send].end_s > 4097 / IB * (1 + 1e-9));
    engine_replay_free(r);
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
    ck_assert_rel(r->task[work].end_s, 1.25, 1e-12);
    engine_replay_free(r);
    graph_free(g);
    cluster_spec_free(c);
}
END_TEST

/* Copies over the host path (docs/model.md, "The host path"): one node of
 * 4 GPUs with host links of P = 50 GB/s, 2 a PCIe switch whose uplink is
 * U = 50 GB/s, 4 a CPU whose memory is M = 120 GB/s both ways. GPUs 0, 1
 * and 2 copy B bytes down and GPU 3 B bytes up, all at once. Max-min fair
 * (progressive filling): the memory offers M/4 = 30 to each of its 4
 * flows, switch 0's uplink up U/2 = 25 to GPUs 0 and 1, which saturates
 * first and fixes them at 25; the memory's other 70 go to GPUs 2 and 3,
 * 35 each (below their links' 50). So GPUs 2 and 3 end at B / 35 GB/s =
 * 2B / (M - U), GPUs 0 and 1 at B / 25 GB/s = 2B / U (still held by the
 * uplink once 2 and 3 are done). Alone (no contention) every copy takes
 * B / min(P, U, M) = B / 50 GB/s. The memory carries all 4B, each uplink
 * its GPUs'. */
START_TEST(copies_share_the_host_path)
{
    const double P = 50e9, U = 50e9, M = 120e9, B = 1e9;
    for (int contention = 0; contention < 2; contention++) {
        ClusterSpec *c = test_cluster(1, 4, NVLINK, IB);
        c->gpu.pcie_Bps = P;
        c->host_path.shared[HOST_SWITCH] = (HostResource){.gpus = 2, .bandwidth_Bps = U};
        c->host_path.shared[HOST_CPU] = (HostResource){.gpus = 4, .bandwidth_Bps = M};
        Graph *g = graph_new(4, 1);
        TaskId copy[4];
        for (int r = 0; r < 4; r++)
            copy[r] = graph_copy(g, r, 0, B, r == 3, 0, (TaskName){.fmt = "copy"});
        ck_assert(graph_seal(g, NULL));
        EngineNet net = {.cluster = c, .contention = contention, .tags = 1};
        Replay *r = engine_run(g, &net, NULL);
        for (int k = 0; k < 4; k++)
            ck_assert_rel(r->task[copy[k]].end_s,
                          !contention ? B / P
                          : k < 2     ? 2 * B / U
                                      : 2 * B / (M - U),
                          1e-12);
        const Topology *t = engine_topology(r);
        if (contention) {
            ck_assert_rel(engine_link_bytes(r, topology_gpu_link(t, 0, LINK_MEMORY, 0)), 4 * B,
                          1e-12);
            ck_assert_rel(engine_link_bytes(r, topology_gpu_link(t, 0, LINK_UPLINK, 0)), 2 * B,
                          1e-12);
            ck_assert_rel(engine_link_bytes(r, topology_gpu_link(t, 3, LINK_UPLINK, 1)), B, 1e-12);
        }
        engine_replay_free(r);
        graph_free(g);
        cluster_spec_free(c);
    }
}
END_TEST

/* Conservation over a whole step: a 3D route on two nodes (tp 4 x pp 2 x
 * dp 2), every link's bytes within its capacity times the step. */
START_TEST(no_link_carries_more_than_capacity)
{
    ModelSpec *m = test_gpt(4, 256, 8, 1024, 128);
    ClusterSpec *c = test_cluster(2, 8, NVLINK, IB);
    PlanSpec *route = plan_spec_new();
    route->tp = 4;
    route->pp = 2;
    route->global_batch_size = 8;
    test_resolve(route, m, c);
    Report rep;
    ck_assert(simulate_run(m, c, route, &rep, NULL));
    ck_assert(rep.metrics.n_hottest > 0);
    for (int i = 0; i < rep.metrics.n_hottest; i++)
        ck_assert(rep.metrics.hottest[i].utilization <= 1 + 1e-12);
    for (int k = 0; k < LINK_CLASSES; k++)
        ck_assert(rep.metrics.busiest[k].utilization <= 1 + 1e-12);
    ck_assert(rep.metrics.busiest[LINK_NIC].bytes > 0); /* pipeline and DP cross nodes */
    report_clear(&rep);
    plan_spec_free(route);
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
    tcase_add_test(tc, ring_stays_on_rails);
    tcase_add_test(tc, hierarchical_across_nodes);
    tcase_add_test(tc, tree_inside_a_node);
    tcase_add_test(tc, auto_picks_by_size);
    tcase_add_test(tc, tree_uses_every_nic);
    tcase_add_test(tc, efficiency_scales_link_time);
    tcase_add_test(tc, dp_and_pipeline_share_a_nic);
    tcase_add_test(tc, routes_apart_replay_as_the_share);
    tcase_add_test(tc, one_packet_is_latency_bound);
    tcase_add_test(tc, communication_slows_compute);
    tcase_add_test(tc, no_link_carries_more_than_capacity);
    tcase_add_test(tc, copies_share_the_host_path);
    suite_add_tcase(s, tc);
    TCase *nccl = tcase_create("nccl-tests");
    tcase_add_test(nccl, busbw_inside_a_node);
    tcase_add_test(nccl, busbw_across_nodes);
    tcase_add_test(nccl, busbw_in_an_nvlink_domain);
    tcase_add_test(nccl, busbw_on_h800);
    tcase_add_test(nccl, busbw_grows_with_size);
    tcase_add_test(nccl, protocol_by_size);
    tcase_add_test(nccl, time_alone_is_the_loads_exactly);
    tcase_add_test(nccl, protocol_latency_in_both_link_classes);
    suite_add_tcase(s, nccl);
    return s;
}
