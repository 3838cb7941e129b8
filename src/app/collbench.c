/* collbench.c: one collective, replayed alone at every size, one GPU per
 * orbit of the cluster's symmetry. */
#include "app/collbench.h"

#include <math.h>

#include "engine/engine.h"
#include "layout/layout.h"
#include "net/algorithm.h"
#include "net/symmetry.h"
#include "base/bigmem.h"
#include "base/error.h"

/* busbw / algbw for `op` over n ranks (nccl-tests' PERFORMANCE.md). */
static double bus_factor(CollOp op, int n)
{
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_SEND_RECV:
    case COLL_RING_EXCHANGE:
        return 1;
    default:
        return (double)(n - 1) / n;
    }
}

/* The layout of n GPUs as the plan tp x dp, tp the GPUs of a node (or n,
 * when fewer): the shifts of its tp and dp coordinates that map the
 * cluster onto itself map the collective over all n onto itself. */
static Layout *layout_of(const ClusterSpec *cluster, int n)
{
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->tp = n % cluster->gpus_per_node == 0 ? cluster->gpus_per_node : n;
    plan->dp = n / plan->tp;
    plan->pp = plan->cp = plan->ep = 1;
    return layout_new(plan, cluster);
}

/* The time of one collective over GPUs 0 .. n-1, replaying the GPUs of
 * `sym`, its transfers sharing links or (`contention` FALSE) alone; FALSE
 * when a transfer broke the symmetry (*broken says which generators). */
static gboolean replay_sym(const ClusterSpec *cluster, const Symmetry *sym, CollOp op, int n,
                           double bytes, CollAlgorithm algorithm, gboolean contention, CollRow *row,
                           unsigned *broken)
{
    int simulated;
    const int *gpus = symmetry_simulated(sym, &simulated);
    Graph *g = graph_new(simulated, 1);
    graph_place(g, gpus, n);
    g_autofree int *members = g_new(int, n);
    for (int r = 0; r < n; r++)
        members[r] = r;
    int group = graph_add_group(g, members, n);
    for (int r = 0; r < simulated; r++)
        graph_collective(g, group, r, 0, op, bytes, 0, (TaskName){.fmt = "collective"});
    gboolean sealed = graph_seal(g, NULL);
    g_assert(sealed);
    EngineNet net = {.cluster = cluster,
                     .gpus = n,
                     .symmetry = sym,
                     .algorithm = algorithm,
                     .contention = contention,
                     .tags = 1,
                     .broken = broken};
    Replay *r = engine_run(g, &net, NULL);
    if (r) {
        row->time_s = r->makespan_s;
        row->algorithm = (CollAlgorithm)r->algorithm[0];
    }
    engine_replay_free(r);
    graph_free(g);
    return r != NULL;
}

/* The time of one collective of `bytes` over GPUs 0 .. n-1, by the engine:
 * reduced by the symmetry of `dims` (0: every GPU replayed), and again
 * without the shifts a transfer broke, as simulate does. */
static void replay_one(const ClusterSpec *cluster, CollOp op, int n, double bytes,
                       CollAlgorithm algorithm, unsigned dims, gboolean contention, CollRow *row)
{
    g_autoptr(Layout) layout = layout_of(cluster, n);
    Topology *topo =
        topology_new(cluster, (n + cluster->gpus_per_node - 1) / cluster->gpus_per_node);
    for (;;) {
        unsigned broken = 0;
        g_autoptr(Symmetry) sym = symmetry_new(layout, topo, dims);
        if (replay_sym(cluster, sym, op, n, bytes, algorithm, contention, row, &broken))
            break;
        g_assert(dims != 0); /* only a reduced replay can meet an asymmetry */
        for (int i = 0; i < symmetry_generators(sym); i++)
            if (broken & 1u << i)
                dims &= ~symmetry_generator_bit(sym, i);
    }
    topology_free(topo);
}

/* The most transfers a plan of `op` over GPUs 0 .. n-1 holds, over the
 * algorithms that may run it (auto plans each; net/algorithm.c): over k
 * nodes of g GPUs and C channels (NICs a node's members use, 1 inside a
 * node), a ring C n, a tree 4 (n - 1) inside a node or C (2 (g - 1) k + 4
 * (k - 1)) across, the hierarchical all-reduce 3 n, NVLS n, all at most
 * max(C (2 n + 4 k), 4 n); an all-to-all n (n - 1), a send/recv 1. */
static double most_transfers(const ClusterSpec *cluster, CollOp op, int n)
{
    if (op == COLL_ALL_TO_ALL)
        return (double)n * (n - 1);
    if (op == COLL_SEND_RECV)
        return 1;
    int nics, k = (n + cluster->gpus_per_node - 1) / cluster->gpus_per_node;
    topology_nic_capacity(cluster, &nics);
    double channels = k > 1 ? MAX(1, MIN(MIN(n, cluster->gpus_per_node), nics)) : 1;
    return MAX(channels * (2.0 * n + 4.0 * k), 4.0 * n);
}

gboolean collbench_check(const ClusterSpec *cluster, CollOp op, int ranks, GError **error)
{
    double transfers = most_transfers(cluster, op, ranks);
    if (transfers > COLLBENCH_MAX_TRANSFERS) {
        if (op == COLL_ALL_TO_ALL) /* the most n of n (n - 1) <= the cap */
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "--ranks: expected at most %d for all_to_all, whose plan holds n (n - 1) "
                        "transfers (at most %d in one collective), got %d",
                        (int)floor((1 + sqrt(1 + 4.0 * COLLBENCH_MAX_TRANSFERS)) / 2),
                        COLLBENCH_MAX_TRANSFERS, ranks);
        else
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "--ranks: expected a collective of at most %d transfers, got %d ranks of "
                        "%s: up to %.0f",
                        COLLBENCH_MAX_TRANSFERS, ranks, collective_name(op), transfers);
        return FALSE;
    }
    /* the plan's arrays (a transfer and two doubles each) at their last
     * doubling, with the ones they grew from: 120 bytes a transfer, more
     * than the peak of the plan, the flows and their tallies (collbench.h) */
    gsize bytes = (gsize)(3 * transfers) * (sizeof(Transfer) + 2 * sizeof(double));
    if (!bigmem_check(bytes, error)) {
        g_prefix_error(error,
                       "--ranks: expected a collective the system has the memory for, got %d "
                       "ranks of %s: ",
                       ranks, collective_name(op));
        return FALSE;
    }
    return TRUE;
}

GArray *collbench_run(const ClusterSpec *cluster, CollOp op, int ranks, double min_bytes,
                      double max_bytes, CollAlgorithm algorithm, GError **error)
{
    return collbench_run_with(cluster, op, ranks, min_bytes, max_bytes, algorithm, SYMMETRY_ALL,
                              error);
}

GArray *collbench_run_with(const ClusterSpec *cluster, CollOp op, int ranks, double min_bytes,
                           double max_bytes, CollAlgorithm algorithm, unsigned dims, GError **error)
{
    int gpus = cluster_spec_gpus(cluster);
    if (ranks < 2 || ranks > gpus || (op == COLL_SEND_RECV && ranks != 2)) {
        if (op == COLL_SEND_RECV)
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "--ranks: expected 2 for send_recv, got %d", ranks);
        else
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "--ranks: expected 2 to the cluster's %d GPUs, got %d", gpus, ranks);
        return NULL;
    }
    if (!(min_bytes > 0 && min_bytes <= max_bytes && max_bytes <= 1e15)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "--min-bytes, --max-bytes: expected 0 < min <= max <= 1e15, got %.0f and %.0f",
                    min_bytes, max_bytes);
        return NULL;
    }
    if (!collbench_check(cluster, op, ranks, error))
        return NULL;
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(CollRow));
    for (double bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        CollRow row = {.bytes = bytes};
        replay_one(cluster, op, ranks, bytes, algorithm, dims, TRUE, &row);
        row.algbw_Bps = row.time_s > 0 ? bytes / row.time_s : 0;
        row.busbw_Bps = row.algbw_Bps * bus_factor(op, ranks);
        g_array_append_val(rows, row);
    }
    return rows;
}

double collbench_alone_s(const ClusterSpec *cluster, CollOp op, int ranks, double bytes,
                         CollAlgorithm algorithm, CollAlgorithm *used)
{
    CollRow row = {.bytes = bytes};
    replay_one(cluster, op, ranks, bytes, algorithm, SYMMETRY_ALL, FALSE, &row);
    if (used)
        *used = row.algorithm;
    return row.time_s;
}
