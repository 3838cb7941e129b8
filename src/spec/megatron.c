/* megatron.c: Megatron-LM arguments in and out (megatron.h).
 *
 * `megatron_args` is the one table of the Megatron-LM arguments plansim
 * reads: which plan field (plan_fields.def says what each is) or model
 * key each sets, how its words map to plansim's, and its key in
 * Megatron-Bridge's ConfigContainer. Arguments that map one to one are
 * read and written from their row alone; those that several plan fields
 * or several arguments make up (the precision, the recomputation, ZeRO,
 * virtual stages) by the own_* and write_* functions below. Arguments the
 * table refuses change the model or the plan beyond what plansim
 * expresses; any other argument is data, logging, checkpointing or an
 * optimizer hyper-parameter, which a step's time and memory do not see,
 * and is only listed in a warning.
 *
 * Sources: Megatron-LM's megatron/training/arguments.py and
 * TransformerConfig; Megatron-Bridge's docs/megatron-lm-to-megatron-
 * bridge.md (its key for each argument) and training/mixed_precision.py
 * (its precision presets). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "spec/megatron.h"
#include "spec/pipeline_layout.h"
#include "base/error.h"
#include "base/text.h"

/* How a row reads its argument. */
typedef enum {
    RULE_FIELD,        /* the value, through `words` if given, is `field`'s */
    RULE_SWITCH,       /* no value: `field` takes the value `words` */
    RULE_OWN,          /* read and written by the own_* / write_* code */
    RULE_MODEL,        /* an integer: the model's `key` */
    RULE_MODEL_NUMBER, /* a number: the model's `key` */
    RULE_MODEL_SWITCH, /* no value: read by model_json */
    RULE_REFUSED,      /* plansim cannot honour it: `words` says why */
} Rule;

#define NO_FIELD PLAN_N_FIELDS

/* The state of a plan being written (megatron_plan_text). */
typedef struct {
    GString *out;
    MegatronStyle style;
    gboolean said[PLAN_N_FIELDS]; /* the fields written so far */
    const PlanSpec *plan;
    const ModelSpec *model;
} Writer;

/* The writers of the OWN rows' fields, each at its first row. */
static void write_pipeline(Writer *w);
static void write_moe_capacity(Writer *w);
static void write_seq_length(Writer *w);
static void write_zero(Writer *w);
static void write_recompute(Writer *w);
static void write_cross_entropy(Writer *w);
static void write_precision(Writer *w);

typedef struct {
    const char *flag; /* Megatron-LM's, without "--" */
    Rule rule;
    int values;               /* 0: a switch; 1: one value; -1: one or more */
    PlanField field;          /* the plan field it sets, NO_FIELD for none */
    const char *words;        /* FIELD: "megatron=plansim,..."; SWITCH: the value; REFUSED: why */
    const char *bridge;       /* Megatron-Bridge's key; a leading '!' negates a switch */
    gboolean always;          /* Megatron-LM's output gives it even at its default */
    gboolean moe;             /* Bridge's output gives it for a mixture of experts only */
    const char *key;          /* MODEL*: the plansim model key */
    gsize member;             /* MODEL: the ModelSpec member, checked against --model */
    void (*write)(Writer *w); /* OWN: writes the fields it and the rows after it read */
} MegatronArg;

/* A row: its rule (RULE_ after), flag, values and field, then any other
 * member, designated. */
#define ROW(rule_, flag_, values_, field_, ...)                                                    \
    {                                                                                              \
        .flag = flag_, .rule = RULE_##rule_, .values = values_, .field = field_, __VA_ARGS__       \
    }
#define MODEL_INT(flag_, key_, member_)                                                            \
    ROW(MODEL, flag_, 1, NO_FIELD, .key = key_, .member = offsetof(ModelSpec, member_))
#define REFUSED(flag_, values_, why) ROW(REFUSED, flag_, values_, NO_FIELD, .words = why)

static const MegatronArg megatron_args[] = {
    /* the shape of the parallelism */
    ROW(FIELD, "tensor-model-parallel-size", 1, PLAN_TP,
        .bridge = "model.tensor_model_parallel_size", .always = TRUE),
    ROW(FIELD, "pipeline-model-parallel-size", 1, PLAN_PP,
        .bridge = "model.pipeline_model_parallel_size", .always = TRUE),
    ROW(OWN, "num-layers-per-virtual-pipeline-stage", 1, PLAN_VIRTUAL_STAGES,
        .write = write_pipeline),
    ROW(OWN, "num-virtual-stages-per-pipeline-rank", 1, PLAN_VIRTUAL_STAGES),
    ROW(OWN, "virtual-pipeline-model-parallel-size", 1, PLAN_VIRTUAL_STAGES), /* NeMo's name */
    ROW(FIELD, "pipeline-model-parallel-layout", 1, PLAN_LAYOUT,
        .bridge = "model.pipeline_model_parallel_layout"),
    ROW(FIELD, "decoder-first-pipeline-num-layers", 1, PLAN_FIRST_STAGE_LAYERS,
        .bridge = "model.num_layers_in_first_pipeline_stage"),
    ROW(FIELD, "decoder-last-pipeline-num-layers", 1, PLAN_LAST_STAGE_LAYERS,
        .bridge = "model.num_layers_in_last_pipeline_stage"),
    ROW(SWITCH, "account-for-embedding-in-pipeline-split", 0, PLAN_EMBEDDING_AS_LAYER,
        .words = "true", .bridge = "model.account_for_embedding_in_pipeline_split"),
    ROW(SWITCH, "account-for-loss-in-pipeline-split", 0, PLAN_LOSS_AS_LAYER, .words = "true",
        .bridge = "model.account_for_loss_in_pipeline_split"),
    ROW(SWITCH, "use-tp-pp-dp-mapping", 0, PLAN_RANK_ORDER, .words = "tp-pp-dp",
        .bridge = "dist.use_tp_pp_dp_mapping"),
    ROW(FIELD, "context-parallel-size", 1, PLAN_CP, .bridge = "model.context_parallel_size"),
    /* one type a layer: plansim's one algorithm for them all */
    ROW(FIELD, "cp-comm-type", -1, PLAN_CP_ALGORITHM, .words = "p2p=ring,a2a=all_to_all",
        .bridge = "model.cp_comm_type"),
    ROW(FIELD, "expert-model-parallel-size", 1, PLAN_EP,
        .bridge = "model.expert_model_parallel_size", .moe = TRUE),
    ROW(FIELD, "expert-tensor-parallel-size", 1, PLAN_ETP,
        .bridge = "model.expert_tensor_parallel_size", .moe = TRUE),
    ROW(OWN, "moe-expert-capacity-factor", 1, PLAN_MOE_CAPACITY_PERCENT,
        .write = write_moe_capacity),
    ROW(FIELD, "moe-token-dispatcher-type", 1, PLAN_MOE_DISPATCHER,
        .words = "alltoall=all_to_all,allgather=all_gather,flex=flex",
        .bridge = "model.moe_token_dispatcher_type", .moe = TRUE),
    ROW(SWITCH, "moe-shared-expert-overlap", 0, PLAN_MOE_SHARED_EXPERT_OVERLAP, .words = "true",
        .bridge = "model.moe_shared_expert_overlap", .moe = TRUE),
    ROW(SWITCH, "overlap-moe-expert-parallel-comm", 0, PLAN_MOE_A2A_OVERLAP, .words = "true",
        .bridge = "comm_overlap.overlap_moe_expert_parallel_comm", .moe = TRUE),
    /* the batch */
    ROW(FIELD, "micro-batch-size", 1, PLAN_MICRO_BATCH_SIZE, .bridge = "train.micro_batch_size",
        .always = TRUE),
    ROW(FIELD, "global-batch-size", 1, PLAN_GLOBAL_BATCH_SIZE, .bridge = "train.global_batch_size",
        .always = TRUE),
    ROW(OWN, "seq-length", 1, NO_FIELD, .write = write_seq_length),
    ROW(FIELD, "mtp-num-layers", 1, PLAN_MTP_NUM_LAYERS, .bridge = "model.mtp_num_layers"),
    /* model states: ZeRO 1 is the distributed optimizer, 2 and 3
     * Megatron-FSDP's optim_grads and optim_grads_params */
    ROW(OWN, "use-distributed-optimizer", 0, PLAN_ZERO_STAGE, .write = write_zero),
    ROW(OWN, "use-megatron-fsdp", 0, PLAN_ZERO_STAGE),
    ROW(OWN, "use-torch-fsdp2", 0, PLAN_ZERO_STAGE),
    ROW(OWN, "data-parallel-sharding-strategy", 1, PLAN_ZERO_STAGE),
    ROW(SWITCH, "overlap-param-gather", 0, PLAN_OVERLAP_PARAM_GATHER, .words = "true",
        .bridge = "ddp.overlap_param_gather"),
    ROW(SWITCH, "fp8-param-gather", 0, PLAN_FP8_PARAM_GATHER,
        .words = "true"), /* Bridge: write_precision */
    ROW(SWITCH, "reuse-grad-buf-for-mxfp8-param-ag", 0, PLAN_REUSE_GRAD_BUF,
        .words = "true"), /* Bridge: write_precision */
    ROW(SWITCH, "grad-reduce-in-bf16", 0, PLAN_GRAD_ACCUM_DTYPE, .words = "bf16",
        .bridge = "!ddp.grad_reduce_in_fp32"),
    ROW(SWITCH, "optimizer-cpu-offload", 0, PLAN_OFFLOAD, .words = "optimizer",
        .bridge = "optimizer.optimizer_cpu_offload"),
    /* activations */
    ROW(SWITCH, "sequence-parallel", 0, PLAN_SEQUENCE_PARALLEL, .words = "true",
        .bridge = "model.sequence_parallel"),
    ROW(SWITCH, "tp-comm-overlap", 0, PLAN_TP_COMM_OVERLAP, .words = "true",
        .bridge = "comm_overlap.tp_comm_overlap"),
    ROW(OWN, "recompute-granularity", 1, PLAN_RECOMPUTE, .write = write_recompute),
    ROW(OWN, "recompute-method", 1, PLAN_RECOMPUTE),
    ROW(OWN, "recompute-num-layers", 1, PLAN_RECOMPUTE_NUM_LAYERS),
    ROW(OWN, "recompute-activations", 0, PLAN_RECOMPUTE),
    ROW(OWN, "recompute-modules", -1, PLAN_RECOMPUTE_MODULES),
    ROW(FIELD, "attention-backend", 1, PLAN_ATTENTION,
        .words = "flash=flash,fused=flash,auto=flash,unfused=standard,local=standard",
        .bridge = "model.attention_backend"),
    ROW(SWITCH, "use-flash-attn", 0, PLAN_ATTENTION, .words = "flash"),
    ROW(OWN, "cross-entropy-loss-fusion", 0, PLAN_CE_FUSION, .write = write_cross_entropy),
    ROW(OWN, "cross-entropy-fusion-impl", 1, PLAN_CE_FUSION),
    ROW(SWITCH, "memory-efficient-layer-norm", 0, PLAN_MEMORY_EFFICIENT_NORM, .words = "true",
        .bridge = "model.memory_efficient_layer_norm"),
    /* gradients */
    ROW(SWITCH, "overlap-grad-reduce", 0, PLAN_OVERLAP_GRAD_REDUCE, .words = "true",
        .bridge = "ddp.overlap_grad_reduce"),
    ROW(FIELD, "ddp-bucket-size", 1, PLAN_DDP_BUCKET_SIZE, .bridge = "ddp.bucket_size"),
    /* numbers */
    ROW(FIELD, "cuda-graph-impl", 1, PLAN_CUDA_GRAPHS,
        .words = "none=false,local=true,transformer_engine=true",
        .bridge = "model.cuda_graph_impl"),
    ROW(SWITCH, "enable-cuda-graph", 0, PLAN_CUDA_GRAPHS, .words = "true"),
    ROW(OWN, "bf16", 0, PLAN_DTYPE, .write = write_precision),
    ROW(OWN, "fp8-format", 1, PLAN_DTYPE),
    ROW(OWN, "fp8-recipe", 1, PLAN_FP8_RECIPE),
    ROW(OWN, "fp4-format", 1, PLAN_DTYPE),
    ROW(OWN, "fp4-recipe", 1, PLAN_DTYPE),
    /* the model's shape */
    MODEL_INT("num-layers", "layers", layers),
    MODEL_INT("hidden-size", "hidden_size", hidden_size),
    MODEL_INT("ffn-hidden-size", "ffn_hidden_size", ffn_hidden_size),
    MODEL_INT("num-attention-heads", "attention_heads", attention_heads),
    MODEL_INT("num-query-groups", "kv_heads", kv_heads), /* with --group-query-attention */
    MODEL_INT("kv-channels", "head_dim", head_dim),
    MODEL_INT("vocab-size", "vocab_size", vocab_size),
    MODEL_INT("padded-vocab-size", "vocab_size", vocab_size),
    MODEL_INT("num-experts", "experts", experts),
    MODEL_INT("moe-router-topk", "experts_per_token", experts_per_token),
    MODEL_INT("moe-ffn-hidden-size", "moe_ffn_hidden_size", moe_ffn_hidden_size),
    MODEL_INT("moe-layer-freq", "moe_layer_frequency", moe_layer_frequency),
    ROW(MODEL, "moe-shared-expert-intermediate-size", 1, NO_FIELD), /* shared experts' FFN */
    ROW(MODEL, "max-position-embeddings", 1, NO_FIELD), /* the sequence, without --seq-length */
    ROW(MODEL_NUMBER, "hidden-dropout", 1, NO_FIELD, .key = "hidden_dropout"),
    ROW(MODEL_NUMBER, "attention-dropout", 1, NO_FIELD, .key = "attention_dropout"),
    ROW(MODEL_SWITCH, "group-query-attention", 0, NO_FIELD),
    ROW(MODEL_SWITCH, "swiglu", 0, NO_FIELD),
    ROW(MODEL_SWITCH, "untie-embeddings-and-output-weights", 0, NO_FIELD),
    ROW(MODEL_SWITCH, "disable-bias-linear", 0, NO_FIELD),
    ROW(MODEL_SWITCH, "add-qkv-bias", 0, NO_FIELD),
    ROW(MODEL_SWITCH, "qk-layernorm", 0, NO_FIELD),
    /* what plansim cannot honour */
    REFUSED("fp16", 0, "bf16 or narrower formats (plansim models no fp16 loss scaling)"),
    REFUSED("rampup-batch-size", -1, "one batch size for the run (plansim replays one step)"),
    REFUSED("hybrid-override-pattern", 1, "a transformer (plansim models no Mamba layers)"),
    REFUSED("hybrid-layer-pattern", 1, "a transformer (plansim models no Mamba layers)"),
    REFUSED("multi-latent-attention", 0,
            "standard attention (latent attention: give --model a DeepSeek config)"),
    REFUSED("window-size", 1, "full attention (a sliding window: give --model a config with it)"),
    REFUSED("first-last-layers-bf16", 0, "every layer in the plan's dtype"),
    REFUSED("num-layers-at-start-in-bf16", 1, "every layer in the plan's dtype"),
    REFUSED("num-layers-at-end-in-bf16", 1, "every layer in the plan's dtype"),
    REFUSED("use-precision-aware-optimizer", 0,
            "fp32 optimizer states (plansim's --optimizer-states sets others)"),
    REFUSED("encoder-num-layers", 1, "a decoder-only model"),
    REFUSED("num-distributed-optimizer-instances", 1, "one distributed optimizer instance"),
};

#define N_ARGS G_N_ELEMENTS(megatron_args)

struct MegatronLine {
    char *where;          /* "--megatron-args" or "FILE" */
    char **given[N_ARGS]; /* each row's values as given (the last time), NULL if not */
    char *unmodelled;     /* "--lr, --save" or NULL */
};

/* ---- reading the line ---- */

static int find_arg(const char *flag)
{
    for (gsize i = 0; i < N_ARGS; i++)
        if (strcmp(megatron_args[i].flag, flag) == 0)
            return (int)i;
    return -1;
}

static char **given(const MegatronLine *line, const char *flag)
{
    int i = find_arg(flag);
    g_assert(i >= 0);
    return line->given[i];
}

static const char *value_of(const MegatronLine *line, const char *flag)
{
    char **v = given(line, flag);
    return v ? v[0] : NULL;
}

/* "WHERE: --flag", interned: the origin of what the flag sets. */
static const char *origin(const MegatronLine *line, const char *flag)
{
    g_autofree char *text = g_strdup_printf("%s: --%s", line->where, flag);
    return g_intern_string(text);
}

/* Fails on `flag`'s value `got`, which should be `expected`. */
static gboolean bad_value(const MegatronLine *line, const char *flag, const char *got,
                          const char *expected, GError **error)
{
    g_autofree char *quoted = ps_error_quote(got);
    ps_error_value(error, origin(line, flag), quoted, "%s%s", expected,
                   got[0] == '$' ? " (shell variables are not expanded)" : "");
    return FALSE;
}

/* Where the arguments start: after the script (the last word ending in
 * ".py"), else at the first flag; what comes before (environment
 * assignments, python, torchrun and its options) is the launcher's. */
static int first_argument(char **words)
{
    int start = -1;
    for (int i = 0; words[i]; i++)
        if (g_str_has_suffix(words[i], ".py"))
            start = i + 1;
    for (int i = 0; start < 0 && words[i]; i++)
        if (g_str_has_prefix(words[i], "--"))
            start = i;
    return start < 0 ? (int)g_strv_length(words) : start;
}

/* Reads the flag at words[*i] (its values after it, or after '='). */
static gboolean read_flag(MegatronLine *line, char **words, int *i, GString *unmodelled,
                          GError **error)
{
    const char *word = words[(*i)++];
    g_autofree char *flag = g_strndup(word + 2, strcspn(word + 2, "="));
    const char *inline_value = strchr(word, '=');
    g_strdelimit(flag, "_", '-'); /* NeMo's and ms-swift's spelling */
    GPtrArray *values = g_ptr_array_new();
    if (inline_value)
        g_ptr_array_add(values, g_strdup(inline_value + 1));
    for (; words[*i] && !g_str_has_prefix(words[*i], "--"); (*i)++)
        g_ptr_array_add(values, g_strdup(words[*i]));
    g_ptr_array_add(values, NULL);
    g_auto(GStrv) v = (char **)g_ptr_array_free(values, FALSE);
    int n = (int)g_strv_length(v), row = find_arg(flag);
    if (row < 0) {
        g_string_append_printf(unmodelled, "%s--%s", unmodelled->len ? ", " : "", flag);
        return TRUE;
    }
    const MegatronArg *a = &megatron_args[row];
    if (a->rule == RULE_REFUSED) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: --%s: plansim cannot honour it: it models %s; remove it to simulate "
                    "without it",
                    line->where, flag, a->words);
        return FALSE;
    }
    /* a stray word after the values (a switch has none): a shell
     * variable holding flags is only listed, anything else is refused, as
     * Megatron-LM's parser does */
    int keep = a->values < 0 ? n : MIN(n, a->values);
    for (int extra = keep; extra < n; extra++)
        if (v[extra][0] != '$' || (inline_value && extra == 0))
            return bad_value(line, flag, v[extra],
                             a->values == 0 ? "no value (a switch)" : "one value", error);
    for (int extra = keep; extra < n; extra++) {
        g_string_append_printf(unmodelled, "%s%s (not expanded)", unmodelled->len ? ", " : "",
                               v[extra]);
        g_free(v[extra]);
        v[extra] = NULL;
    }
    n = keep;
    for (int k = 0; k < n; k++)
        if (v[k][0] == '$')
            return bad_value(line, flag, v[k], "a value", error);
    if (a->values != 0 && n == 0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: --%s: expected a value, got none",
                    line->where, flag);
        return FALSE;
    }
    g_strfreev(line->given[row]);
    line->given[row] = g_steal_pointer(&v);
    return TRUE;
}

MegatronLine *megatron_line_read(const char *arg, GError **error)
{
    g_autoptr(MegatronLine) line = g_new0(MegatronLine, 1);
    g_autofree char *text = NULL;
    gsize len;
    if (arg[0] == '@') {
        line->where = g_strdup(arg + 1);
        if (!text_read_input(arg + 1, &text, &len, error)) {
            g_prefix_error(error, "--megatron-args: ");
            return NULL;
        }
    } else {
        line->where = g_strdup("--megatron-args");
        text = g_strdup(arg);
    }
    g_auto(GStrv) words = NULL;
    GError *shell = NULL;
    if (!g_shell_parse_argv(text, NULL, &words, &shell)) {
        gboolean empty = g_error_matches(shell, G_SHELL_ERROR, G_SHELL_ERROR_EMPTY_STRING);
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected %s, got %s%s", line->where,
                    empty ? "Megatron-LM arguments" : "a command line a shell splits",
                    empty ? "none" : "text it cannot: ", empty ? "" : shell->message);
        g_error_free(shell);
        return NULL;
    }
    g_autoptr(GString) unmodelled = g_string_new(NULL);
    for (int i = first_argument(words); words[i];) {
        if (g_str_has_prefix(words[i], "--")) {
            if (!read_flag(line, words, &i, unmodelled, error))
                return NULL;
        } else if (words[i][0] == '$') {
            g_string_append_printf(unmodelled, "%s%s (not expanded)", unmodelled->len ? ", " : "",
                                   words[i++]);
        } else {
            g_autofree char *got = ps_error_quote(words[i]);
            ps_error_value(error, line->where, got, "a --flag");
            return NULL;
        }
    }
    line->unmodelled = unmodelled->len ? g_strdup(unmodelled->str) : NULL;
    return g_steal_pointer(&line);
}

void megatron_line_free(MegatronLine *line)
{
    if (!line)
        return;
    for (gsize i = 0; i < N_ARGS; i++)
        g_strfreev(line->given[i]);
    g_free(line->where);
    g_free(line->unmodelled);
    g_free(line);
}

const char *megatron_line_unmodelled(const MegatronLine *line)
{
    return line->unmodelled;
}

const char *megatron_line_seq_length(const MegatronLine *line)
{
    const char *seq = value_of(line, "seq-length");
    return seq ? seq : value_of(line, "max-position-embeddings");
}

gboolean megatron_line_has_model(const MegatronLine *line)
{
    for (gsize i = 0; i < N_ARGS; i++)
        if (line->given[i] && megatron_args[i].rule >= RULE_MODEL &&
            megatron_args[i].rule <= RULE_MODEL_SWITCH &&
            strcmp(megatron_args[i].flag, "max-position-embeddings") != 0)
            return TRUE;
    return FALSE;
}

/* ---- the model ---- */

/* A positive integer flag's value into *out (`fallback` when absent). */
static gboolean model_int(const MegatronLine *line, const char *flag, int fallback, int *out,
                          GError **error)
{
    const char *text = value_of(line, flag);
    double v = fallback;
    if (text && (!text_parse_count(text, TEXT_BINARY, TRUE, &v) || v < 1 || v > G_MAXINT))
        return bad_value(line, flag, text, "a positive integer", error);
    *out = (int)v;
    return TRUE;
}

static gboolean given_switch(const MegatronLine *line, const char *flag)
{
    return given(line, flag) != NULL;
}

/* Sets the model's `key` to `v`, once (--vocab-size and
 * --padded-vocab-size give the same key). */
static void put_number(cJSON *root, const char *key, double v)
{
    cJSON_DeleteItemFromObject(root, key);
    cJSON_AddNumberToObject(root, key, v);
}

static ModelSpec *model_json(const MegatronLine *line, const char *name, cJSON *root,
                             GError **error);

ModelSpec *megatron_line_model(const MegatronLine *line, const char *name, GError **error)
{
    static const char *const needed[] = {"num-layers", "hidden-size", "num-attention-heads"};
    for (gsize i = 0; i < G_N_ELEMENTS(needed); i++)
        if (!value_of(line, needed[i])) {
            g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                        "%s: expected --%s with the model's other shape flags (or --model), got "
                        "none",
                        line->where, needed[i]);
            return NULL;
        }
    if (!value_of(line, "vocab-size") && !value_of(line, "padded-vocab-size")) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected --vocab-size (plansim reads no tokenizer) with the model's "
                    "shape flags, or --model, got none",
                    line->where);
        return NULL;
    }
    if (!megatron_line_seq_length(line)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected --seq-length with the model's shape flags, got none",
                    line->where);
        return NULL;
    }
    cJSON *root = cJSON_CreateObject();
    ModelSpec *model = model_json(line, name, root, error);
    cJSON_Delete(root);
    return model;
}

/* The model of the line's shape flags, built in `root`, a plansim model
 * file's object. */
static ModelSpec *model_json(const MegatronLine *line, const char *name, cJSON *root,
                             GError **error)
{
    cJSON_AddStringToObject(root, "name", name);
    int v, hidden = 0, ffn = 0, moe_ffn = 0;
    for (gsize i = 0; i < N_ARGS; i++) {
        const MegatronArg *a = &megatron_args[i];
        if (!line->given[i] || !a->key)
            continue;
        if (a->rule == RULE_MODEL) {
            if (!model_int(line, a->flag, 1, &v, error))
                return NULL;
            if (strcmp(a->key, "kv_heads") != 0 || given_switch(line, "group-query-attention"))
                put_number(root, a->key, v);
        } else if (a->rule == RULE_MODEL_NUMBER) {
            char *end;
            double p = g_ascii_strtod(line->given[i][0], &end);
            if (*end || !(p >= 0 && p < 1)) {
                bad_value(line, a->flag, line->given[i][0], "a probability from 0 to under 1",
                          error);
                return NULL;
            }
            put_number(root, a->key, p);
        }
    }
    /* Megatron-LM's defaults where plansim's differ: one query group with
     * --group-query-attention alone, SwiGLU's FFN 8h/3 down to a multiple
     * of 64, tied embeddings, biases on every linear layer */
    if (given_switch(line, "group-query-attention") && !value_of(line, "num-query-groups"))
        put_number(root, "kv_heads", 1);
    gboolean swiglu = given_switch(line, "swiglu");
    if (!model_int(line, "hidden-size", 1, &hidden, error))
        return NULL;
    /* the FFN default, at most an int (a model file's reader clamps it alike) */
    double ffn_default = swiglu ? floor(8.0 * hidden / 3 / 64) * 64 : 4.0 * hidden;
    if (!model_int(line, "ffn-hidden-size", (int)MIN(ffn_default, G_MAXINT), &ffn, error) ||
        !model_int(line, "moe-ffn-hidden-size", ffn, &moe_ffn, error))
        return NULL;
    if (!value_of(line, "ffn-hidden-size"))
        put_number(root, "ffn_hidden_size", ffn);
    if (value_of(line, "moe-shared-expert-intermediate-size")) {
        if (!model_int(line, "moe-shared-expert-intermediate-size", 1, &v, error))
            return NULL;
        if (v % moe_ffn != 0) {
            g_autofree char *expected = g_strdup_printf(
                "a multiple of the experts' FFN, %d (plansim counts whole shared experts)",
                moe_ffn);
            bad_value(line, "moe-shared-expert-intermediate-size",
                      value_of(line, "moe-shared-expert-intermediate-size"), expected, error);
            return NULL;
        }
        put_number(root, "shared_experts", v / moe_ffn);
    }
    if (!model_int(line, value_of(line, "seq-length") ? "seq-length" : "max-position-embeddings", 1,
                   &v, error))
        return NULL;
    put_number(root, "seq_length", v);
    cJSON_AddStringToObject(root, "mlp", swiglu ? "swiglu" : "gelu");
    cJSON_AddBoolToObject(root, "tied_embeddings",
                          !given_switch(line, "untie-embeddings-and-output-weights"));
    gboolean biases = swiglu && !given_switch(line, "disable-bias-linear");
    cJSON_AddBoolToObject(root, "qkv_bias", biases || given_switch(line, "add-qkv-bias"));
    cJSON_AddBoolToObject(root, "out_bias", biases);
    cJSON_AddBoolToObject(root, "mlp_bias", biases);
    cJSON_AddBoolToObject(root, "qk_norm", given_switch(line, "qk-layernorm"));
    /* a dense model takes no expert keys */
    if (!cJSON_HasObjectItem(root, "experts") ||
        cJSON_GetObjectItem(root, "experts")->valuedouble <= 1) {
        static const char *const moe_keys[] = {"experts_per_token", "moe_ffn_hidden_size",
                                               "moe_layer_frequency", "shared_experts"};
        for (gsize i = 0; i < G_N_ELEMENTS(moe_keys); i++)
            cJSON_DeleteItemFromObject(root, moe_keys[i]);
    }
    g_autofree char *json = cJSON_PrintUnformatted(root);
    g_autofree char *where = g_strdup_printf("%s (its model)", line->where);
    return model_spec_parse(where, json, error);
}

gboolean megatron_line_check_model(const MegatronLine *line, const ModelSpec *model,
                                   const char *model_flag, GError **error)
{
    for (gsize i = 0; i < N_ARGS; i++) {
        const MegatronArg *a = &megatron_args[i];
        if (!line->given[i] || a->rule != RULE_MODEL || !a->member)
            continue;
        if (strcmp(a->key, "kv_heads") == 0 && !given_switch(line, "group-query-attention"))
            continue;
        int v = 0, has = G_STRUCT_MEMBER(int, model, a->member);
        if (!model_int(line, a->flag, 1, &v, error))
            return FALSE;
        if (strcmp(a->key, "head_dim") == 0 && has == 0)
            has = model->hidden_size / model->attention_heads;
        if (strcmp(a->key, "experts") == 0 && v <= 1 && has <= 1)
            continue;
        if (v != has) {
            g_autofree char *expected =
                g_strdup_printf("%s's %s, %d (or no %s to take the line's model)", model_flag,
                                a->key, has, model_flag);
            return bad_value(line, a->flag, line->given[i][0], expected, error);
        }
    }
    return TRUE;
}

/* ---- the plan ---- */

/* `word` through a row's "from=to,..." map (`reverse`: to to from); NULL
 * when it has no entry. Newly allocated. */
static char *map_word(const char *words, const char *word, gboolean reverse)
{
    g_auto(GStrv) pairs = g_strsplit(words, ",", -1);
    for (char **p = pairs; *p; p++) {
        const char *eq = strchr(*p, '=');
        g_autofree char *from = g_strndup(*p, (gsize)(eq - *p));
        if (strcmp(reverse ? eq + 1 : from, word) == 0)
            return g_strdup(reverse ? from : eq + 1);
    }
    return NULL;
}

/* The Megatron words a row takes ("p2p or a2a"), newly allocated. */
static char *row_words(const MegatronArg *a)
{
    g_auto(GStrv) pairs = g_strsplit(a->words, ",", -1);
    GString *out = g_string_new(NULL);
    for (int i = 0; pairs[i]; i++) {
        *strchr(pairs[i], '=') = '\0';
        g_string_append_printf(out, "%s%s", i ? (pairs[i + 1] ? ", " : " or ") : "", pairs[i]);
    }
    return g_string_free(out, FALSE);
}

static gboolean set(const MegatronLine *line, PlanSpec *plan, PlanField field, const char *flag,
                    const char *text, GError **error)
{
    return plan_spec_set(plan, field, text, origin(line, flag), error);
}

/* A FIELD or SWITCH row given. */
static gboolean apply_row(const MegatronLine *line, PlanSpec *plan, const MegatronArg *a, char **v,
                          GError **error)
{
    if (a->rule == RULE_SWITCH)
        return set(line, plan, a->field, a->flag, a->words, error);
    if (!a->words)
        return set(line, plan, a->field, a->flag, v[0], error);
    g_autofree char *word = NULL;
    for (char **w = v; *w; w++) {
        g_autofree char *mapped = map_word(a->words, *w, FALSE);
        if (!mapped || (word && strcmp(word, mapped) != 0)) {
            g_autofree char *choices = row_words(a);
            g_autofree char *expected =
                g_strdup_printf("%s%s", choices,
                                mapped ? ", the same for every layer (plansim's one algorithm)"
                                       : " (what plansim models)");
            return bad_value(line, a->flag, *w, expected, error);
        }
        g_free(word);
        word = g_steal_pointer(&mapped);
    }
    return set(line, plan, a->field, a->flag, word, error);
}

/* Virtual stages: given, or the layers over pp and the layers of each. */
static gboolean own_virtual_stages(const MegatronLine *line, PlanSpec *plan, const ModelSpec *model,
                                   GError **error)
{
    static const char *const flags[] = {"num-virtual-stages-per-pipeline-rank",
                                        "virtual-pipeline-model-parallel-size"};
    const char *flag = NULL, *text = NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(flags); i++)
        if (value_of(line, flags[i]))
            flag = flags[i], text = value_of(line, flags[i]);
    const char *per_stage = value_of(line, "num-layers-per-virtual-pipeline-stage");
    if (per_stage) {
        int layers;
        if (!model_int(line, "num-layers-per-virtual-pipeline-stage", 1, &layers, error))
            return FALSE;
        long long chunk = (long long)layers * plan->pp;
        if (model->layers % chunk != 0) {
            g_autofree char *expected = g_strdup_printf(
                "a divisor of the model's %d layers over pp = %d", model->layers, plan->pp);
            return bad_value(line, "num-layers-per-virtual-pipeline-stage", per_stage, expected,
                             error);
        }
        flag = "num-layers-per-virtual-pipeline-stage";
        g_autofree char *vp = g_strdup_printf("%lld", model->layers / chunk);
        if (!set(line, plan, PLAN_VIRTUAL_STAGES, flag, vp, error))
            return FALSE;
    } else if (text && !set(line, plan, PLAN_VIRTUAL_STAGES, flag, text, error)) {
        return FALSE;
    }
    /* Megatron-Core interleaves a pipeline of more than one chunk a rank */
    return !flag || plan->virtual_stages == 1 ||
           set(line, plan, PLAN_SCHEDULE, flag, schedule_names[SCHEDULE_INTERLEAVED], error);
}

/* ZeRO: the distributed optimizer, or Megatron-FSDP's sharding. */
static gboolean own_zero(const MegatronLine *line, PlanSpec *plan, GError **error)
{
    static const char *const strategies = "no_shard=0,optim=1,optim_grads=2,optim_grads_params=3";
    const char *strategy = value_of(line, "data-parallel-sharding-strategy");
    if (given_switch(line, "use-megatron-fsdp")) {
        g_autofree char *stage =
            map_word(strategies, strategy ? strategy : "optim_grads_params", FALSE);
        if (!stage)
            return bad_value(line, "data-parallel-sharding-strategy", strategy,
                             "no_shard, optim, optim_grads or optim_grads_params", error);
        return set(line, plan, PLAN_ZERO_STAGE, "use-megatron-fsdp", stage, error);
    }
    if (given_switch(line, "use-torch-fsdp2"))
        return set(line, plan, PLAN_ZERO_STAGE, "use-torch-fsdp2", "3", error);
    if (given_switch(line, "use-distributed-optimizer"))
        return set(line, plan, PLAN_ZERO_STAGE, "use-distributed-optimizer", "1", error);
    return TRUE;
}

/* Recomputation: plansim's full is every layer's, Megatron's uniform
 * method one layer at a time (or a block of all of a chunk's layers);
 * selective is its modules' (recompute_module_names, those plansim
 * models of Megatron-Core's). */
static gboolean own_recompute(const MegatronLine *line, PlanSpec *plan, const ModelSpec *model,
                              GError **error)
{
    const char *granularity = value_of(line, "recompute-granularity");
    char **modules = given(line, "recompute-modules");
    for (char **m = modules; m && *m; m++)
        if (names_find(recompute_module_names, *m) < 0) {
            g_autofree char *known = names_list(recompute_module_names, FALSE);
            g_autofree char *expected =
                g_strdup_printf("one of %s (the modules plansim models of Megatron-Core's)", known);
            return bad_value(line, "recompute-modules", *m, expected, error);
        }
    if (modules && *modules) {
        g_autofree char *set_text = g_strjoinv(",", modules);
        if (!set(line, plan, PLAN_RECOMPUTE_MODULES, "recompute-modules", set_text, error))
            return FALSE;
    }
    if (given_switch(line, "recompute-activations") && !granularity)
        return set(line, plan, PLAN_RECOMPUTE, "recompute-activations", "selective", error);
    if (!granularity)
        return TRUE;
    if (strcmp(granularity, "selective") == 0)
        return set(line, plan, PLAN_RECOMPUTE, "recompute-granularity", "selective", error);
    if (strcmp(granularity, "full") != 0)
        return bad_value(line, "recompute-granularity", granularity, "full or selective", error);
    const char *method = value_of(line, "recompute-method");
    int layers = 1;
    if (!model_int(line, "recompute-num-layers", 1, &layers, error))
        return FALSE;
    if (!method || (strcmp(method, "uniform") != 0 && strcmp(method, "block") != 0))
        return bad_value(line, "recompute-method", method ? method : "none",
                         "uniform or block (Megatron-LM's full granularity needs one)", error);
    if (strcmp(method, "uniform") == 0 && layers != 1) {
        g_autofree char *got = g_strdup_printf("%d", layers);
        return bad_value(line, "recompute-num-layers", got,
                         "1 with the uniform method (plansim checkpoints each layer's input; "
                         "--recompute-method block recomputes the first N of each chunk)",
                         error);
    }
    if (!set(line, plan, PLAN_RECOMPUTE, "recompute-granularity", "full", error))
        return FALSE;
    if (strcmp(method, "uniform") == 0)
        return TRUE;
    /* block: the first N layers of each chunk; N at least a chunk's
     * layers (an even split's, rounded up) is every layer, plansim's 0 */
    long long chunks = (long long)plan->pp * plan->virtual_stages;
    if (layers >= (model->layers + chunks - 1) / chunks)
        return TRUE;
    g_autofree char *n = g_strdup_printf("%d", layers);
    return set(line, plan, PLAN_RECOMPUTE_NUM_LAYERS, "recompute-num-layers", n, error);
}

/* The precision: --bf16 alone bf16; --fp8-format (e4m3 or hybrid) with
 * --fp8-recipe delayed (Megatron-LM's default) or tensorwise fp8, mxfp8
 * mxfp8; --fp4-format e2m1 nvfp4. No precision flag leaves the plan's. */
static gboolean own_precision(const MegatronLine *line, PlanSpec *plan, GError **error)
{
    const char *fp8 = value_of(line, "fp8-format"), *recipe = value_of(line, "fp8-recipe");
    const char *fp4 = value_of(line, "fp4-format"), *fp4_recipe = value_of(line, "fp4-recipe");
    if (fp8 && fp4) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: --fp4-format: expected no --fp8-format with it (Megatron-LM refuses "
                    "both), got --fp8-format %s",
                    line->where, fp8);
        return FALSE;
    }
    if (fp4) {
        if (strcmp(fp4, "e2m1") != 0)
            return bad_value(line, "fp4-format", fp4, "e2m1", error);
        if (fp4_recipe && strcmp(fp4_recipe, "nvfp4") != 0)
            return bad_value(line, "fp4-recipe", fp4_recipe, "nvfp4 (what plansim models)", error);
        return set(line, plan, PLAN_DTYPE, "fp4-format", "nvfp4", error);
    }
    if (fp8) {
        if (strcmp(fp8, "e4m3") != 0 && strcmp(fp8, "hybrid") != 0)
            return bad_value(line, "fp8-format", fp8, "e4m3 or hybrid", error);
        if (recipe && strcmp(recipe, "mxfp8") == 0)
            return set(line, plan, PLAN_DTYPE, "fp8-recipe", "mxfp8", error);
        if (recipe && names_find(fp8_recipe_names, recipe) < 0)
            return bad_value(line, "fp8-recipe", recipe,
                             "delayed, tensorwise or mxfp8 (what plansim models)", error);
        return set(line, plan, PLAN_DTYPE, "fp8-format", "fp8", error) &&
               (!recipe || set(line, plan, PLAN_FP8_RECIPE, "fp8-recipe", recipe, error));
    }
    return !given_switch(line, "bf16") || set(line, plan, PLAN_DTYPE, "bf16", "bf16", error);
}

/* The expert capacity factor, a number, as plansim's percent. */
static gboolean own_capacity(const MegatronLine *line, PlanSpec *plan, GError **error)
{
    const char *text = value_of(line, "moe-expert-capacity-factor");
    if (!text)
        return TRUE;
    char *end;
    double factor = g_ascii_strtod(text, &end);
    if (*end || !(factor >= 0 && factor <= 1000))
        return bad_value(line, "moe-expert-capacity-factor", text, "a number from 0 to 1000",
                         error);
    g_autofree char *percent = g_strdup_printf("%.0f", factor * 100);
    return set(line, plan, PLAN_MOE_CAPACITY_PERCENT, "moe-expert-capacity-factor", percent, error);
}

/* The loss's fused cross-entropy: Megatron's own kernels, or TE's. */
static gboolean own_cross_entropy(const MegatronLine *line, PlanSpec *plan, GError **error)
{
    const char *impl = value_of(line, "cross-entropy-fusion-impl");
    if (!given_switch(line, "cross-entropy-loss-fusion"))
        return TRUE;
    if (impl && strcmp(impl, "native") != 0 && strcmp(impl, "te") != 0)
        return bad_value(line, "cross-entropy-fusion-impl", impl, "native or te", error);
    return set(line, plan, PLAN_CE_FUSION, "cross-entropy-loss-fusion", impl ? impl : "native",
               error);
}

gboolean megatron_line_apply(const MegatronLine *line, PlanSpec *plan, const ModelSpec *model,
                             GError **error)
{
    /* Megatron-LM's defaults where they are not plansim's: no overlapped
     * gradient reduction, one micro-batch a data-parallel rank */
    const char *where = g_intern_string(line->where);
    plan_field_put(plan, PLAN_OVERLAP_GRAD_REDUCE, FALSE, where);
    if (!value_of(line, "global-batch-size"))
        plan_field_put(plan, PLAN_GLOBAL_BATCH_SIZE, 0, where);
    for (gsize i = 0; i < N_ARGS; i++) {
        const MegatronArg *a = &megatron_args[i];
        if (line->given[i] && (a->rule == RULE_FIELD || a->rule == RULE_SWITCH) &&
            !apply_row(line, plan, a, line->given[i], error))
            return FALSE;
    }
    if (!(own_virtual_stages(line, plan, model, error) && own_zero(line, plan, error) &&
          own_recompute(line, plan, model, error) && own_precision(line, plan, error) &&
          own_capacity(line, plan, error) && own_cross_entropy(line, plan, error)))
        return FALSE;
    /* and no overlapped parameter gather, where there is one to overlap:
     * the distributed optimizer's (elsewhere the field changes nothing) */
    if (!given_switch(line, "overlap-param-gather") &&
        (plan->zero_stage == 1 || plan->zero_stage == 2))
        plan_field_put(plan, PLAN_OVERLAP_PARAM_GATHER, FALSE, where);
    return TRUE;
}

/* ---- writing a plan ---- */

const char *const megatron_style_names[] = {"megatron", "megatron-bridge", NULL};

/* `text` quoted for a shell when it holds more than a word's characters. */
static char *shell_word(const char *text)
{
    gboolean plain = *text != '\0';
    for (const char *c = text; *c; c++)
        plain &= g_ascii_isalnum(*c) || strchr("_.,-+/:=", *c) != NULL;
    return plain ? g_strdup(text) : g_shell_quote(text);
}

/* One Megatron-LM argument ("--flag", "--flag value"). */
static void put_lm(Writer *w, const char *flag, const char *value)
{
    g_autofree char *word = value ? shell_word(value) : NULL;
    g_string_append_printf(w->out, " --%s%s%s", flag, value ? " " : "", value ? word : "");
}

/* One Megatron-Bridge override ("key=value"); a value Hydra would read
 * as more than a word is in Hydra's double quotes. */
static void put_bridge(Writer *w, const char *key, const char *value)
{
    gboolean negate = key[0] == '!';
    if (negate)
        value = strcmp(value, "true") == 0 ? "false" : "true";
    gboolean plain = TRUE;
    for (const char *c = value; *c; c++)
        plain &= g_ascii_isalnum(*c) || strchr("_.-", *c) != NULL;
    g_autofree char *text = plain ? g_strdup_printf("%s=%s", key + negate, value)
                                  : g_strdup_printf("%s=\"%s\"", key + negate, value);
    g_autofree char *word = shell_word(text);
    g_string_append_printf(w->out, " %s", word);
}

/* Whether scalar field `f` is at its default. */
static gboolean at_default(const PlanSpec *plan, PlanField f)
{
    return plan_field_get(plan, f) == plan_fields[f].fallback;
}

/* A FIELD or SWITCH row, unless an earlier row said its field. */
static void write_row(Writer *w, const MegatronArg *a)
{
    const ModelSpec *model = w->model;
    const PlanSpec *plan = w->plan;
    if (w->said[a->field])
        return;
    gboolean list = plan_field_is_list(a->field);
    gboolean set = list ? plan->pipeline_model_parallel_layout.n > 0 : !at_default(plan, a->field);
    if (a->field == PLAN_FIRST_STAGE_LAYERS || a->field == PLAN_LAST_STAGE_LAYERS || list) {
        if (!set) /* not set: Bridge's None, nothing to say */
            return;
    }
    g_autofree char *text = NULL;
    if (list || a->field == PLAN_ETP)
        text = list ? plan_field_text(plan, a->field)
                    : g_strdup_printf("%d", plan_field_value(plan, a->field));
    else
        text = plan_field_text(plan, a->field);
    g_autofree char *word = NULL;
    gboolean on = FALSE;
    if (a->rule == RULE_SWITCH) {
        /* without it, a boolean is false and any other field at its
         * default; a value neither says is not this switch's to say */
        on = strcmp(text, a->words) == 0;
        if (!on && (plan_fields[a->field].kind == FIELD_BOOL ? strcmp(text, "false") != 0 : set))
            return;
    } else if (a->words && !(word = map_word(a->words, text, TRUE))) {
        return;
    }
    w->said[a->field] = TRUE;
    /* the parameters are gathered apart only by the distributed
     * optimizer, which Megatron-LM requires for it: elsewhere the field
     * changes nothing (strategy_normalize) and is not written */
    if (a->field == PLAN_OVERLAP_PARAM_GATHER && (plan->zero_stage == 0 || plan->zero_stage == 3))
        return;
    if (w->style == MEGATRON_LM) {
        if (a->rule == RULE_SWITCH ? on : (set || a->always))
            put_lm(w, a->flag, a->rule == RULE_SWITCH ? NULL : word ? word : text);
    } else if (a->bridge && (!a->moe || model->experts > 1 || set)) {
        put_bridge(w, a->bridge,
                   a->rule == RULE_SWITCH ? (on ? "true" : "false")
                   : word                 ? word
                                          : text);
    }
}

/* Virtual stages and the schedule; an uneven split no field says as its
 * layout. */
static void write_pipeline(Writer *w)
{
    const ModelSpec *model = w->model;
    const PlanSpec *plan = w->plan;
    int vp = plan->virtual_stages;
    gboolean interleaved = plan->schedule == SCHEDULE_INTERLEAVED;
    w->said[PLAN_SCHEDULE] = interleaved ? vp > 1 : plan->schedule == SCHEDULE_1F1B && vp == 1;
    w->said[PLAN_VIRTUAL_STAGES] = w->said[PLAN_SCHEDULE];
    w->said[PLAN_LAYERS_PER_STAGE] = TRUE;
    gboolean split_by_flags =
        plan->pipeline_model_parallel_layout.n > 0 || !at_default(plan, PLAN_FIRST_STAGE_LAYERS) ||
        !at_default(plan, PLAN_LAST_STAGE_LAYERS) || !at_default(plan, PLAN_EMBEDDING_AS_LAYER) ||
        !at_default(plan, PLAN_LOSS_AS_LAYER);
    g_autofree char *layout = plan_spec_split_unsaid(plan)
                                  ? pipeline_layout_text(plan->layers_per_stage.v,
                                                         plan->layers_per_stage.n,
                                                         plan->mtp_num_layers)
                                  : NULL;
    if (w->style == MEGATRON_BRIDGE) {
        g_autofree char *text = g_strdup_printf("%d", vp);
        put_bridge(w, "model.virtual_pipeline_model_parallel_size", vp > 1 ? text : "null");
        if (layout)
            put_bridge(w, "model.pipeline_model_parallel_layout", layout);
        return;
    }
    if (layout) { /* the layout gives the virtual stages too */
        put_lm(w, "pipeline-model-parallel-layout", layout);
        return;
    }
    if (vp == 1 || plan->pipeline_model_parallel_layout.n > 0)
        return;
    long long chunks = (long long)plan->pp * vp;
    g_autofree char *text = g_strdup_printf(
        "%lld", split_by_flags || model->layers % chunks ? vp : model->layers / chunks);
    put_lm(w,
           split_by_flags || model->layers % chunks ? "num-virtual-stages-per-pipeline-rank"
                                                    : "num-layers-per-virtual-pipeline-stage",
           text);
}

static void write_zero(Writer *w)
{
    static const char *const strategies[] = {"no_shard", "optim", "optim_grads",
                                             "optim_grads_params"};
    int stage = w->plan->zero_stage;
    w->said[PLAN_ZERO_STAGE] = TRUE;
    if (w->style == MEGATRON_LM) {
        if (stage >= 1)
            put_lm(w, "use-distributed-optimizer", NULL);
        if (stage >= 2) {
            put_lm(w, "use-megatron-fsdp", NULL);
            put_lm(w, "data-parallel-sharding-strategy", strategies[stage]);
        }
        return;
    }
    put_bridge(w, "ddp.use_distributed_optimizer", stage >= 1 ? "true" : "false");
    put_bridge(w, "optimizer.use_distributed_optimizer", stage >= 1 ? "true" : "false");
    if (stage >= 2) {
        put_bridge(w, "ddp.use_megatron_fsdp", "true");
        put_bridge(w, "ddp.data_parallel_sharding_strategy", strategies[stage]);
    }
}

static void write_recompute(Writer *w)
{
    Recompute r = w->plan->recompute;
    w->said[PLAN_RECOMPUTE] = w->said[PLAN_RECOMPUTE_NUM_LAYERS] =
        w->said[PLAN_RECOMPUTE_MODULES] = TRUE;
    /* selective's modules, unless Megatron-Core's default (core_attn):
     * Megatron-LM's words, Bridge's a Hydra list */
    g_autofree char *modules = plan_field_text(w->plan, PLAN_RECOMPUTE_MODULES);
    gboolean some_modules =
        r == RECOMPUTE_SELECTIVE && !at_default(w->plan, PLAN_RECOMPUTE_MODULES);
    /* the first N layers of each chunk: the block method; every layer:
     * uniform, one at a time */
    gboolean some = w->plan->recompute_num_layers > 0;
    g_autofree char *layers = g_strdup_printf("%d", some ? w->plan->recompute_num_layers : 1);
    if (w->style == MEGATRON_LM) {
        if (r != RECOMPUTE_NONE)
            put_lm(w, "recompute-granularity", recompute_names[r]);
        if (some_modules) {
            g_auto(GStrv) words = g_strsplit(modules, ",", -1);
            g_autofree char *list = g_strjoinv(" ", words);
            g_string_append_printf(w->out, " --recompute-modules %s", list);
        }
        if (r == RECOMPUTE_FULL) {
            put_lm(w, "recompute-method", some ? "block" : "uniform");
            put_lm(w, "recompute-num-layers", layers);
        }
        return;
    }
    put_bridge(w, "model.recompute_granularity", r == RECOMPUTE_NONE ? "null" : recompute_names[r]);
    if (some_modules) {
        g_autofree char *list = g_strdup_printf("model.recompute_modules=[%s]", modules);
        g_autofree char *word = shell_word(list);
        g_string_append_printf(w->out, " %s", word);
    }
    if (r == RECOMPUTE_FULL) {
        put_bridge(w, "model.recompute_method", some ? "block" : "uniform");
        put_bridge(w, "model.recompute_num_layers", layers);
    }
}

/* The precision; Bridge's as its presets (mixed_precision.py), with the
 * fp8 parameter gather where the plan's is not the preset's. */
static void write_precision(Writer *w)
{
    const PlanSpec *plan = w->plan;
    w->said[PLAN_DTYPE] = w->said[PLAN_FP8_RECIPE] = TRUE;
    if (w->style == MEGATRON_LM) {
        put_lm(w, "bf16", NULL);
        if (plan->dtype == DTYPE_FP8 || plan->dtype == DTYPE_MXFP8) {
            put_lm(w, "fp8-format", plan->dtype == DTYPE_FP8 ? "hybrid" : "e4m3");
            put_lm(w, "fp8-recipe",
                   plan->dtype == DTYPE_FP8 ? fp8_recipe_names[plan->fp8_recipe] : "mxfp8");
        } else if (plan->dtype == DTYPE_NVFP4) {
            put_lm(w, "fp4-format", "e2m1");
            put_lm(w, "fp4-recipe", "nvfp4");
        }
        return; /* --fp8-param-gather: its row's */
    }
    const char *preset = plan->dtype == DTYPE_MXFP8   ? "bf16_with_mxfp8_mixed"
                         : plan->dtype == DTYPE_NVFP4 ? "bf16_with_nvfp4_mixed"
                         : plan->dtype != DTYPE_FP8   ? "bf16_mixed"
                         : plan->fp8_recipe == FP8_RECIPE_DELAYED
                             ? "bf16_with_fp8_delayed_scaling_mixed"
                             : "bf16_with_fp8_current_scaling_mixed";
    gboolean preset_gathers = plan->dtype == DTYPE_FP8 || plan->dtype == DTYPE_MXFP8;
    /* the MXFP8 preset gathers in the gradient buffer too */
    gboolean preset_reuses = plan->dtype == DTYPE_MXFP8;
    put_bridge(w, "mixed_precision", preset);
    if (preset_gathers != plan->fp8_param_gather)
        put_bridge(w, "mixed_precision.fp8_param_gather",
                   plan->fp8_param_gather ? "true" : "false");
    if (preset_reuses != plan->reuse_grad_buf_for_mxfp8_param_ag)
        put_bridge(w, "mixed_precision.reuse_grad_buf_for_mxfp8_param_ag",
                   plan->reuse_grad_buf_for_mxfp8_param_ag ? "true" : "false");
}

static void write_moe_capacity(Writer *w)
{
    const ModelSpec *model = w->model;
    int percent = w->plan->moe_capacity_percent;
    g_autofree char *factor = g_strdup_printf("%g", percent / 100.0);
    w->said[PLAN_MOE_CAPACITY_PERCENT] = TRUE;
    if (w->style == MEGATRON_LM && percent > 0)
        put_lm(w, "moe-expert-capacity-factor", factor);
    else if (w->style == MEGATRON_BRIDGE && (model->experts > 1 || percent > 0))
        put_bridge(w, "model.moe_expert_capacity_factor", percent > 0 ? factor : "null");
}

static void write_cross_entropy(Writer *w)
{
    CeFusion f = w->plan->cross_entropy_fusion;
    w->said[PLAN_CE_FUSION] = TRUE;
    if (w->style == MEGATRON_LM) {
        if (f != CE_FUSION_NONE)
            put_lm(w, "cross-entropy-loss-fusion", NULL);
        if (f == CE_FUSION_TE)
            put_lm(w, "cross-entropy-fusion-impl", "te");
        return;
    }
    put_bridge(w, "model.cross_entropy_loss_fusion", f != CE_FUSION_NONE ? "true" : "false");
    if (f != CE_FUSION_NONE)
        put_bridge(w, "model.cross_entropy_fusion_impl", ce_fusion_names[f]);
}

static void write_seq_length(Writer *w)
{
    const ModelSpec *model = w->model;
    g_autofree char *seq = g_strdup_printf("%d", model->seq_length);
    if (w->style == MEGATRON_LM) {
        put_lm(w, "seq-length", seq);
        return;
    }
    put_bridge(w, "model.seq_length", seq);
    put_bridge(w, "dataset.seq_length", seq);
}

char *megatron_plan_text(const PlanSpec *plan, const ModelSpec *model, MegatronStyle style,
                         char **unsaid)
{
    Writer w = {.out = g_string_new(NULL), .style = style, .plan = plan, .model = model};
    /* dp Megatron-LM derives from the world size, as plansim does */
    w.said[PLAN_DP] = TRUE;
    for (gsize i = 0; i < N_ARGS; i++) {
        const MegatronArg *a = &megatron_args[i];
        if (a->rule == RULE_FIELD || a->rule == RULE_SWITCH)
            write_row(&w, a);
        else if (a->write)
            a->write(&w);
    }
    if (unsaid) {
        GString *rest = g_string_new(NULL);
        for (int f = 0; f < PLAN_N_FIELDS; f++) {
            if (w.said[f] || plan_field_is_list((PlanField)f) || at_default(plan, (PlanField)f))
                continue;
            g_autofree char *text = plan_field_text(plan, (PlanField)f);
            g_string_append_printf(rest, "%s%s %s", rest->len ? ", " : "", plan_fields[f].name,
                                   text);
        }
        *unsaid = rest->len ? g_string_free(rest, FALSE) : (g_string_free(rest, TRUE), NULL);
    }
    if (w.out->len)
        g_string_erase(w.out, 0, 1);
    g_string_append_c(w.out, '\n');
    return g_string_free(w.out, FALSE);
}
