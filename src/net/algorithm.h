/* algorithm.h: how a collective runs, as phases of concurrent transfers.
 *
 * NCCL-style algorithms (Thakur, Rabenseifner and Gropp 2005; NCCL's
 * performance notes), n ranks, S bytes as in collective.h:
 *   - ring: each rank sends its share to the next in a ring, all at once;
 *     a ring spanning nodes runs one channel per NIC a node's members can
 *     use (at most members per node), each carrying 1/C of the data and
 *     leaving each node through a different GPU and NIC, entering the next
 *     node on the same rail, as NCCL's rings do;
 *   - tree (all-reduce): NCCL's double binary tree, two trees each carrying
 *     S/2 up (reduce) and down (broadcast), pipelined, the leaves of one the
 *     inner ranks of the other: about 2 S in and out of every rank. Over
 *     nodes holding g members each it runs, like NCCL's, one channel per
 *     NIC: a chain through each node's members from a head, the heads of
 *     the nodes joined by the double binary tree, each channel's head on
 *     its own NIC (on two nodes a node then sends S, not 2(n - 1)/n S, out
 *     of its NICs: the tree's bus bandwidth passes the network's);
 *   - hierarchical (all-reduce over nodes of g ranks each): reduce-scatter
 *     inside each node, all-reduce of S/g across nodes among the ranks of
 *     each local index (one rail), all-gather inside each node;
 *   - nvls (all-reduce inside one node whose cluster has NVLink SHARP):
 *     the NVSwitch reduces, so each GPU's port moves about S each way,
 *     not 2(n - 1)/n S; drawn as S from every member to the next;
 *   - direct: all-to-all (every pair S/n) and send/recv (one message).
 *
 * Each runs with one of NCCL's protocols (spec/cluster.h's CollProtocol): LL
 * carries 4 bytes of data in every 8 (half the bandwidth), LL128 120 in
 * every 128, Simple all of it; LL and LL128 pay less latency per message.
 * A transfer's `bytes` are the time it holds its links for: its payload
 * over the link class's efficiency (the fraction of the line rate Simple
 * reaches) and the protocol's share of data, so that the network charges
 * the protocol's and the link's overheads without knowing of them.
 *
 * Each phase first waits its latency: the messages it sends one after the
 * other times the per-message alpha, with the protocol, of the link class
 * each crosses (a ring all-reduce over k nodes: 2(k - 1) across nodes and
 * the rest of its 2(n - 1) inside them, as NCCL's tuner counts them); the
 * first also waits the cluster's base latency; then its transfers run
 * together. */
#ifndef PLANSIM_NET_ALGORITHM_H
#define PLANSIM_NET_ALGORITHM_H

#include <glib.h>

#include "net/collective.h"
#include "net/topology.h"

typedef struct {
    int32_t src, dst; /* GPUs */
    double bytes;     /* link time with the route's protocol, as bytes at the
                       * links' capacity (above); set once it is chosen */
} Transfer;

typedef struct {
    double latency_s;             /* with the route's protocol */
    double latency_by[PROTOCOLS]; /* with each protocol */
    int first, count;             /* its transfers */
} CollPhase;

#define ALGO_MAX_PHASES 3

/* An algorithm's phases and transfers are the same whatever the protocol:
 * only a transfer's link time and a phase's latency depend on it, so a
 * route is built once and costed with every protocol (algo_transfer_bytes,
 * latency_by). */
typedef struct {
    CollAlgorithm algorithm; /* the one it runs */
    CollProtocol protocol;   /* and its protocol */
    int n_phases;
    CollPhase phase[ALGO_MAX_PHASES];
    int n_transfers, room; /* transfers, and room for them in the arrays below */
    Transfer *transfers;   /* all phases' */
    double *payload;       /* per transfer: the collective's bytes it carries */
    double *efficiency;    /* per transfer: the fraction of its links' capacity it
                            * reaches with Simple */
} CollRoute;

CollRoute *algo_route_new(void);
void algo_route_free(CollRoute *route);

/* The ranks of one collective, as the algorithms see them: the members in
 * their given order, and grouped by node. */
typedef struct CollRanks CollRanks;

/* The `n` GPUs `members` on `t` (both outlive it). */
CollRanks *algo_ranks_new(const Topology *t, const int *members, int n);
void algo_ranks_free(CollRanks *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CollRanks, algo_ranks_free)

/* An algorithm: one row of algo_table. */
typedef struct {
    const char *name; /* as collective_algorithm_names has it */
    /* Whether it can run `op` over these ranks. */
    gboolean (*applies)(const CollRanks *r, CollOp op);
    /* Appends the phases and transfers of `op` of `bytes` (collective.h's
     * S) over these ranks to an empty `route`; only where it applies. */
    void (*route)(CollRoute *route, const CollRanks *r, CollOp op, double bytes);
    unsigned protocols; /* 1 << CollProtocol it can run with */
} CollAlgorithmRow;

/* The algorithms, indexed by CollAlgorithm; ALGORITHM_AUTO's row is empty
 * (no `route`). A new algorithm is its NAME_applies, NAME_route and
 * NAME_protocols in algorithm.c plus its row in base/algorithms.def. */
extern const CollAlgorithmRow algo_table[ALGORITHMS];

/* "LL", "LL128", "Simple". */
const char *algo_protocol_name(CollProtocol p);

/* The fraction of a link's bytes that is data with protocol `p`: 1/2,
 * 120/128, 1. */
double algo_protocol_share(CollProtocol p);

/* The link time of transfer `i` of `route` with a protocol whose share
 * (algo_protocol_share) is `share`: its payload over its efficiency times
 * that share; Transfer.bytes with the route's protocol. */
static inline double algo_transfer_bytes(const CollRoute *route, int i, double share)
{
    return route->payload[i] / (route->efficiency[i] * share);
}

/* The cost of a route with each protocol of the mask `protocols` (1 <<
 * CollProtocol), into cost[protocol]; the route's own protocol is unset. */
typedef void (*AlgoCost)(const CollRoute *route, unsigned protocols, double cost[PROTOCOLS],
                         void *ctx);

/* Fills `route` with `op` of `bytes` over `r` run by `forced` if it applies;
 * otherwise (or for ALGORITHM_AUTO) by the applicable algorithm of least
 * `cost`, the first in table order on ties, as NCCL's tuner picks one from
 * its cost model; each algorithm with the protocol of least cost among
 * those it runs with and the cluster models (topology.h), the first of
 * LL, LL128, Simple on ties. Each applicable algorithm's route is built
 * once and costed with all its protocols in one call. Returns that cost. */
double algo_choose(CollRoute *route, const CollRanks *r, CollOp op, CollAlgorithm forced,
                   double bytes, AlgoCost cost, void *ctx);

/* Fills an empty `route` with a copy of `bytes` from `src` to `dst`, a GPU
 * and its host (topology_host) either way: one phase of one transfer, no
 * latency, its bytes at the links' capacity (a host link's bandwidth is
 * what copies reach), with Simple; its algorithm ALGORITHM_DIRECT, one
 * message from end to end. */
void algo_copy_route(CollRoute *route, int src, int dst, double bytes);

#endif
