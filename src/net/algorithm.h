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
 *     inner ranks of the other: about 2 S in and out of every rank;
 *   - hierarchical (all-reduce over nodes of g ranks each): reduce-scatter
 *     inside each node, all-reduce of S/g across nodes among the ranks of
 *     each local index (one rail), all-gather inside each node;
 *   - direct: all-to-all (every pair S/n) and send/recv (one message).
 * Each phase first waits its latency: the messages it sends one after the
 * other (2(n - 1) for a ring all-reduce) times the per-message alpha of the
 * slowest link class it crosses; then its transfers run together. */
#ifndef PLANSIM_NET_ALGORITHM_H
#define PLANSIM_NET_ALGORITHM_H

#include <glib.h>

#include "net/collective.h"
#include "net/topology.h"

typedef struct {
    int32_t src, dst; /* GPUs */
    double bytes;
} Transfer;

typedef struct {
    double latency_s;
    int first, count; /* its transfers */
} CollPhase;

#define ALGO_MAX_PHASES 3

typedef struct {
    CollAlgorithm algorithm; /* the one it runs */
    int n_phases;
    CollPhase phase[ALGO_MAX_PHASES];
    GArray *transfers; /* Transfer, all phases' */
} CollPlan;

CollPlan *algo_plan_new(void);
void algo_plan_free(CollPlan *plan);

/* Whether `a` can run `op` over `members` (ring always can, for the
 * reducing and gathering ops). */
gboolean algo_applies(const Topology *t, CollOp op, CollAlgorithm a, const int *members, int n);

/* Fills `plan` with `op` of `bytes` over the `n` GPUs `members` run with
 * algorithm `a` (not AUTO; it must apply). */
void algo_plan(CollPlan *plan, const Topology *t, CollOp op, CollAlgorithm a, const int *members,
               int n, double bytes);

#endif
