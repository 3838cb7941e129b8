/* spec.h: the three inputs of a simulation as plain C structs.
 *
 * A model (what is trained), a cluster (what it runs on) and a plan (how it
 * is split). They are parsed from JSON and fully validated here; nothing
 * outside src/spec/ sees cJSON. Every error names the file, the JSON path (or
 * the command-line flag), the bad value and what was expected.
 *
 * Units: sizes are counts; rates are SI (FLOP/s, bytes/s); times seconds;
 * memory bytes. The JSON files use the units their key names say (GBps is
 * 1e9 bytes per second, per GPU per direction; us is microseconds; GiB is
 * 2^30 bytes) and the parser converts. */
#ifndef PLANSIM_SPEC_SPEC_H
#define PLANSIM_SPEC_SPEC_H

#include <glib.h>

/* ---- model ------------------------------------------------------------ */

typedef enum { MLP_GELU, MLP_SWIGLU } MlpKind;

typedef struct {
    char *name;
    int layers;          /* transformer layers, l */
    int hidden_size;     /* h */
    int attention_heads; /* a */
    int kv_heads;        /* key/value heads (GQA); equals a for MHA */
    int ffn_hidden_size; /* f */
    int vocab_size;      /* V */
    int seq_length;      /* s, tokens per sequence */
    MlpKind mlp;
    gboolean tied_embeddings; /* input embedding shared with the output layer */
} ModelSpec;

/* Reads a plansim model file or a Hugging Face config.json (recognised by
 * its "num_hidden_layers" key). Returns NULL and sets `error` on bad input. */
ModelSpec *model_spec_load(const char *path, GError **error);
void model_spec_free(ModelSpec *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ModelSpec, model_spec_free)

/* ---- cluster ---------------------------------------------------------- */

typedef struct {
    double bandwidth_Bps; /* per GPU, per direction */
    double latency_s;     /* per message (alpha) */
} LinkSpec;

typedef struct {
    char *name;
    double peak_flops;         /* dense bf16, FLOP/s */
    double memory_bytes;       /* HBM capacity */
    double memory_Bps;         /* HBM bandwidth */
    double compute_efficiency; /* fraction of peak a large GEMM reaches, (0, 1] */
    double memory_efficiency;  /* fraction of bandwidth a streaming kernel reaches */
    double launch_s;           /* fixed cost per kernel */
    double comm_interference;  /* compute slows by this fraction while the GPU
                                * runs communication kernels, [0, 0.95] */
} GpuSpec;

/* Collective algorithms (NCCL's): a plan or cluster may force one of the
 * first four; "direct" is all-to-all's and send/recv's own. */
typedef enum {
    ALGORITHM_AUTO,
    ALGORITHM_RING,
    ALGORITHM_TREE,
    ALGORITHM_HIERARCHICAL,
    ALGORITHM_DIRECT,
    ALGORITHMS
} CollAlgorithm;

/* "auto", "ring", "tree", "hierarchical", "direct". */
const char *collective_algorithm_name(CollAlgorithm a);

typedef struct {
    char *name;
    int nodes;
    int gpus_per_node;
    GpuSpec gpu;
    LinkSpec intra;          /* NVLink inside a node */
    LinkSpec inter;          /* InfiniBand between nodes, per GPU */
    int nics_per_node;       /* GPUs share a NIC when there are fewer */
    double oversubscription; /* of the spine over the rail leaves, >= 1 */
    CollAlgorithm algorithm; /* the cluster's choice, ALGORITHM_AUTO by default */
} ClusterSpec;

/* Reads a cluster file; `nodes_override` > 0 replaces its "nodes". */
ClusterSpec *cluster_spec_load(const char *path, int nodes_override, GError **error);
void cluster_spec_free(ClusterSpec *cluster);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClusterSpec, cluster_spec_free)

/* GPUs in the cluster. */
int cluster_spec_gpus(const ClusterSpec *cluster);

/* ---- plan ------------------------------------------------------------- */

typedef enum { SCHEDULE_NAIVE, SCHEDULE_GPIPE, SCHEDULE_1F1B, SCHEDULE_INTERLEAVED } Schedule;
typedef enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL } Recompute;
typedef enum { DTYPE_BF16 } Dtype;

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

/* The plan's fields, in the order reports list them. */
typedef enum {
    PLAN_TP,
    PLAN_PP,
    PLAN_DP,
    PLAN_MICRO_BATCH_SIZE,
    PLAN_GLOBAL_BATCH_SIZE,
    PLAN_SCHEDULE,
    PLAN_VIRTUAL_STAGES,
    PLAN_LAYERS_PER_STAGE,
    PLAN_RANK_ORDER,
    PLAN_ZERO_STAGE,
    PLAN_SEQUENCE_PARALLEL,
    PLAN_RECOMPUTE,
    PLAN_OVERLAP_GRAD_REDUCE,
    PLAN_DDP_BUCKET_SIZE,
    PLAN_DTYPE,
    PLAN_COLLECTIVE_ALGORITHM,
    PLAN_LINK_CONTENTION,
    PLAN_N_FIELDS
} PlanField;

typedef struct {
    int tp, pp, dp;        /* dp 0 until resolved: GPUs / (tp * pp) */
    int micro_batch_size;  /* b, sequences */
    int global_batch_size; /* B, sequences per step; 0 until resolved: b * dp */
    Schedule schedule;
    int virtual_stages; /* v, model chunks per pipeline rank */
    /* layers of each of the pp x v model chunks, in model order (chunk c of
     * stage s is chunk c * pp + s); NULL until resolved, then an even split
     * unless given */
    int *layers_per_stage;
    int n_layers_per_stage;
    RankOrder rank_order;
    int zero_stage; /* 0..3 */
    gboolean sequence_parallel;
    Recompute recompute;
    gboolean overlap_grad_reduce;
    int ddp_bucket_size;      /* parameters per gradient bucket */
    Dtype dtype;              /* of parameters, gradients and activations */
    CollAlgorithm algorithm;  /* forced on every collective; AUTO: the cluster's */
    gboolean link_contention; /* transfers share links; else each runs alone */
    /* where each field's value came from: "FILE: $.key", "--flag" or NULL
     * (the default), for error messages */
    char *origin[PLAN_N_FIELDS];
} PlanSpec;

/* A plan holding the defaults (Megatron's where Megatron has one). */
PlanSpec *plan_spec_new(void);
void plan_spec_free(PlanSpec *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlanSpec, plan_spec_free)

/* A copy of `plan`, origins and layer split included. */
PlanSpec *plan_spec_copy(const PlanSpec *plan);

/* Applies the keys of a plan file over `plan`. */
gboolean plan_spec_load(PlanSpec *plan, const char *path, GError **error);

/* Applies one field from a string (a command-line flag named `flag`,
 * e.g. "--tp"); `value` NULL means a bare boolean flag (true). */
gboolean plan_spec_set(PlanSpec *plan, PlanField field, const char *value, const char *flag,
                       GError **error);

/* Resolves defaults that depend on the cluster and the model (dp,
 * global_batch_size, layers_per_stage) and checks the plan against them:
 * sizes, divisibility, GPU count, pipeline schedule. */
gboolean plan_spec_resolve(PlanSpec *plan, const ModelSpec *model, const ClusterSpec *cluster,
                           GError **error);

/* Micro-batches per step per pipeline: B / (b * dp). Resolved plans only. */
int plan_spec_micro_batches(const PlanSpec *plan);

/* The JSON/CSV name of a field ("tp", "micro_batch_size", ...), and all
 * of them, NULL-terminated. */
const char *plan_field_name(PlanField field);
const char *const *plan_field_names(void);

/* Whether a field's value is a word ("1f1b") rather than a number or a
 * boolean, so that JSON quotes it; whether it is a list of integers. */
gboolean plan_field_is_word(PlanField field);
gboolean plan_field_is_list(PlanField field);

/* The field's resolved value as text ("8", "1f1b", "true", "12,12"), for
 * reports. */
char *plan_field_text(const PlanSpec *plan, PlanField field);

/* A description of where a field came from, for errors: "FILE: $.tp",
 * "--tp", or the field's name ("tp") for a default. */
const char *plan_field_origin(const PlanSpec *plan, PlanField field);

/* ---- plan grids (sweeps) ---------------------------------------------- */

/* Values to try for one plan field, as flag strings ("8", "true", "1f1b"). */
typedef struct {
    PlanField field;
    GPtrArray *values; /* char *, owned */
} GridAxis;

/* The plans of a sweep: every combination of one value per axis. */
typedef struct {
    GArray *axes; /* GridAxis */
} PlanGrid;

PlanGrid *plan_grid_new(void);
void plan_grid_free(PlanGrid *grid);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlanGrid, plan_grid_free)

/* Sets the values of `field` (replacing any), from a NULL-terminated list. */
void plan_grid_set(PlanGrid *grid, PlanField field, const char *const *values);

/* Removes the axis of `field`, if any (the field then keeps the base
 * plan's value). */
void plan_grid_remove(PlanGrid *grid, PlanField field);

/* Overrides `grid`'s axes with a grid file's: a JSON object whose keys are
 * plan fields and values non-empty lists of values. */
gboolean plan_grid_load(PlanGrid *grid, const char *path, GError **error);

/* Combinations in the grid (the product of the axes' sizes), or -1 when
 * more than 2^31. */
gint64 plan_grid_size(const PlanGrid *grid);

#endif
