/* plan.h: how a model is split over a cluster, as a plain C struct (plan.c).
 *
 * A plan is made from plan_fields.def: its members, the PlanField enum and
 * the table of their declarations (plan_fields), from which come the
 * parser of plan files and flags, the defaults and the flags' text. It is
 * read from a plan file and flags and resolved against a model and a
 * cluster; nothing outside src/spec/ sees cJSON. Every error names the
 * file, the JSON path or the flag, the bad value and what was expected. */
#ifndef PLANSIM_SPEC_PLAN_H
#define PLANSIM_SPEC_PLAN_H

#include <glib.h>

#include "base/names.h"
#include "spec/cluster.h"
#include "spec/gpu.h"
#include "spec/model.h"

/* A list of integers (layers_per_stage; a pipeline layout's layers per
 * chunk); v NULL when empty. */
typedef struct {
    int *v;
    int n;
    int mtp; /* a layout's multi-token-prediction layers, the last of its
              * layers (v counts them with the transformer layers); 0 else */
} PlanList;

/* The plan's fields (plan_fields.def), in the order reports list them. */
typedef enum {
#define PLAN_FIELD(ID, ...) PLAN_##ID,
#include "spec/plan_fields.def"
#undef PLAN_FIELD
    PLAN_N_FIELDS
} PlanField;

typedef enum { FIELD_INT, FIELD_BOOL, FIELD_CHOICE, FIELD_SET, FIELD_LIST, FIELD_LAYOUT } PlanFieldKind;

/* A plan field's declaration: one row of plan_fields.def. */
typedef struct {
    const char *name; /* JSON key, CSV column, report name */
    PlanFieldKind kind;
    const char *flag;           /* long flag without "--" */
    int min, max;               /* INT, and each entry of a LIST */
    const char *const *choices; /* CHOICE: names indexed by value; SET: by bit */
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
        AXIS_EXPERT_TP,
        AXIS_EXPERT_ALL
    } axis;                  /* plan_fields.def says what each gives */
    const char *axis_values; /* AXIS_VALUES: comma-separated values */
    const char *help;
    gsize offset; /* of the member in PlanSpec */
} PlanFieldInfo;

/* Whether field `f` holds a PlanList (a LIST or a LAYOUT). */
gboolean plan_field_is_list(PlanField f);
/* Whether a comma in a flag's value for field `f` is the value's own (a
 * LIST's, a SET's), not a sweep's list of values. */
gboolean plan_field_takes_commas(PlanField f);

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
/* The same with `origin` kept by reference, not interned: a string that
 * outlives the plan and its copies, for callers with many origins of
 * their own (a runs file's "FILE:LINE, column X" cells: interned, every
 * one would stay for the process's life). */
gboolean plan_spec_set_kept(PlanSpec *plan, PlanField field, const char *text, const char *origin,
                            GError **error);

/* A scalar field's value (an INT, a BOOL's 0 or 1, a CHOICE's index), and
 * storing one that plan_field_parse returned, from `origin` (NULL: keep the
 * field's origin; else a string that outlives the plan, as
 * PlanSpec.origin's, kept by reference). */
int plan_field_get(const PlanSpec *plan, PlanField field);
void plan_field_put(PlanSpec *plan, PlanField field, int value, const char *origin);
/* The value a scalar field behaves as, which reports print: its own, but
 * an unset expert_tensor_parallel_size (0) is tp's, as Megatron-Core's
 * (None: the tensor-parallel size). */
int plan_field_value(const PlanSpec *plan, PlanField field);

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
 * unless the layers split over the pp x virtual_stages chunks by the
 * plan's rule (Megatron-Core's uneven first and last stages, its
 * embedding and loss counted as layers, or an even split with a layer a
 * chunk at least), or a layers_per_stage list is given. */
gboolean plan_spec_derive_dp(PlanSpec *plan, long long gpus, const ClusterSpec *cluster,
                             GError **error);
gboolean plan_spec_check_batch(const PlanSpec *plan, GError **error);
gboolean plan_spec_check_chunks(const PlanSpec *plan, const ModelSpec *model, GError **error);

/* Fails (PS_ERROR_INPUT) when the plan needs a key the cluster lacks:
 * dtype fp8 the GPU's peak_fp8_tflops; offload the GPU's pcie_GBps and
 * host_memory_GiB, offload optimizer also cpu_adam_params_per_s. The
 * message names the cluster file, the key and the plan field's origin
 * (plan_spec_resolve calls it). */
gboolean plan_spec_check_cluster(const PlanSpec *plan, const ClusterSpec *cluster, GError **error);

/* The GPU as a plan runs it: with cuda_graphs, without the per-kernel
 * launch cost (a graph replays its kernels without the host launching
 * each). Every cost of the plan's kernels reads it. */
GpuSpec plan_spec_run_gpu(const PlanSpec *plan, const GpuSpec *gpu);

/* Micro-batches per step per pipeline: B / (b * dp). Resolved plans only. */
int plan_spec_micro_batches(const PlanSpec *plan);

/* GPUs the plan runs on: tp x cp x pp x dp. Resolved plans only. */
long long plan_spec_gpus(const PlanSpec *plan);

/* The resolved plan as the flags that give it ("--tp 8 --pp 2 ...
 * --sequence-parallel"), for reports and commands to paste: the shape (tp,
 * pp, dp, micro_batch_size, global_batch_size), and every other field set
 * by a file, a flag or a grid (its origin) or away from its default; a
 * layer split no field says and Megatron-Core would not make by itself
 * (uneven chunks) as its --pipeline-model-parallel-layout. */
char *plan_spec_flags(const PlanSpec *plan);

/* Whether resolved `plan`'s layers are split as no flag of it says and
 * Megatron-Core would not split them by itself: its chunks differ
 * (Megatron-Core splits a model's layers evenly or not at all, without a
 * layout or its first and last stages' counts; the MTP layers it puts on
 * the last chunk by itself). Such a split is written out as its layout. */
gboolean plan_spec_split_unsaid(const PlanSpec *plan);

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

#endif
