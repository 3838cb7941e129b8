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

/* What backward recomputes of forward (Korthikanti et al.). */
typedef enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL } Recompute;
extern const char *const recompute_names[];

/* How attention runs (docs/model.md, "FlashAttention"): one fused kernel
 * that keeps only the softmax statistics (FlashAttention-2, the plan's
 * default), or the scores, softmax and dropout as separate kernels that
 * keep the s x s scores (Korthikanti et al.). */
typedef enum { ATTENTION_FLASH, ATTENTION_STANDARD } Attention;
extern const char *const attention_names[];

/* The element type gradients accumulate and are reduced in: fp32, as
 * Megatron-LM's bf16 training keeps its main gradients (18 bytes of model
 * states per parameter), or bf16, the ZeRO paper's (16 bytes). */
typedef enum { GRAD_ACCUM_FP32, GRAD_ACCUM_BF16 } GradAccumDtype;
extern const char *const grad_accum_dtype_names[];

/* Element types of parameters, gradients and activations. */
typedef enum { DTYPE_BF16 } Dtype;
extern const char *const dtype_names[];

/* Rank numbering, fastest-varying coordinate first (Megatron-LM's order
 * strings): RANK_ORDER_TP_DP_PP, the default, keeps a tensor-parallel group
 * on consecutive GPUs, so inside a node. */
typedef enum {
    RANK_ORDER_TP_DP_PP,
    RANK_ORDER_TP_PP_DP,
    RANK_ORDER_DP_TP_PP,
    RANK_ORDER_DP_PP_TP,
    RANK_ORDER_PP_TP_DP,
    RANK_ORDER_PP_DP_TP
} RankOrder;
extern const char *const rank_order_names[];

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
