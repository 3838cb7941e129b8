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

#include "base/names.h"

/* ---- model ------------------------------------------------------------ */

typedef enum { MLP_GELU, MLP_SWIGLU } MlpKind;

typedef struct {
    char *name;
    int layers;          /* transformer layers, l */
    int hidden_size;     /* h */
    int attention_heads; /* a */
    int kv_heads;        /* key/value heads (GQA); equals a for MHA */
    int head_dim;        /* a head's width; 0: hidden_size / attention_heads */
    gboolean qkv_bias;   /* a SwiGLU model's QKV projection has a bias (Qwen2's) */
    gboolean out_bias;   /* a SwiGLU model's attention output projection has a bias */
    gboolean mlp_bias;   /* a SwiGLU model's MLP projections have biases */
    int sliding_window;  /* each query attends to at most this many keys, itself and
                          * those before it (Mistral's); 0: the whole sequence */
    gboolean qk_norm;    /* an RMSNorm over each head of Q and of K (Qwen3's) */
    int ffn_hidden_size; /* f */
    int vocab_size;      /* V */
    int seq_length;      /* s, tokens per sequence */
    MlpKind mlp;
    gboolean tied_embeddings; /* input embedding shared with the output layer */
    /* A mixture of experts (docs/model.md, "Mixture of experts"): each MoE
     * layer's MLP is `experts` routed experts of moe_ffn_hidden_size, of
     * which every token goes to experts_per_token, plus shared_experts
     * that every token goes to. Layer i (0-based) is a MoE layer when
     * experts > 1, i >= first_dense_layers and i % moe_layer_frequency ==
     * 0; the other layers are dense, of ffn_hidden_size. */
    int experts;             /* E; 0 or 1: a dense model */
    int experts_per_token;   /* k, top-k routing, 1 .. E */
    int shared_experts;      /* >= 0 */
    int moe_ffn_hidden_size; /* f_e */
    int moe_layer_frequency; /* >= 1 */
    int first_dense_layers;  /* DeepSeek's first_k_dense_replace, >= 0 */
    /* Multi-head latent attention (DeepSeek-V2), for its parameters only:
     * kv_lora_rank 0 is standard attention. The operations stay those of
     * standard attention with the same heads (docs/model.md). */
    int kv_lora_rank, q_lora_rank; /* q_lora_rank 0: Q projected directly */
    int qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
} ModelSpec;

/* Reads a plansim model file or a Hugging Face config.json (recognised by
 * its "num_hidden_layers" key; Mixtral's and DeepSeek's expert keys and
 * DeepSeek-V2's latent attention are read). Returns NULL and sets `error`
 * on bad input. */
ModelSpec *model_spec_load(const char *path, GError **error);

/* As model_spec_load; *from_max_positions says whether the sequence length
 * is a Hugging Face config's max_position_embeddings, the longest context
 * the model takes rather than the length it trains on. */
ModelSpec *model_spec_load_noting(const char *path, gboolean *from_max_positions, GError **error);

/* Replaces the model's sequence length with `text` (a flag's value, a
 * positive integer; `origin` names the flag in the error), checking that
 * the sizes still multiply to less than 2^53. */
gboolean model_spec_set_seq_length(ModelSpec *model, const char *text, const char *origin,
                                   GError **error);
void model_spec_free(ModelSpec *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ModelSpec, model_spec_free)

/* ---- cluster ---------------------------------------------------------- */

/* NCCL's protocols (docs/model.md, "Protocols"): LL and LL128, whose
 * flags cost bandwidth and save latency, and Simple. */
typedef enum { PROTOCOL_LL, PROTOCOL_LL128, PROTOCOL_SIMPLE, PROTOCOLS } CollProtocol;

/* A link class. A spec built in code with only the first two members
 * ({bandwidth, latency}) is the ideal alpha-beta link: efficiency 0 counts
 * as 1, and the cluster's `protocols` (0) model Simple alone. */
typedef struct {
    double bandwidth_Bps;   /* per GPU, per direction */
    double latency_s;       /* per message (alpha), with the Simple protocol */
    double efficiency;      /* fraction of bandwidth_Bps that Simple reaches, (0, 1]; 0: 1 */
    double ll_latency_s;    /* per message with LL (when the cluster's protocols has it) */
    double ll128_latency_s; /* per message with LL128 (likewise) */
} LinkSpec;

#define CURVE_POINTS 16 /* most points of a GPU's curve */

/* A curve of a GPU's, y against x: linear in log(x) between its points,
 * flat beyond them (curve_at). */
typedef struct {
    int n;                  /* points; 0: none */
    double x[CURVE_POINTS]; /* increasing, > 0 */
    double y[CURVE_POINTS];
} Curve;

typedef struct {
    char *name;
    double peak_flops;         /* dense bf16, FLOP/s */
    double peak_fp8_flops;     /* dense fp8, FLOP/s; 0: the GPU has no FP8 */
    double pcie_Bps;           /* host link per GPU per direction, achievable; 0: not given */
    double memory_bytes;       /* HBM capacity */
    double reserve_bytes;      /* of it, held outside the model's tensors: CUDA context,
                                * NCCL's buffers, allocator fragmentation; >= 0 */
    double memory_Bps;         /* HBM bandwidth */
    double compute_efficiency; /* fraction of peak of non-GEMM arithmetic, and of
                                * every GEMM when there is no curve, (0, 1] */
    double memory_efficiency;  /* fraction of bandwidth a streaming kernel reaches */
    double launch_s;           /* fixed cost per kernel */
    double comm_interference;  /* compute slows by this fraction while the GPU
                                * runs communication kernels, [0, 0.95] */
    double gemm_sustained;     /* the share of the GEMM curve's efficiency that GEMMs run
                                * back to back in a training step keep (sustained clock at
                                * the power limit), (0, 1]; 0: 1 */
    double attention_forward_efficiency;  /* FlashAttention's forward and backward on the */
    double attention_backward_efficiency; /* work they do, fractions of the peak, (0, 1];
                                           * 0: transformer.h's defaults */
    int sm_count;                         /* streaming multiprocessors; 0: unknown, no waves */
    Curve gemm;                           /* a GEMM's fraction of peak, (0, 1], against its
                                           * arithmetic intensity (FLOP per byte) */
    Curve attention_head_dim;             /* the attention efficiencies' factor against the head
                                           * dimension (1 at the dimension they were measured at);
                                           * none: 1 */
} GpuSpec;

/* FlashAttention's efficiencies when a GPU gives none: FlashAttention-2's
 * on A100 (docs/model.md, "FlashAttention"; cost/transformer.c). */
#define GPU_ATTENTION_FORWARD_EFFICIENCY  0.60
#define GPU_ATTENTION_BACKWARD_EFFICIENCY 0.50

/* The GPU's attention efficiency (forward or backward) and GEMM sustained
 * share, their defaults for 0. */
double gpu_attention_efficiency(const GpuSpec *gpu, gboolean forward);
/* A curve's y at x, `none` for a curve without points. */
double curve_at(const Curve *c, double x, double none);
double gpu_gemm_sustained(const GpuSpec *gpu);

/* What interrupts a run and what a restart costs (the cluster's
 * "reliability", metrics/run.h). Any failure stops the whole job (a
 * synchronous step needs every GPU). A cluster file's absent keys take
 * the defaults of cluster.c (docs/inputs.md, "Reliability"); a cluster
 * built in code has none: no failures, free restarts. */
typedef enum { FAILURE_GPU, FAILURE_NODE, FAILURE_NIC, FAILURE_KINDS } FailureKind;
extern const char *const failure_kind_names[]; /* "gpu", "node", "nic" */

typedef struct {
    double per_node_hour[FAILURE_KINDS]; /* failures of each kind a node has an hour, >= 0 */
    double detect_s;                     /* from a failure to the job's stop */
    double restart_s; /* from the stop to the new job's first load: rescheduling, launch,
                       * process groups */
    double replace_s; /* besides, without hot spares: waiting for a healthy node */
    gboolean hot_spares;
    int warmup_steps; /* after each restart, steps whose time is lost to warm-up */
} ReliabilitySpec;

/* The parameters plansim calibrate fits (cluster_params.def), named
 * "object.key" by their place in a cluster file ("intra_node.efficiency",
 * "gpu.gemm_sustained"): cluster_param_names, by ClusterParam,
 * NULL-terminated. */
typedef enum {
#define CLUSTER_PARAM(ID, ...) CLUSTER_PARAM_##ID,
#include "spec/cluster_params.def"
#undef CLUSTER_PARAM
    CLUSTER_N_PARAMS
} ClusterParam;
extern const char *const cluster_param_names[];

/* How a calibrated profile came by a parameter, the lists of its
 * "calibration" (docs/inputs.md, "Calibration"). */
typedef enum {
    PARAM_UNLISTED, /* in no list */
    PARAM_FITTED,   /* freed by the fit and moved by it */
    PARAM_KEPT,     /* freed by the fit and left at the base's value: no measurement
                     * depends on it (or none where the fit had taken it) */
    PARAM_GIVEN,    /* not freed by the fit (another fit's, or not named by --fit):
                     * the base's value, as the base gave it */
    PARAM_STATES
} ParamState;

/* A profile's record of the fit that wrote it ("calibration"). The
 * simulation never reads it. */
typedef struct {
    char *by;                           /* what wrote it: "plansim calibrate" */
    char *base;                         /* the profile it was fitted from: its file,
                                         * or its name where it was built in code */
    ParamState state[CLUSTER_N_PARAMS]; /* by ClusterParam */
} ClusterCalibration;

void cluster_calibration_free(ClusterCalibration *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClusterCalibration, cluster_calibration_free)

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
    unsigned protocols;      /* 1 << PROTOCOL_LL, 1 << PROTOCOL_LL128: modelled besides
                              * Simple (both link classes give their latency); 0: Simple */
    double base_latency_s;   /* of every collective, before its first message */
    double tree_efficiency;  /* of the tree's transfers between nodes, besides the
                              * link's, (0, 1]; 0: 1 */
    gboolean nvls;           /* NVLink SHARP all-reduce inside a node (algorithm nvls) */
    double nvls_efficiency;  /* with it: fraction of intra.bandwidth_Bps each port moves */
    double nvls_latency_s;   /* with it: its latency, besides base_latency_s */
    /* The data loader's limits per node ("storage", data_loader.h); 0: unlimited. */
    double storage_Bps;          /* read bandwidth from storage, bytes/s; checkpoints
                                  * load at it too (metrics/checkpoint.h) */
    double preprocess_samples_s; /* CPU preprocessing, samples/s */
    /* Checkpoints' storage (metrics/checkpoint.h); 0: not given, its default there. */
    double storage_write_Bps;       /* a node's write bandwidth, bytes/s */
    double storage_total_read_Bps;  /* the file system's, all nodes together */
    double storage_total_write_Bps; /* (0 there too: unlimited) */
    ReliabilitySpec reliability;
    /* The host, per node, for offload (offload.h); 0: not given. */
    double host_memory_bytes;        /* CPU memory */
    double cpu_adam_params_s;        /* parameters the node's CPUs step with Adam per second */
    char *path;                      /* the file it was read from, for errors; NULL if built */
    ClusterCalibration *calibration; /* how calibrate fitted it; NULL: no record */
} ClusterSpec;

/* The most GPUs a cluster may hold. */
#define CLUSTER_MAX_GPUS (1 << 20)

/* Reads a cluster file; `nodes_override` > 0 replaces its "nodes". */
ClusterSpec *cluster_spec_load(const char *path, int nodes_override, GError **error);
void cluster_spec_free(ClusterSpec *cluster);

/* A copy of `c`, its strings and calibration record too. */
ClusterSpec *cluster_spec_copy(const ClusterSpec *c);

/* A cluster file (docs/inputs.md, "Cluster") that cluster_spec_load reads
 * back into the same values, to 10 significant digits, and then writes
 * again byte for byte; the calibration record, if any, last. */
char *cluster_spec_json(const ClusterSpec *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClusterSpec, cluster_spec_free)

/* GPUs in the cluster. */
int cluster_spec_gpus(const ClusterSpec *cluster);

/* Whether cluster `c` models parameter `p` (its row's `needs`): LL's and
 * LL128's latencies where the cluster models the protocol, NVLS's
 * parameters where it has NVLS, the GEMM curve where it has one. */
gboolean cluster_spec_has_param(const ClusterSpec *c, ClusterParam p);

/* ---- plan ------------------------------------------------------------- */

/* A list of integers (layers_per_stage); v NULL when empty. */
typedef struct {
    int *v;
    int n;
} PlanList;

/* The plan's fields (plan_fields.def), in the order reports list them. */
typedef enum {
#define PLAN_FIELD(ID, ...) PLAN_##ID,
#include "spec/plan_fields.def"
#undef PLAN_FIELD
    PLAN_N_FIELDS
} PlanField;

typedef enum { FIELD_INT, FIELD_BOOL, FIELD_CHOICE, FIELD_LIST } PlanFieldKind;

/* A plan field's declaration: one row of plan_fields.def. */
typedef struct {
    const char *name; /* JSON key, CSV column, report name */
    PlanFieldKind kind;
    const char *flag;           /* long flag without "--" */
    int min, max;               /* INT, and each entry of a LIST */
    const char *const *choices; /* CHOICE: names indexed by value */
    const char *alias;          /* INT: a word that means max, or NULL */
    int fallback;               /* the default */
    enum {
        AXIS_NONE,
        AXIS_VALUES,
        AXIS_ALL,
        AXIS_HEAD_DIVISORS,
        AXIS_UP_TO_LAYERS,
        AXIS_CP_SIZES,
        AXIS_CP_ALGORITHMS,
        AXIS_EXPERT_DIVISORS,
        AXIS_GPU_DTYPES
    } axis;                  /* plan_fields.def says what each gives */
    const char *axis_values; /* AXIS_VALUES: comma-separated values */
    const char *help;
    gsize offset; /* of the member in PlanSpec */
} PlanFieldInfo;

/* The table, indexed by PlanField. */
extern const PlanFieldInfo plan_fields[PLAN_N_FIELDS];

/* A plan: one member per row of plan_fields.def (tp, pp, dp,
 * micro_batch_size, schedule, zero_stage, ...; see the rows for their
 * meaning). dp and global_batch_size are 0 and layers_per_stage empty until
 * plan_spec_resolve. Layers of each of the pp x v model chunks are in model
 * order: chunk c of stage s is chunk c * pp + s. */
typedef struct {
#define PLAN_FIELD(ID, member, kind, ctype, ...) ctype member;
#include "spec/plan_fields.def"
#undef PLAN_FIELD
    /* where each field's value came from: "FILE: $.key", "--flag" or NULL
     * (the default), for error messages; strings that outlive every plan
     * (literals, g_intern_string's), shared by copies, never freed */
    const char *origin[PLAN_N_FIELDS];
} PlanSpec;

/* A plan holding the defaults (Megatron's where Megatron has one). */
PlanSpec *plan_spec_new(void);
void plan_spec_free(PlanSpec *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlanSpec, plan_spec_free)

/* A copy of `plan`, origins and layer split included. */
PlanSpec *plan_spec_copy(const PlanSpec *plan);

/* Applies the keys of a plan file over `plan`. */
gboolean plan_spec_load(PlanSpec *plan, const char *path, GError **error);

/* Parses `text` (a flag's value: "8", "1f1b", "true", "12,12") into field
 * `field`, which then comes from `origin` (e.g. "--tp"). */
gboolean plan_spec_set(PlanSpec *plan, PlanField field, const char *text, const char *origin,
                       GError **error);

/* A scalar field's value (an INT, a BOOL's 0 or 1, a CHOICE's index), and
 * storing one that plan_field_parse returned, from `origin` (NULL: keep the
 * field's origin; else a string that outlives the plan, as
 * PlanSpec.origin's, kept by reference). */
int plan_field_get(const PlanSpec *plan, PlanField field);
void plan_field_put(PlanSpec *plan, PlanField field, int value, const char *origin);

/* Parses the text of a scalar field's value into `value`, as plan_spec_set
 * would store it; `origin` names the value's source in the error. */
gboolean plan_field_parse(PlanField field, const char *text, const char *origin, int *value,
                          GError **error);

/* Resolves defaults that depend on the cluster and the model (dp,
 * global_batch_size, layers_per_stage) and checks the plan against them:
 * sizes, divisibility, GPU count. The strategies check the rest of their
 * own fields (strategy_check). */
gboolean plan_spec_resolve(PlanSpec *plan, const ModelSpec *model, const ClusterSpec *cluster,
                           GError **error);

/* The checks plan_spec_resolve makes, each alone, for whoever walks
 * plans field by field (app/space.c): derive_dp sets dp, if 0, to the
 * `gpus` over tp x cp x pp, failing unless they divide them or when a
 * replica needs more (`cluster` for the hint); check_batch fails unless
 * micro_batch_size x dp divides the global batch (when set); check_chunks
 * unless the pp x virtual_stages chunks have a layer each (or a
 * layers_per_stage list is given). */
gboolean plan_spec_derive_dp(PlanSpec *plan, long long gpus, const ClusterSpec *cluster,
                             GError **error);
gboolean plan_spec_check_batch(const PlanSpec *plan, GError **error);
gboolean plan_spec_check_chunks(const PlanSpec *plan, const ModelSpec *model, GError **error);

/* Fails (PS_ERROR_INPUT) when the plan needs a key the cluster lacks:
 * dtype fp8 the GPU's peak_fp8_tflops; offload the GPU's pcie_GBps and
 * host_memory_GiB, offload optimizer also cpu_adam_params_per_s. The
 * message names the cluster file, the key and the plan field's origin
 * (cluster.c; plan_spec_resolve calls it). */
gboolean cluster_spec_check_plan(const ClusterSpec *cluster, const PlanSpec *plan, GError **error);

/* The GPU as a plan runs it: with cuda_graphs, without the per-kernel
 * launch cost (a graph replays its kernels without the host launching
 * each). Every cost of the plan's kernels reads it. */
GpuSpec gpu_for_plan(const GpuSpec *gpu, const PlanSpec *plan);

/* Micro-batches per step per pipeline: B / (b * dp). Resolved plans only. */
int plan_spec_micro_batches(const PlanSpec *plan);

/* GPUs the plan runs on: tp x cp x pp x dp. Resolved plans only. */
long long plan_spec_gpus(const PlanSpec *plan);

/* The resolved plan as the flags that give it ("--tp 8 --pp 2 ...
 * --sequence-parallel"), for reports and commands to paste: the shape (tp,
 * pp, dp, micro_batch_size, global_batch_size), and every other field set
 * by a file, a flag or a grid (its origin) or away from its default. */
char *plan_spec_flags(const PlanSpec *plan);

/* The plan's field values as a key: equal keys, equal values (origins
 * aside). Text without a NUL, newly allocated. */
char *plan_spec_key(const PlanSpec *plan);

/* The flags that turn resolved plan `from` into `to` ("--tp 2
 * --sequence-parallel"): every field that differs but the layer split
 * (which resolves anew), and dp only where `from` set it (else it
 * resolves from the GPUs); "" when none does. */
char *plan_spec_change_flags(const PlanSpec *from, const PlanSpec *to);

/* The plan's shape, the one text of it: "tp 8 x pp 4", with cp when it
 * splits the sequence ("tp 8 x cp 2 x pp 4"), and with `with_dp` dp and
 * expert parallelism ("tp 8 x pp 4 x dp 16 (ep 8)"). Newly allocated. */
char *plan_spec_shape(const PlanSpec *plan, gboolean with_dp);

/* The field's JSON names, NULL-terminated. */
const char *const *plan_field_names(void);

/* The field's value as text ("8", "1f1b", "true", "12,12"), for reports. */
char *plan_field_text(const PlanSpec *plan, PlanField field);

/* A description of where a field came from, for errors: "FILE: $.tp",
 * "--tp", or the field's name ("tp") for a default. */
const char *plan_field_origin(const PlanSpec *plan, PlanField field);

/* Fails (PS_ERROR_INPUT) with "ORIGIN: expected EXPECTED, got VALUE" for a
 * field whose value breaks a rule; the error's reason (ps_error_reason) is
 * the message without its value. Returns FALSE. */
gboolean plan_field_fail(GError **error, const PlanSpec *plan, PlanField field, const char *fmt,
                         ...) G_GNUC_PRINTF(4, 5);

/* ---- plan grids (sweeps) ---------------------------------------------- */

/* Values to try for one scalar plan field (as plan_field_get gives them). */
typedef struct {
    PlanField field;
    GArray *values; /* int */
} GridAxis;

/* The plans of a sweep: every combination of one value per axis. */
typedef struct {
    GArray *axes; /* GridAxis */
} PlanGrid;

PlanGrid *plan_grid_new(void);
void plan_grid_free(PlanGrid *grid);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlanGrid, plan_grid_free)

/* The fewest tokens of a sequence the default space leaves each GPU of a
 * context-parallel group: Llama 3 trained 131,072-token sequences over
 * cp 16, 8,192 tokens each (Dubey et al. 2024, section 3.3.2). */
#define CP_MIN_TOKENS 8192

/* The default space of a sweep: the fields' axes of plan_fields.def, for
 * this model on this cluster (many combinations are invalid: the sweep
 * enumerates the valid ones directly, app/space.h). */
PlanGrid *plan_grid_default(const ModelSpec *model, const ClusterSpec *cluster);

/* Removes the axis of `field`, if any (the field then keeps the base
 * plan's value). */
void plan_grid_remove(PlanGrid *grid, PlanField field);

/* Overrides `grid`'s axes with a grid file's: a JSON object whose keys are
 * plan fields and values non-empty lists of values. */
gboolean plan_grid_load(PlanGrid *grid, const char *path, GError **error);

/* The most combinations a grid may have, so that their numbers (times a
 * sweep's cluster sizes) fit. */
#define GRID_MAX_COMBINATIONS (G_GINT64_CONSTANT(1) << 62)

/* Combinations in the grid (the product of the axes' sizes), or -1 when
 * more than GRID_MAX_COMBINATIONS. */
gint64 plan_grid_size(const PlanGrid *grid);

/* Sets `plan`'s grid fields to combination `combo` (the last axis varies
 * fastest; any multiple of the grid's size added to combo is ignored). */
void plan_grid_apply(const PlanGrid *grid, gint64 combo, PlanSpec *plan);

/* The index, in axis `axis`'s values, of combination `combo`'s value; and
 * the combination that differs from `combo` in that axis only, its value
 * index `index` (as plan_grid_apply numbers them). */
guint plan_grid_index(const PlanGrid *grid, gint64 combo, guint axis);
gint64 plan_grid_with(const PlanGrid *grid, gint64 combo, guint axis, guint index);

#endif
