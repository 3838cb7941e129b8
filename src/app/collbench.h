/* collbench.h: nccl-tests for the simulated network.
 *
 * Runs one collective over the first `ranks` GPUs of a cluster for sizes
 * doubling from `min_bytes` to `max_bytes`, each as a task graph of that
 * one collective replayed by the engine, and reports what nccl-tests
 * would: time, algbw = S / time and busbw = algbw x 2(n - 1)/n for
 * all-reduce, x (n - 1)/n for all-gather, reduce-scatter and all-to-all,
 * x 1 for send/recv. Users hold the model against their own runs.
 *
 * The GPUs are laid out as tp x dp, tp those of a node, and replayed one
 * per orbit of the shifts of tp and dp that map the cluster onto itself
 * (net/symmetry.h), which gives the same times as replaying every GPU
 * (check_calibrate holds the two together). */
#ifndef PLANSIM_APP_COLLBENCH_H
#define PLANSIM_APP_COLLBENCH_H

#include <glib.h>

#include "net/collective.h"
#include "output/report.h"
#include "spec/cluster.h"

/* The most transfers the plan of one collective may hold: with the
 * network's flows and their tallies, about 100 bytes each at the peak
 * (measured: 1.58 GB for an all-to-all over 4,095 ranks, no symmetry), so
 * about 1.6 GB. An all-to-all over n ranks has n (n - 1), so it runs over
 * at most 4,096 ranks; the other operations about 2 per rank and channel
 * (a node's NICs), so an all-reduce over 800,000 GPUs of 8 NICs a node
 * fits. */
#define COLLBENCH_MAX_TRANSFERS (1 << 24)

/* Refuses (PS_ERROR_INPUT, naming --ranks) `op` over GPUs 0 .. ranks - 1 of
 * `cluster` when its plans could hold more than COLLBENCH_MAX_TRANSFERS
 * transfers, or when the system would not map them (base/bigmem.h); before
 * anything is built, in microseconds. collbench_run checks it first;
 * whoever replays a collective of its own shape (calibrate) asks too. */
gboolean collbench_check(const ClusterSpec *cluster, CollOp op, int ranks, GError **error);

/* The rows (CollRow) of the table; NULL and `error` set on bad input
 * (ranks, sizes, send/recv over other than 2 ranks, a collective over
 * the cap: collbench_check). */
GArray *collbench_run(const ClusterSpec *cluster, CollOp op, int ranks, double min_bytes,
                      double max_bytes, CollAlgorithm algorithm, GError **error);

/* The same, reduced by the shifts and rotations of `dims` only
 * (symmetry.h's SYMMETRY_ bits; 0: every GPU replayed, the oracle the
 * tests compare with). */
GArray *collbench_run_with(const ClusterSpec *cluster, CollOp op, int ranks, double min_bytes,
                           double max_bytes, CollAlgorithm algorithm, unsigned dims,
                           GError **error);

/* The time of `op` of `bytes` over GPUs 0 .. ranks - 1 taken alone: the
 * cost of the algorithm and protocol chosen as simulate chooses them
 * (net.h), its transfers not replayed as flows, in *used the algorithm
 * (NULL: not wanted). For one collective on idle links that is the
 * replay's time, which collbench_run reports (check_calibrate holds the
 * two together on the shipped clusters), in a fraction of the work:
 * calibrate times its points so. The shape must be one collbench_run
 * takes and collbench_check passes. */
double collbench_alone_s(const ClusterSpec *cluster, CollOp op, int ranks, double bytes,
                         CollAlgorithm algorithm, CollAlgorithm *used);

#endif
