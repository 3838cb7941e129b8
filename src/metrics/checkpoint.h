/* checkpoint.h: a plan's checkpoint, what each GPU and node writes, and
 * how long saving and loading it take on the cluster's storage
 * (docs/model.md, "Checkpoints").
 *
 * A checkpoint holds the parameters as trained (bf16, 2 bytes) and
 * Adam's fp32 master weights, momentum and variance (12 bytes): 14 bytes
 * a parameter, gradients not kept. Each model-parallel rank saves the
 * parameters it holds (so a tied model's last stage its copy of the word
 * embedding, and each tensor-parallel rank its copy of what tp does not
 * split: Megatron-LM's file per rank). Of them, each rank writes what its
 * ZeRO stage shards to it, and the states the stage leaves replicated are
 * written by one replica, the first rank of the group that holds them
 * (the data-parallel group with context parallelism, or for routed
 * experts under ep > 1 the expert-data-parallel group): DeepSpeed's
 * layout, and Megatron-LM's before its fully parallel save. A node writes its GPUs'
 * bytes together at its storage write bandwidth, and the file system all
 * nodes' at its aggregate bandwidth, if the cluster gives one:
 *     save_s = max(node_bytes / node_write, total_bytes / aggregate_write)
 * and likewise a load, at the read bandwidths. An asynchronous save pauses
 * training only while each GPU copies its bytes to host memory over its
 * PCIe link (snapshot_s), then writes them as save_s says in the
 * background. */
#ifndef PLANSIM_METRICS_CHECKPOINT_H
#define PLANSIM_METRICS_CHECKPOINT_H

#include "strategy/step.h"

/* Bytes per parameter saved: bf16 weights and Adam's fp32 states. */
#define CHECKPOINT_WEIGHT_BYTES 2.0

/* A node's storage bandwidth, each way, when the cluster's "storage"
 * gives none: 10 GB/s, an assumption of a parallel file system's client
 * throughput per node (docs/inputs.md, "Storage"). */
#define CHECKPOINT_NODE_Bps 10e9

typedef struct {
    double total_bytes; /* the whole checkpoint */
    double gpu_bytes;   /* the most one GPU writes */
    double node_bytes;  /* the most one node writes */
    double save_s;      /* a synchronous save, all of it on the critical path */
    double load_s;      /* reading it back when the job restarts */
    double snapshot_s;  /* an asynchronous save's pause: gpu_bytes over the GPU's PCIe
                         * link; 0 when the GPU gives no pcie_GBps */
} Checkpoint;

/* The checkpoint of `step`. */
void checkpoint_of_plan(Checkpoint *out, const Step *step);

#endif
