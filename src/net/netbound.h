/* netbound.h: lower bounds of the network's collectives, from a cluster
 * alone (no topology, no replay), for the step bounds of
 * strategy/estimate.h. Each is a bound of what net.c replays:
 *   - a link carries at most its capacity times its Simple efficiency in
 *     payload a second: the fluid model shares a link's capacity, and a
 *     transfer holds it for its payload over its efficiency, at most its
 *     class's Simple efficiency (algorithm.c: other protocols, tree and
 *     NVLS transfers and transfers across nodes only lower it);
 *   - a transfer runs from its source's links to its destination's
 *     (topology.c), so a rank's bytes in or out pass its NVLink's and its
 *     NIC's capacities together;
 *   - a collective's phase waits its latency before its transfers start
 *     (net.c);
 *   - a collective whose shards fit in a packet may be latency-bound
 *     (net.h) and load no link: its bytes count 0. */
#ifndef PLANSIM_NET_NETBOUND_H
#define PLANSIM_NET_NETBOUND_H

#include <glib.h>

#include "spec/cluster.h"

/* The payload a link of class `link` and `capacity` bytes/s carries at
 * most each second. */
double netbound_payload_Bps(const LinkSpec *link, double capacity);

/* A GPU's NIC's netbound_payload_Bps, and the node's NICs in *nics. */
double netbound_nic_payload_Bps(const ClusterSpec *cluster, int *nics);

/* Whether a collective of `bytes` over n ranks loads the links: its
 * shards exceed a packet. */
gboolean netbound_loads_links(double bytes, int n);

/* `times` x `bytes`, the bytes `times` collectives of `bytes` over n ranks
 * move, if they load the links; else 0. */
double netbound_loaded_bytes(double times, double bytes, int n);

/* A lower bound of a collective of `bytes` over n ranks (as
 * emit_collective takes them; collective.h), whatever its op: an
 * all-gather brings every other rank's shard in, a reduce-scatter or an
 * all-to-all sends the rank's data for every other out (an all-reduce
 * does both), (n - 1) / n of the bytes, which pass the rank's links of
 * that direction, each at most its netbound_payload_Bps. 0 for a
 * collective that may be latency-bound. */
double netbound_exchange_s(const ClusterSpec *cluster, double bytes, int n);

/* The least per-message latency of the cluster's protocols on `link`. */
double netbound_least_alpha_s(const ClusterSpec *cluster, const LinkSpec *link);

/* A lower bound of one send/recv of `bytes` from one rank to another
 * (algorithm.c's direct plan): its phase waits the cluster's base latency
 * and a message's least latency, then the bytes pass a link at most its
 * netbound_payload_Bps (none if they fit in a packet): a GPU's NIC when
 * the two are on different nodes (`across`), else whichever class is
 * faster, as they may share a node or not. */
double netbound_send_s(const ClusterSpec *cluster, double bytes, gboolean across);

/* The least latency of an all-to-all over n members (algorithm.c's direct
 * plan): its phase waits the cluster's base latency, then its n - 1
 * messages one after the other, each at least netbound_least_alpha_s
 * across nodes when `across` (the members span nodes), else on either
 * link class. */
double netbound_all_to_all_latency_s(const ClusterSpec *cluster, int n, gboolean across);

#endif
