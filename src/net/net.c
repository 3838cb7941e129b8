/* net.c: bottleneck-link network model (no contention yet).
 *
 * A group whose members all sit on one node talks over NVLink; any group
 * that spans nodes is bounded by the per-GPU InfiniBand bandwidth and pays
 * its latency per message. */
#include "net/net.h"

#include <string.h>

struct Net {
    AlphaBeta intra, inter;
    int *node_of_rank;
    int ranks;
};

Net *net_new(const ClusterSpec *cluster, const int *node_of_rank, int ranks)
{
    Net *net = g_new0(Net, 1);
    net->intra = (AlphaBeta){cluster->intra.latency_s, cluster->intra.bandwidth_Bps};
    net->inter = (AlphaBeta){cluster->inter.latency_s, cluster->inter.bandwidth_Bps};
    net->node_of_rank = g_new(int, ranks);
    memcpy(net->node_of_rank, node_of_rank, sizeof(int) * (gsize)ranks);
    net->ranks = ranks;
    return net;
}

void net_free(Net *net)
{
    if (!net)
        return;
    g_free(net->node_of_rank);
    g_free(net);
}

AlphaBeta net_link(const Net *net, const int *members, int n)
{
    for (int i = 1; i < n; i++) {
        g_assert(members[i] >= 0 && members[i] < net->ranks);
        if (net->node_of_rank[members[i]] != net->node_of_rank[members[0]])
            return net->inter;
    }
    return net->intra;
}

double net_collective_s(const Net *net, CollOp op, const int *members, int n, double bytes)
{
    return collective_ring_s(op, n, bytes, net_link(net, members, n));
}
