/* offload.h: host memory in place of GPU memory (docs/model.md, "Offload"):
 * ZeRO-Offload's optimizer, or chosen layers' activations.
 *
 * offload "optimizer" is ZeRO-Offload (Ren et al. 2021, arXiv 2101.06840).
 * The fp32 optimizer states (master weights, momentum, variance) of a
 * rank's shard and its Adam step move to the host. Per step and rank, of
 * Psi_r parameters in its optimizer shard (the ZeRO stage's, states.h):
 *   - down: the bf16 gradients of the shard, 2 Psi_r bytes to the host, each
 *     segment's as soon as the last micro-batch's backward has produced
 *     them and the reductions launched by then have ended (overlapped with
 *     the rest of backward, as ZeRO-Offload's gradient swap);
 *   - the Adam step on the host CPUs, Psi_r / (cpu_adam_params_per_s /
 *     gpus_per_node) seconds: a node's CPUs are shared by its GPUs;
 *   - up: the updated bf16 parameters, 2 Psi_r bytes from the host; the GPU's
 *     optimizer step (none left) waits for them. No one-step delayed
 *     update: the Adam step and the upload are on the critical path.
 * These run one after the other on the rank's offload stream (its copy
 * engine and its host thread). A copy is a transfer over the host path
 * (net/topology.h: the GPU's host link, and the PCIe switch uplink and CPU
 * memory the cluster says it shares): bytes / pcie_GBps alone, longer
 * where the other GPUs' copies or the traffic between nodes crossing the
 * same links share them. Down and up never overlap here (up follows the
 * Adam step, which follows every transfer down). Every GPU's copies are
 * alike, and their links join the symmetry's link classes, so the
 * symmetry reduction stays exact.
 *
 * offload "activations" is Megatron-Core's CPU offloading of activations
 * (--cpu-offloading, cpu_offloading_num_layers; Transformer Engine's
 * asynchronous double-buffered offload handler). The first offload_layers
 * layers of each model chunk (0: all but its last, whose backward follows
 * its forward at once) send what their forward keeps for backward to the
 * host: per micro-batch and offloaded layer l, its bytes A_l
 * (offload_layer_bytes) cross the host path
 *   - down, on the offload stream once l's forward has ended; the GPU
 *     frees them when the copy ends;
 *   - up, prefetched: the copy of layer l - 1 starts when the backward of
 *     layer l does (the task before it on the compute stream has ended),
 *     allocating A_{l-1} on the GPU, and l - 1's backward (its first
 *     compute-stream task) waits for it.
 * 2 A_l bytes over the host path per micro-batch and offloaded layer. Down
 * and up share the stream, in program order (the GPU's copy engines are
 * modelled as one queue). Activation recomputation is refused with it, as
 * Megatron-Core refuses it. */
#ifndef PLANSIM_STRATEGY_OFFLOAD_H
#define PLANSIM_STRATEGY_OFFLOAD_H

#include "strategy/emit.h"
#include "strategy/step.h"

/* Bytes per parameter of the optimizer shard that cross the host path
 * each way per step: gradients down, parameters up, each in the parameters' type
 * (TENSOR_PARAM: bf16; ZeRO-Offload's fp16, section 4.1). */
double offload_pcie_bytes_per_param(const PlanSpec *plan);

/* Host bytes a rank of pipeline stage `stage` keeps with `plan`: with
 * offload optimizer, per parameter of its optimizer shard, Adam's states
 * (transformer_optimizer_state_bytes: 12 in fp32) and the 2 of the bf16 gradients that
 * came down; with offload activations the most offloaded bytes of the
 * micro-batches it holds, in its schedule's order of units, each forward
 * adding its chunk's offloaded layers' A_l until its backward ends
 * (schedule_stage_held: at a zero-bubble schedule's W, an upper bound);
 * 0 otherwise. The plan must be resolved. */
double offload_host_bytes(const Step *step, int stage);

/* How many layers of model chunk g, from its first, offload their
 * activations: offload_layers, or with 0 all but the chunk's last; none
 * of a chunk without layers, and none without offload activations. The
 * plan must be resolved. */
int offload_chunk_layers(const PlanSpec *plan, int g);

/* A micro-batch's offloaded activations of model chunk g: its offloaded
 * layers' A_l (offload_layer_bytes) in model order; 0 without offload
 * activations. The plan must be resolved. */
double offload_chunk_bytes(const ModelSpec *model, const PlanSpec *plan, int g);

/* A_l: the bytes layer `layer`'s forward keeps for its backward (both of
 * its blocks, transformer_block_activation_bytes) when the plan offloads that
 * layer's activations; 0 otherwise. */
double offload_layer_bytes(const ModelSpec *model, const PlanSpec *plan, int layer);

/* The least seconds of the offload stream of a rank of pipeline stage
 * `stage` in a step: the tasks above, each micro-batch's copies of each
 * offloaded layer down and up, or the gradients down, the Adam step and
 * the parameters up, each copy at its host link's bandwidth (sharing the
 * host path only slows it); 0 without offload. The stream runs them one
 * after the other, within the step (strategy/estimate.h). The plan must be
 * resolved. */
double offload_stream_s(const Step *step, int stage);

/* The host's Adam step of a rank holding `params` parameters, seconds:
 * its optimizer shard by `rule` (step.h). */
double offload_cpu_adam_s(const ClusterSpec *cluster, const StatesRule *rule, double params);

#endif
