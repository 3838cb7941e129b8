/* names.h: the enumerations that several layers share, each with its one
 * table of names.
 *
 * A name table is a NULL-terminated array of strings indexed by the enum's
 * value: the words the JSON files, the flags and the reports use. Looking a
 * word up and listing the choices in an error go through names_find and
 * names_list, never through hand-written loops. */
#ifndef PLANSIM_BASE_NAMES_H
#define PLANSIM_BASE_NAMES_H

#include <glib.h>

/* Pipeline schedules (schedules.def). */
typedef enum {
#define SCHEDULE(ID, name, row) SCHEDULE_##ID,
#include "base/schedules.def"
#undef SCHEDULE
    SCHEDULES
} Schedule;
extern const char *const schedule_names[];
/* Per schedule: whether it places a stage's two model chunks in a V
 * (schedules.def's SCHEDULE_V; layout/chunks.h). */
extern const gboolean schedule_v_shaped[];

/* What backward recomputes of forward (Korthikanti et al.). */
typedef enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL } Recompute;
extern const char *const recompute_names[];

/* The modules a selective recomputation replays, Megatron-Core's
 * recompute_modules (docs/model.md, "Recomputation by module"): a plan
 * holds a set of them, bit 1 << m for module m. */
typedef enum {
    RECOMPUTE_CORE_ATTN,   /* standard attention's scores, softmax, dropout, score x V */
    RECOMPUTE_LAYERNORM,   /* the norms that stand apart from their GEMM */
    RECOMPUTE_MLA_UP_PROJ, /* latent attention's latent norms, up-projections and RoPE */
    RECOMPUTE_MOE_ACT,     /* the routed experts' activation */
    RECOMPUTE_MODULES
} RecomputeModule;
extern const char *const recompute_module_names[];

/* How attention runs (docs/model.md, "FlashAttention"): one fused kernel
 * that keeps only the softmax statistics (FlashAttention-2, the plan's
 * default), or the scores, softmax and dropout as separate kernels that
 * keep the s x s scores (Korthikanti et al.). */
typedef enum { ATTENTION_FLASH, ATTENTION_STANDARD } Attention;
extern const char *const attention_names[];

/* How the loss's cross-entropy runs over the logits (docs/model.md,
 * "The head"): Megatron-Core's vocabulary-parallel cross-entropy as
 * separate fp32 kernels (Megatron-LM's default), its jit-fused kernels
 * (--cross-entropy-loss-fusion), or Transformer Engine's fused kernels
 * (--cross-entropy-fusion-impl te, Megatron-Bridge's benchmarks'). */
typedef enum { CE_FUSION_NONE, CE_FUSION_NATIVE, CE_FUSION_TE } CeFusion;
extern const char *const ce_fusion_names[];

/* The element type gradients accumulate and are reduced in: fp32, as
 * Megatron-LM's bf16 training keeps its main gradients (18 bytes of model
 * states per parameter), or bf16, the ZeRO paper's (16 bytes). */
typedef enum { GRAD_ACCUM_FP32, GRAD_ACCUM_BF16 } GradAccumDtype;
extern const char *const grad_accum_dtype_names[];

/* How Adam keeps its states (docs/model.md, "Memory"): fp32 main weights,
 * momentum and variance (Megatron-LM's); the main weights as the 16 bits
 * each bf16 parameter lacks (store_param_remainders, Apex's and
 * Megatron-Core's); bf16 momentum and variance updating the bf16
 * parameters, with no main weights (Apex's distributed Adam with dtype
 * bf16); or fp32 main weights with bf16 momentum and variance
 * (DeepSeek-V3's, its report's section 3.3.3; Megatron-Core's
 * precision-aware optimizer with exp_avg_dtype and exp_avg_sq_dtype bf16,
 * as Megatron-Bridge's DeepSeek recipes set it). */
typedef enum {
    OPTIMIZER_STATES_FP32,
    OPTIMIZER_STATES_REMAINDERS,
    OPTIMIZER_STATES_BF16,
    OPTIMIZER_STATES_BF16_MOMENTS
} OptimizerStates;
extern const char *const optimizer_states_names[];

/* The element type of the transformer layers' matrix multiplies (the
 * plan's dtype, dtypes.def; docs/model.md, "Precision recipes"): bf16, or
 * a format of Transformer Engine's (fp8 E4M3 forward and E5M2 gradients,
 * MXFP8, NVFP4), whose GEMMs read narrow inputs with their scales while
 * everything else stays in bf16. */
typedef enum {
#define DTYPE(ID, ...) DTYPE_##ID,
#include "base/dtypes.def"
#undef DTYPE
    DTYPES
} Dtype;
extern const char *const dtype_names[];

/* How dtype fp8 scales its tensors (Megatron-Core's --fp8-recipe):
 * delayed, from the amax history its ranks reduce, or tensorwise, from
 * each tensor's own amax (Transformer Engine's current scaling). */
typedef enum { FP8_RECIPE_DELAYED, FP8_RECIPE_TENSORWISE } Fp8Recipe;
extern const char *const fp8_recipe_names[];

/* Bytes of one element of `d`: bf16 2, fp8 1, nvfp4 0.5. The one place
 * element sizes live; bf16 tensors take dtype_bytes(DTYPE_BF16). */
double dtype_bytes(Dtype d);
/* Bytes of the scales of one element of `d`: its block's scale over the
 * block (mxfp8 1/32), 0 for one scale a tensor. */
double dtype_scale_bytes(Dtype d);
/* Whether casting to `d` first reads the tensor for its amax (dtypes.def). */
gboolean dtype_amax_pass(Dtype d);

/* What leaves the GPU for host memory (docs/model.md, "Offload"): nothing,
 * the optimizer states and step (ZeRO-Offload), or the activations of
 * chosen layers (Megatron-Core's CPU offloading). */
typedef enum { OFFLOAD_NONE, OFFLOAD_OPTIMIZER, OFFLOAD_ACTIVATIONS } Offload;
extern const char *const offload_names[];

/* Rank numbering, fastest-varying coordinate first (Megatron-LM's order
 * strings): RANK_ORDER_TP_DP_PP, the default, keeps a tensor-parallel group
 * on consecutive GPUs, so inside a node. The context-parallel coordinate
 * varies right after tp in the orders that do not name it (Megatron-Core's
 * tp-cp-dp-pp), so with cp = 1 they number ranks as before; the last two
 * place it first or after dp. */
typedef enum {
    RANK_ORDER_TP_DP_PP,
    RANK_ORDER_TP_PP_DP,
    RANK_ORDER_DP_TP_PP,
    RANK_ORDER_DP_PP_TP,
    RANK_ORDER_PP_TP_DP,
    RANK_ORDER_PP_DP_TP,
    RANK_ORDER_CP_TP_DP_PP,
    RANK_ORDER_TP_DP_CP_PP,
    RANK_ORDERS
} RankOrder;
extern const char *const rank_order_names[];

/* How context parallelism splits attention (docs/model.md, "Context
 * parallelism"): ring attention's KV exchange around the CP group, or
 * DeepSpeed-Ulysses' all-to-alls that trade the sequence split for a head
 * split around attention. */
typedef enum { CP_RING, CP_ALL_TO_ALL } CpAlgorithm;
extern const char *const cp_algorithm_names[];

/* How a MoE layer sends tokens to their experts' GPUs (expert_parallel.c):
 * an all-to-all there and back, or an all-gather of every token over the
 * expert-parallel group and a reduce-scatter back. */
typedef enum {
    MOE_DISPATCHER_ALL_TO_ALL,
    MOE_DISPATCHER_ALL_GATHER,
    MOE_DISPATCHER_FLEX /* DeepEP's or HybridEP's deduplicated dispatch (Megatron-Core's flex) */
} MoeDispatcher;
extern const char *const moe_dispatcher_names[];

/* Collective algorithms (NCCL's; algorithms.def). */
typedef enum {
    ALGORITHM_AUTO,
#define ALGORITHM(ID, name, forcible) ALGORITHM_##ID,
#include "base/algorithms.def"
#undef ALGORITHM
    ALGORITHMS
} CollAlgorithm;
extern const char *const collective_algorithm_names[];
extern const char *const collective_algorithm_choices[]; /* auto and the forcible ones */

/* Collective operations (the network's, src/net/collective.h); the task
 * graph's collectives carry one. */
typedef enum {
    COLL_ALL_REDUCE,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_ALL_TO_ALL,
    COLL_SEND_RECV,
    COLL_RING_EXCHANGE, /* every member sends S to the next, around the group (nccl-tests'
                         * sendrecv; ring attention's KV exchange) */
    COLL_N_OPS
} CollOp;
extern const char *const collective_names[]; /* "all_reduce", "all_gather", ... */

/* "all_reduce", ... as reports name them. */
const char *collective_name(CollOp op);

/* "auto", "ring", "tree", "hierarchical", "direct". */
const char *collective_algorithm_name(CollAlgorithm a);

/* The index of `name` in `table`, or -1 when it is not there (or NULL). */
int names_find(const char *const *table, const char *name);

/* The table as a list for messages: "\"a\", \"b\", \"c\"" (for "one of
 * ...") when `quoted`, else "a, b or c". Newly allocated. */
char *names_list(const char *const *table, gboolean quoted);

#endif
