/* offload.h: ZeRO-Offload (Ren et al. 2021, arXiv 2101.06840), the plan's
 * offload "optimizer" (docs/model.md, "Offload").
 *
 * The fp32 optimizer states (master weights, momentum, variance) of a
 * rank's shard and its Adam step move to the host. Per step and rank, of
 * Psi_r parameters in its optimizer shard (the ZeRO stage's, zero.h):
 *   - down: the bf16 gradients of the shard, 2 Psi_r bytes over PCIe, each
 *     segment's as soon as the last micro-batch's backward has produced
 *     them and the reductions launched by then have ended (overlapped with
 *     the rest of backward, as ZeRO-Offload's gradient swap);
 *   - the Adam step on the host CPUs, Psi_r / (cpu_adam_params_per_s /
 *     gpus_per_node) seconds: a node's CPUs are shared by its GPUs;
 *   - up: the updated bf16 parameters, 2 Psi_r bytes over PCIe; the GPU's
 *     optimizer step (none left) waits for them. No one-step delayed
 *     update: the Adam step and the upload are on the critical path.
 * These run one after the other on the rank's offload stream (its PCIe
 * link, one x16 per GPU, and its host thread), a transfer taking bytes /
 * pcie_GBps: down and up never overlap here (up follows the Adam step,
 * which follows every transfer down), so one stream is exact. Every GPU's
 * are alike and purely local, so the symmetry reduction stays exact. */
#ifndef PLANSIM_STRATEGY_OFFLOAD_H
#define PLANSIM_STRATEGY_OFFLOAD_H

#include "strategy/emit.h"

/* Bytes per parameter of the optimizer shard that cross PCIe each way
 * per step: bf16 gradients down, bf16 parameters up (ZeRO-Offload's fp16,
 * section 4.1). */
double offload_pcie_bytes_per_param(void);

/* Host bytes a rank holding `params` parameters keeps with `plan`: with
 * offload optimizer, per parameter of its optimizer shard, the 12 bytes of
 * fp32 states (ZERO_OPTIMIZER_BYTES) and the 2 of the bf16 gradients
 * that came down; 0 otherwise. */
double offload_host_bytes(const PlanSpec *plan, double params);

/* The host's Adam step of a rank holding `params` parameters, seconds. */
double offload_cpu_adam_s(const ClusterSpec *cluster, const PlanSpec *plan, double params);

#endif
