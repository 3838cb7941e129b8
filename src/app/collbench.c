/* collbench.c: one collective, replayed alone at every size. */
#include "app/collbench.h"

#include "engine/engine.h"
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

/* The time of one collective of `bytes` over GPUs 0 .. n-1, by the engine. */
static double replay_one(const ClusterSpec *cluster, CollOp op, int n, double bytes,
                         CollAlgorithm algorithm, CollAlgorithm *used)
{
    Graph *g = graph_new(n, 1);
    g_autofree int *members = g_new(int, n);
    for (int r = 0; r < n; r++)
        members[r] = r;
    int group = graph_add_group(g, members, n);
    for (int r = 0; r < n; r++)
        graph_collective(g, group, r, 0, op, bytes, 0, (TaskName){.fmt = "collective"});
    gboolean sealed = graph_seal(g, NULL);
    g_assert(sealed);
    EngineNet net = {.cluster = cluster, .gpus = n, .algorithm = algorithm, .contention = TRUE,
                     .tags = 1};
    Replay *r = engine_run(g, &net, NULL);
    g_assert(r);
    double t = r->makespan_s;
    *used = (CollAlgorithm)r->algorithm[0];
    replay_free(r);
    graph_free(g);
    return t;
}

GArray *collbench_run(const ClusterSpec *cluster, CollOp op, int ranks, double min_bytes,
                      double max_bytes, CollAlgorithm algorithm, GError **error)
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
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(CollRow));
    for (double bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        CollRow row = {.bytes = bytes};
        row.time_s = replay_one(cluster, op, ranks, bytes, algorithm, &row.algorithm);
        row.algbw_Bps = row.time_s > 0 ? bytes / row.time_s : 0;
        row.busbw_Bps = row.algbw_Bps * bus_factor(op, ranks);
        g_array_append_val(rows, row);
    }
    return rows;
}
