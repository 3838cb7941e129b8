/* data_loader.h: the input pipeline's timing (docs/model.md, "Data loading").
 *
 * As Megatron-LM's loader does, each data-parallel replica reads its
 * micro-batches once: the GPU of its first pipeline stage with tensor
 * coordinate 0 (its tensor-parallel partners receive them by a broadcast,
 * whose few bytes are not modelled). The readers of a node share its
 * storage read bandwidth and its CPUs' preprocessing rate (ClusterSpec's
 * "storage"), reading and preprocessing pipelined, so one micro-batch of
 * b sequences of B bytes takes
 *     t_load = k b max(B / read_Bps, 1 / preprocess_samples_per_s)
 * with k the readers on the busiest node, each term 0 when unlimited. The
 * strategy data_loader (data_loader.c) puts one such read per micro-batch
 * on the loader stream of every rank of the first stage, back to back from
 * the step's start, and the micro-batch's first forward waits for it. */
#ifndef PLANSIM_STRATEGY_DATA_LOADER_H
#define PLANSIM_STRATEGY_DATA_LOADER_H

#include "layout/layout.h"
#include "spec/cluster.h"
#include "spec/plan.h"

/* The most readers (ranks of the first stage with tensor coordinate 0) on
 * one node. */
int data_loader_readers_per_node(const Layout *layout, const ClusterSpec *cluster);

/* t_load above for `readers` readers per node: 0 when the plan reads
 * nothing (bytes_per_sample 0) or the cluster sets no limit. */
double data_loader_micro_batch_s(const ClusterSpec *cluster, const PlanSpec *plan, int readers);

#endif
