/* zero.h: model states, which zero.c owns: the bytes of each kind per
 * parameter, and the ways the plan's ZeRO stage splits each kind.
 *
 * One table for every user: emit.c allocates the states at "step begin",
 * estimate.c bounds the memory peak with them, data_parallel.c reduces the
 * gradients in their element type. */
#ifndef PLANSIM_STRATEGY_ZERO_H
#define PLANSIM_STRATEGY_ZERO_H

#include "strategy/emit.h"

/* Adam's fp32 master weights, momentum and variance, bytes per parameter
 * (Rajbhandari et al. 2020, section 3: K = 12). */
#define ZERO_OPTIMIZER_BYTES 12.0

/* Bytes one parameter's state of `kind` takes on the GPU, unsplit: bf16
 * parameters (2); gradients in the plan's grad_accum_dtype (fp32 4, bf16
 * 2); Adam's fp32 master weights, momentum and variance (12; 0 when the
 * plan offloads the optimizer, whose states then live in host memory,
 * offload.h); 0 for the other kinds.
 * So 18 bytes per parameter with fp32 gradients (Megatron-LM), 16 with
 * bf16 (Rajbhandari et al. 2020, section 3). */
double zero_bytes_per_param(const PlanSpec *plan, MemKind kind);

/* The ways each kind is split (1 for what is not): ZeRO stage 1 the
 * optimizer states over dp, stage 2 also the gradients, stage 3 also the
 * parameters. */
void zero_state_shards(const PlanSpec *plan, int shards[MEM_KINDS]);

/* The GPU's optimizer step of a rank holding `params` parameters: one
 * mixed-precision Adam step over its shard (tf_optimizer_ops), or none
 * when the plan offloads the optimizer to the host (offload.h). */
double zero_optimizer_s(const GpuSpec *gpu, const PlanSpec *plan, double params);

/* Model-state bytes of a rank holding `params` parameters: each kind's
 * bytes split its ways, summed kind by kind in MemKind order, as the
 * engine's memory ledger sums emit.c's allocations. With d = dp: stage 0
 * 18 (16) Psi, stage 1 6 (4) Psi + 12 Psi / d, stage 2 2 Psi + 16 (14)
 * Psi / d, stage 3 18 (16) Psi / d, fp32 (bf16) gradients. */
double zero_states_bytes(const PlanSpec *plan, double params);

#endif
