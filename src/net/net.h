/* net.h: the network model the engine asks for communication times.
 *
 * It knows the cluster's links and on which node each rank sits. In this
 * version a collective runs alone at its algorithm's alpha-beta cost over
 * the group's bottleneck link class: NVLink when every member shares a node,
 * InfiniBand otherwise. This is the seam where link contention plugs in:
 * the engine only asks "how long does this collective take, starting now". */
#ifndef PLANSIM_NET_NET_H
#define PLANSIM_NET_NET_H

#include <glib.h>

#include "net/collective.h"
#include "spec/spec.h"

typedef struct Net Net;

/* `node_of_rank[r]` is rank r's node, for `ranks` ranks; copied. */
Net *net_new(const ClusterSpec *cluster, const int *node_of_rank, int ranks);
void net_free(Net *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Net, net_free)

/* The link parameters a collective over `members` runs on. */
AlphaBeta net_link(const Net *net, const int *members, int n);

/* Seconds `op` of `bytes` over `members` takes (see collective.h). */
double net_collective_s(const Net *net, CollOp op, const int *members, int n, double bytes);

#endif
