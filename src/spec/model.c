/* model.c: model files, plansim's own format or a Hugging Face config.json.
 *
 * Invariant of a returned ModelSpec: every size is positive, the heads divide
 * the hidden size, the KV heads divide the heads, and the parameter count is
 * below 2^53 so that every product the simulator forms stays exact in a
 * double and in 64-bit integers. A mixture of experts routes each token to
 * experts_per_token of its experts, at most all of them. */
#include <string.h>

#include "spec/json.h"
#include "spec/model.h"
#include "base/error.h"
#include "base/names.h"
#include "base/text.h"

static const char *const model_keys[] = {
    "name",
    "layers",
    "hidden_size",
    "attention_heads",
    "kv_heads",
    "head_dim",
    "qkv_bias",
    "out_bias",
    "mlp_bias",
    "qk_norm",
    "sliding_window",
    "layer_types",
    "attention_sinks",
    "hidden_dropout",
    "attention_dropout",
    "ffn_hidden_size",
    "vocab_size",
    "seq_length",
    "mlp",
    "tied_embeddings",
    "experts",
    "experts_per_token",
    "shared_experts",
    "moe_ffn_hidden_size",
    "moe_layer_frequency",
    "first_dense_layers",
    "router_bias",
    "router_groups",
    "router_topk_groups",
    "mtp_layers",
    NULL,
};

/* The MLPs by their names in a plansim model file ("mlp"), one an MlpKind. */
static const char *const mlp_names[] = {[MLP_GELU] = "gelu", [MLP_SWIGLU] = "swiglu",
                                        [MLP_RELU2] = "relu2", NULL};

/* The key names of the two formats, in the order of ModelSpec's fields. */
typedef struct {
    const char *layers, *hidden, *heads, *kv_heads, *ffn, *vocab, *seq;
    /* the mixture of experts': experts (NULL-terminated alternatives),
     * top-k, shared experts, expert FFN (NULL: the dense FFN's key),
     * frequency, leading dense layers */
    const char *const *experts;
    const char *top_k, *shared, *expert_ffn, *frequency, *first_dense;
    const char *groups, *topk_groups; /* group-limited routing's */
} ModelKeys;

static const char *const plansim_expert_keys[] = {"experts", NULL};
/* The keys by which Hugging Face configs give a mixture of experts' expert
 * count: Mixtral and Jamba, DeepSeek V2 and V3, Qwen2-MoE and OLMoE. */
static const char *const hf_expert_keys[] = {"num_local_experts", "n_routed_experts",
                                             "num_experts", NULL};

static const ModelKeys plansim_names = {"layers",    "hidden_size",     "attention_heads",
                                        "kv_heads",  "ffn_hidden_size", "vocab_size",
                                        "seq_length",
                                        plansim_expert_keys,
                                        "experts_per_token",
                                        "shared_experts",
                                        "moe_ffn_hidden_size",
                                        "moe_layer_frequency",
                                        "first_dense_layers",
                                        "router_groups",
                                        "router_topk_groups"};
/* Mixtral gives its experts' FFN as intermediate_size (it has no dense
 * layers); DeepSeek as moe_intermediate_size, with n_shared_experts,
 * first_k_dense_replace and moe_layer_freq. */
static const ModelKeys hf_names = {
    "num_hidden_layers",     "hidden_size",           "num_attention_heads",
    "num_key_value_heads",   "intermediate_size",     "vocab_size",
    "max_position_embeddings", hf_expert_keys,        "num_experts_per_tok",
    "n_shared_experts",      "moe_intermediate_size", "moe_layer_freq",
    "first_k_dense_replace", "n_group",               "topk_group"};

/* An integer of at least `min`; absent or null (as Hugging Face writes
 * an unused size): `fallback`. */
static gboolean read_int_from(const JsonDoc *doc, const char *key, int min, int fallback, int *out,
                              GError **error)
{
    long long v = fallback;
    if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(doc->root, key)) &&
        !json_int(doc, doc->root, "$", key, FALSE, min, G_MAXINT, fallback, &v, error))
        return FALSE;
    *out = (int)v;
    return TRUE;
}

static gboolean read_int(const JsonDoc *doc, const char *key, gboolean required, int fallback,
                         int *out, GError **error)
{
    long long v;
    if (!json_int(doc, doc->root, "$", key, required, 1, G_MAXINT, fallback, &v, error))
        return FALSE;
    *out = (int)v;
    return TRUE;
}

/* The mixture of experts' keys; all optional, a dense model by default. */
static gboolean read_experts(const JsonDoc *doc, const ModelKeys *k, ModelSpec *m, GError **error)
{
    m->experts = 0;
    for (const char *const *key = k->experts; *key && m->experts == 0; key++)
        if (!read_int_from(doc, *key, 0, 0, &m->experts, error))
            return FALSE;
    const char *expert_ffn = cJSON_HasObjectItem(doc->root, k->expert_ffn) ? k->expert_ffn : k->ffn;
    return read_int_from(doc, k->top_k, 1, 1, &m->experts_per_token, error) &&
           read_int_from(doc, k->shared, 0, 0, &m->shared_experts, error) &&
           read_int_from(doc, expert_ffn, 1, m->ffn_hidden_size, &m->moe_ffn_hidden_size, error) &&
           read_int_from(doc, k->frequency, 1, 1, &m->moe_layer_frequency, error) &&
           read_int_from(doc, k->first_dense, 0, 0, &m->first_dense_layers, error) &&
           read_int_from(doc, k->groups, 1, 1, &m->router_groups, error) &&
           read_int_from(doc, k->topk_groups, 1, m->router_groups, &m->router_topk_groups, error);
}

/* DeepSeek-V2's multi-head latent attention (arXiv 2405.04434, section
 * 2.1.2): kv_lora_rank, q_lora_rank (null: none), and the per-head widths
 * of Q and K without and with rotary positions and of V. */
static gboolean read_latent_attention(const JsonDoc *doc, ModelSpec *m, GError **error)
{
    return read_int_from(doc, "kv_lora_rank", 0, 0, &m->kv_lora_rank, error) &&
           read_int_from(doc, "q_lora_rank", 0, 0, &m->q_lora_rank, error) &&
           read_int_from(doc, "qk_nope_head_dim", 1, 1, &m->qk_nope_head_dim, error) &&
           read_int_from(doc, "qk_rope_head_dim", 1, 1, &m->qk_rope_head_dim, error) &&
           read_int_from(doc, "v_head_dim", 1, 1, &m->v_head_dim, error);
}

/* A layer's attention as Hugging Face's layer_types names it, by
 * whether it is windowed: index 0 full, 1 sliding. */
static const char *const layer_type_names[] = {"full_attention", "sliding_attention", NULL};

/* Which layers are windowed (ModelSpec.window_layers): a "layer_types"
 * list, one of layer_type_names a layer, in either format; in a Hugging
 * Face config, Gemma's sliding_window_pattern and Qwen2's
 * max_window_layers too (transformers' modeling_gemma3.py: layer i is
 * windowed when (i + 1) % pattern != 0; modeling_qwen2.py: when i >=
 * max_window_layers), which a layer_types list overrides, as transformers'
 * configs derive it from them. */
static gboolean read_window_layers(const JsonDoc *doc, const ModelKeys *k, ModelSpec *m,
                                   gboolean hf, GError **error)
{
    if (hf && (!read_int_from(doc, "sliding_window_pattern", 1, 0, &m->window_period, error) ||
               !read_int_from(doc, "max_window_layers", 0, 0, &m->window_from, error)))
        return FALSE;
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(doc->root, "layer_types"), *item;
    if (!types || cJSON_IsNull(types))
        return TRUE;
    if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != m->layers) {
        json_fail(error, doc, "$", "layer_types", types, "a list of %s = %d layer types", k->layers,
                  m->layers);
        return FALSE;
    }
    m->window_layers = g_new(guint8, m->layers);
    int i = 0;
    cJSON_ArrayForEach(item, types)
    {
        int windowed = names_find(layer_type_names, cJSON_GetStringValue(item));
        if (windowed < 0) {
            g_autofree char *at = g_strdup_printf("layer_types[%d]", i);
            g_autofree char *names = names_list(layer_type_names, TRUE);
            json_fail(error, doc, "$", at, item, "one of %s", names);
            return FALSE;
        }
        m->window_layers[i++] = (guint8)windowed;
    }
    return TRUE;
}

/* Qwen2-MoE's and Qwen3-MoE's placement of their MoE layers
 * (modeling_qwen3_moe.py: layer i is a MoE layer when it is not in
 * mlp_only_layers and (i + 1) % decoder_sparse_step == 0; the others a
 * dense MLP of intermediate_size). plansim's rule (ModelSpec's
 * first_dense_layers, moe_layer_frequency) holds it where the step is 1
 * and mlp_only_layers are the first layers, 0 to k - 1: first_dense_layers
 * k. Other placements are refused. */
static gboolean read_sparse_layers(const JsonDoc *doc, ModelSpec *m, GError **error)
{
    int step;
    if (!read_int_from(doc, "decoder_sparse_step", 1, 1, &step, error))
        return FALSE;
    if (m->experts <= 1) /* a dense model's configs may carry them unused */
        return TRUE;
    if (step != 1) {
        json_fail(error, doc, "$", "decoder_sparse_step",
                  cJSON_GetObjectItemCaseSensitive(doc->root, "decoder_sparse_step"),
                  "1 (a MoE layer every layer; plansim's MoE layers are every "
                  "moe_layer_freq-th from layer 0, not every step-th from layer step - 1)");
        return FALSE;
    }
    const cJSON *dense = cJSON_GetObjectItemCaseSensitive(doc->root, "mlp_only_layers"), *item;
    if (!dense || cJSON_IsNull(dense))
        return TRUE;
    if (!cJSON_IsArray(dense) || cJSON_GetArraySize(dense) > m->layers) {
        json_fail(error, doc, "$", "mlp_only_layers", dense,
                  "a list of at most num_hidden_layers = %d layers", m->layers);
        return FALSE;
    }
    int i = 0;
    cJSON_ArrayForEach(item, dense)
    {
        if (!cJSON_IsNumber(item) || item->valuedouble != i) {
            g_autofree char *at = g_strdup_printf("mlp_only_layers[%d]", i);
            json_fail(error, doc, "$", at, item,
                      "%d (plansim reads dense layers first: mlp_only_layers 0 to k - 1)", i);
            return FALSE;
        }
        i++;
    }
    if (i > 0)
        m->first_dense_layers = i;
    return TRUE;
}

/* The symbols of hybrid_override_pattern, one a HybridLayer, as
 * Megatron-Core's ssm/mamba_hybrid_layer_allocation.py names them (its
 * Symbols: MAMBA, ATTENTION, MLP, MOE). */
static const char hybrid_symbols[] = "M*-E";

/* A hybrid model's layers (ModelSpec.hybrid_layers): Nemotron-H's
 * hybrid_override_pattern, one symbol a layer, num_hidden_layers of them;
 * and where a layer is a Mamba-2 mixer its sizes, as transformers'
 * NemotronHConfig names them (mamba_num_heads, mamba_head_dim, n_groups,
 * ssm_state_size, conv_kernel, chunk_size: required; use_conv_bias and
 * use_bias: Mamba-2's defaults, a bias on the convolution, none on the
 * projections). */
static gboolean read_hybrid(const JsonDoc *doc, ModelSpec *m, GError **error)
{
    static const char key[] = "hybrid_override_pattern";
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(doc->root, key);
    if (!item || cJSON_IsNull(item))
        return TRUE;
    const char *pattern = cJSON_GetStringValue(item);
    if (!pattern || (int)strlen(pattern) != m->layers) {
        json_fail(error, doc, "$", key, item,
                  "a string of num_hidden_layers = %d symbols, one a layer", m->layers);
        return FALSE;
    }
    m->hybrid_layers = g_new(guint8, m->layers);
    for (int i = 0; i < m->layers; i++) {
        const char *at = pattern[i] ? strchr(hybrid_symbols, pattern[i]) : NULL;
        if (!at) {
            json_fail(error, doc, "$", key, item,
                      "symbols of \"%s\" (M Mamba-2, * attention, - MLP, E MoE), layer %d "
                      "being none of them",
                      hybrid_symbols, i);
            return FALSE;
        }
        m->hybrid_layers[i] = (guint8)(at - hybrid_symbols);
    }
    gboolean mamba = strchr(pattern, hybrid_symbols[HYBRID_MAMBA]) != NULL;
    return read_int(doc, "mamba_num_heads", mamba, 1, &m->mamba_heads, error) &&
           read_int(doc, "mamba_head_dim", mamba, 1, &m->mamba_head_dim, error) &&
           read_int(doc, "n_groups", mamba, 1, &m->mamba_groups, error) &&
           read_int(doc, "ssm_state_size", mamba, 1, &m->ssm_state, error) &&
           read_int(doc, "conv_kernel", mamba, 1, &m->conv_kernel, error) &&
           read_int(doc, "chunk_size", mamba, 1, &m->chunk_size, error) &&
           json_bool(doc, doc->root, "$", "use_conv_bias", FALSE, TRUE, &m->conv_bias, error) &&
           json_bool(doc, doc->root, "$", "use_bias", FALSE, FALSE, &m->mamba_bias, error);
}

/* The multi-token-prediction modules a model has, under `key`: plansim's
 * mtp_layers, Hugging Face's num_nextn_predict_layers (DeepSeek-V3's);
 * absent or null: none. */
static gboolean read_mtp(const JsonDoc *doc, const char *key, ModelSpec *m, GError **error)
{
    return read_int_from(doc, key, 0, 0, &m->mtp_layers, error);
}

static gboolean read_sizes(const JsonDoc *doc, const ModelKeys *k, ModelSpec *m, GError **error)
{
    long long layers;
    if (!json_int(doc, doc->root, "$", k->layers, TRUE, 1, MODEL_MAX_LAYERS, 0, &layers, error))
        return FALSE;
    m->layers = (int)layers;
    if (!read_int(doc, k->hidden, TRUE, 0, &m->hidden_size, error) ||
        !read_int(doc, k->heads, TRUE, 0, &m->attention_heads, error) ||
        !read_int(doc, k->kv_heads, FALSE, m->attention_heads, &m->kv_heads, error) ||
        !read_int_from(doc, "head_dim", 1, 0, &m->head_dim, error) ||
        !read_int(doc, k->vocab, TRUE, 0, &m->vocab_size, error) ||
        !read_int(doc, k->seq, TRUE, 0, &m->seq_length, error))
        return FALSE;
    /* the FFN default needs the hidden size; 4h must not overflow an int */
    int ffn_default = m->hidden_size <= G_MAXINT / 4 ? 4 * m->hidden_size : G_MAXINT;
    return read_int(doc, k->ffn, FALSE, ffn_default, &m->ffn_hidden_size, error) &&
           read_experts(doc, k, m, error);
}

/* The dropout probabilities' keys: the hidden one's, then the attention
 * one's, each a NULL-ended list of alternatives. */
typedef struct {
    const char *const *hidden, *const *attention;
} DropoutKeys;

static const DropoutKeys plansim_dropout_keys = {
    .hidden = (const char *const[]){"hidden_dropout", NULL},
    .attention = (const char *const[]){"attention_dropout", NULL},
};
/* Hugging Face's: BERT's and GPT-2's names besides; a Llama config gives
 * attention_dropout only, its model having no other dropout */
static const DropoutKeys hf_dropout_keys = {
    .hidden = (const char *const[]){"hidden_dropout", "hidden_dropout_prob", "resid_pdrop", NULL},
    .attention = (const char *const[]){"attention_dropout", "attention_probs_dropout_prob",
                                       "attn_pdrop", NULL},
};

/* The first of `keys` the config has, a probability from 0 to under 1;
 * none: `fallback`. */
static gboolean read_probability(const JsonDoc *doc, const char *const *keys, double fallback,
                                 double *out, GError **error)
{
    for (; *keys; keys++)
        if (cJSON_HasObjectItem(doc->root, *keys))
            return json_number(doc, doc->root, "$", *keys, FALSE, 0, 0.999999, fallback, out,
                               error);
    *out = fallback;
    return TRUE;
}

static gboolean read_dropout(const JsonDoc *doc, DropoutKeys keys, double fallback, ModelSpec *m,
                             GError **error)
{
    return read_probability(doc, keys.hidden, fallback, &m->hidden_dropout, error) &&
           read_probability(doc, keys.attention, fallback, &m->attention_dropout, error);
}

static gboolean read_plansim(const JsonDoc *doc, ModelSpec *m, GError **error)
{
    g_autofree char *mlp = NULL;
    if (!json_check_keys(doc, doc->root, "$", model_keys, error) ||
        !json_string(doc, doc->root, "$", "name", TRUE, NULL, &m->name, error) ||
        !read_sizes(doc, &plansim_names, m, error) ||
        !json_string(doc, doc->root, "$", "mlp", FALSE, "gelu", &mlp, error) ||
        !json_bool(doc, doc->root, "$", "tied_embeddings", FALSE, FALSE, &m->tied_embeddings,
                   error) ||
        !json_bool(doc, doc->root, "$", "qkv_bias", FALSE, FALSE, &m->qkv_bias, error) ||
        !json_bool(doc, doc->root, "$", "out_bias", FALSE, FALSE, &m->out_bias, error) ||
        !json_bool(doc, doc->root, "$", "mlp_bias", FALSE, FALSE, &m->mlp_bias, error) ||
        !json_bool(doc, doc->root, "$", "qk_norm", FALSE, FALSE, &m->qk_norm, error) ||
        !read_int_from(doc, "sliding_window", 0, 0, &m->sliding_window, error) ||
        !read_window_layers(doc, &plansim_names, m, FALSE, error) ||
        !json_bool(doc, doc->root, "$", "attention_sinks", FALSE, FALSE, &m->attention_sinks,
                   error) ||
        !json_bool(doc, doc->root, "$", "router_bias", FALSE, FALSE, &m->router_bias, error) ||
        !read_mtp(doc, "mtp_layers", m, error) ||
        !read_dropout(doc, plansim_dropout_keys, MODEL_DEFAULT_DROPOUT, m, error))
        return FALSE;
    int kind = names_find(mlp_names, mlp);
    if (kind < 0) {
        g_autofree char *names = names_list(mlp_names, TRUE);
        json_fail(error, doc, "$", "mlp", cJSON_GetObjectItemCaseSensitive(doc->root, "mlp"),
                  "one of %s", names);
        return FALSE;
    }
    m->mlp = (MlpKind)kind;
    return TRUE;
}

/* A Hugging Face model's name when the config has no "_name_or_path": the
 * file's name without ".json", or, for a "config.json", its folder's (in
 * the Hugging Face cache, .../models--ORG--NAME/snapshots/HASH/config.json,
 * "ORG/NAME"). */
static char *hf_file_name(const char *path)
{
    g_autofree char *base = g_path_get_basename(path);
    if (g_str_has_suffix(base, ".json"))
        base[strlen(base) - 5] = '\0';
    if (strcmp(base, "config") != 0)
        return g_steal_pointer(&base);
    g_autofree char *absolute = g_canonicalize_filename(path, NULL);
    g_autofree char *folder = g_path_get_dirname(absolute);
    g_autofree char *parent = g_path_get_dirname(folder);
    g_autofree char *parent_name = g_path_get_basename(parent);
    g_autofree char *grandparent = g_path_get_dirname(parent);
    g_autofree char *cache_name = g_path_get_basename(grandparent);
    if (strcmp(parent_name, "snapshots") == 0 && g_str_has_prefix(cache_name, "models--")) {
        g_auto(GStrv) parts = g_strsplit(cache_name + strlen("models--"), "--", -1);
        return g_strjoinv("/", parts);
    }
    return g_path_get_basename(folder);
}

/* What a Hugging Face model_type implies that its config's keys do not say
 * (transformers' modeling files): Qwen2's bias on Q, K and V
 * (modeling_qwen2.py); Qwen3's RMSNorm on each head of Q and K
 * (modeling_qwen3.py, modeling_qwen3_moe.py); GPT-OSS's biases on its
 * experts' projections and on its router, and its learned sink logit a
 * head (modeling_gpt_oss.py: GptOssExperts' gate_up_proj_bias and
 * down_proj_bias, GptOssTopKRouter's bias, GptOssAttention's sinks). */
static const struct {
    const char *type;
    gboolean qkv_bias, qk_norm, mlp_bias, router_bias, attention_sinks;
} hf_model_types[] = {
    {.type = "qwen2", .qkv_bias = TRUE},
    {.type = "qwen3", .qk_norm = TRUE},
    {.type = "qwen3_moe", .qk_norm = TRUE},
    {.type = "gpt_oss", .mlp_bias = TRUE, .router_bias = TRUE, .attention_sinks = TRUE},
};

/* Hugging Face configs carry many keys plansim does not use: they are not
 * checked against a list. */
static gboolean read_hugging_face(const JsonDoc *doc, ModelSpec *m, GError **error)
{
    g_autofree char *act = NULL, *name = NULL, *type = NULL;
    gboolean attention_bias, use_window;
    /* Nemotron-H names its MLP's activation apart from its Mamba's */
    const char *act_key =
        cJSON_HasObjectItem(doc->root, "mlp_hidden_act") ? "mlp_hidden_act" : "hidden_act";
    if (!read_sizes(doc, &hf_names, m, error) || !read_latent_attention(doc, m, error) ||
        !read_mtp(doc, "num_nextn_predict_layers", m, error) ||
        !json_bool(doc, doc->root, "$", "attention_bias", FALSE, FALSE, &attention_bias, error) ||
        !json_bool(doc, doc->root, "$", "mlp_bias", FALSE, FALSE, &m->mlp_bias, error) ||
        !json_bool(doc, doc->root, "$", "use_sliding_window", FALSE, TRUE, &use_window, error) ||
        !read_int_from(doc, "sliding_window", 0, 0, &m->sliding_window, error) ||
        !read_window_layers(doc, &hf_names, m, TRUE, error) || !read_sparse_layers(doc, m, error) ||
        !read_hybrid(doc, m, error) ||
        !read_dropout(doc, hf_dropout_keys, 0, m, error) ||
        !json_string(doc, doc->root, "$", "model_type", FALSE, "", &type, error) ||
        !json_string(doc, doc->root, "$", act_key, FALSE, "gelu", &act, error) ||
        !json_bool(doc, doc->root, "$", "tie_word_embeddings", FALSE, TRUE, &m->tied_embeddings,
                   error) ||
        !json_string(doc, doc->root, "$", "_name_or_path", FALSE, NULL, &name, error))
        return FALSE;
    if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0) {
        m->mlp = MLP_SWIGLU;
    } else if (g_str_has_prefix(act, "gelu")) {
        m->mlp = MLP_GELU;
    } else if (strcmp(act, "relu2") == 0) {
        m->mlp = MLP_RELU2;
    } else {
        json_fail(error, doc, "$", act_key, cJSON_GetObjectItemCaseSensitive(doc->root, act_key),
                  "\"silu\", \"relu2\" or a \"gelu\" variant");
        return FALSE;
    }
    for (gsize i = 0; i < G_N_ELEMENTS(hf_model_types); i++)
        if (strcmp(type, hf_model_types[i].type) == 0) {
            m->qkv_bias = hf_model_types[i].qkv_bias;
            m->qk_norm = hf_model_types[i].qk_norm;
            m->mlp_bias |= hf_model_types[i].mlp_bias;
            m->router_bias = hf_model_types[i].router_bias;
            m->attention_sinks = hf_model_types[i].attention_sinks;
        }
    /* Llama's attention_bias puts a bias on Q, K, V and the output
     * projection, its mlp_bias on the three MLP projections (transformers'
     * modeling_llama.py) */
    m->qkv_bias |= attention_bias;
    m->out_bias = attention_bias;
    /* Qwen2's window only with use_sliding_window */
    if (!use_window)
        m->sliding_window = 0;
    if (!name) { /* made printable, as JSON names are checked to be */
        g_autofree char *file_name = hf_file_name(doc->path);
        name = ps_error_escape(file_name);
    }
    m->name = g_steal_pointer(&name);
    return TRUE;
}

/* Whether the model's sizes multiply to less than 2^53, so that every
 * product the simulator forms stays exact; the error names `where`. */
static gboolean check_products(const ModelSpec *m, const char *where, GError **error)
{
    /* 12 l h^2 dominates the parameter count */
    double h = m->hidden_size;
    double params =
        m->layers * (4.0 * h * h + 3.0 * h * m->ffn_hidden_size) + 2.0 * h * m->vocab_size;
    double scores = (double)m->seq_length * m->seq_length * m->attention_heads;
    if (params >= 9007199254740992.0 || scores >= 9007199254740992.0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: expected a model whose sizes multiply to less than 2^53, got %g "
                    "parameters and %g attention scores per sequence",
                    where, params, scores);
        return FALSE;
    }
    return TRUE;
}

/* Whether a hybrid model's layers can be built as Megatron-Core builds
 * them: Mamba-2's heads in whole groups (its MambaMixer asserts nheads %
 * ngroups == 0); a MoE layer only in a mixture of experts; plansim's
 * hybrid layers are RMSNorm and bias-free (Nemotron-H's), with no sliding
 * window. */
static gboolean check_hybrid(const JsonDoc *doc, const ModelSpec *m, GError **error)
{
    const cJSON *root = doc->root;
    const char *pattern = "hybrid_override_pattern";
    if (m->mamba_groups > 0 && m->mamba_heads % m->mamba_groups != 0) {
        json_fail(error, doc, "$", "n_groups", cJSON_GetObjectItemCaseSensitive(root, "n_groups"),
                  "a divisor of mamba_num_heads = %d", m->mamba_heads);
        return FALSE;
    }
    for (int i = 0; i < m->layers; i++)
        if (m->hybrid_layers[i] == HYBRID_MOE && m->experts <= 1) {
            json_fail(error, doc, "$", pattern, cJSON_GetObjectItemCaseSensitive(root, pattern),
                      "no E (MoE) at layer %d in a model without experts", i);
            return FALSE;
        }
    if (m->mlp == MLP_GELU) {
        json_fail(error, doc, "$", "mlp_hidden_act",
                  cJSON_GetObjectItemCaseSensitive(root, "mlp_hidden_act"),
                  "\"relu2\" or \"silu\" in a hybrid model (its layers are RMSNorm and "
                  "bias-free, not GPT's)");
        return FALSE;
    }
    if (m->sliding_window > 0) {
        json_fail(error, doc, "$", "sliding_window",
                  cJSON_GetObjectItemCaseSensitive(root, "sliding_window"),
                  "null in a hybrid model (plansim windows no hybrid attention layer)");
        return FALSE;
    }
    return TRUE;
}

static gboolean check_shape(const JsonDoc *doc, const ModelSpec *m, gboolean hf, GError **error)
{
    const ModelKeys *k = hf ? &hf_names : &plansim_names;
    const cJSON *root = doc->root;
    if (m->head_dim == 0 && m->hidden_size % m->attention_heads != 0) {
        json_fail(error, doc, "$", k->heads, cJSON_GetObjectItemCaseSensitive(root, k->heads),
                  "a divisor of %s = %d", k->hidden, m->hidden_size);
        return FALSE;
    }
    if (m->attention_heads % m->kv_heads != 0) {
        json_fail(error, doc, "$", k->kv_heads, cJSON_GetObjectItemCaseSensitive(root, k->kv_heads),
                  "a divisor of %s = %d", k->heads, m->attention_heads);
        return FALSE;
    }
    if (m->experts >= 1 && m->experts_per_token > m->experts) {
        json_fail(error, doc, "$", k->top_k, cJSON_GetObjectItemCaseSensitive(root, k->top_k),
                  "at most the experts, %d", m->experts);
        return FALSE;
    }
    if (m->experts >= 1 && (m->experts % m->router_groups != 0 ||
                            m->router_topk_groups > m->router_groups ||
                            (long long)m->router_topk_groups * (m->experts / m->router_groups) <
                                m->experts_per_token)) {
        const char *key = m->experts % m->router_groups != 0 ? k->groups : k->topk_groups;
        json_fail(error, doc, "$", key, cJSON_GetObjectItemCaseSensitive(root, key),
                  "%s dividing the experts, %d, and %s at most it, their experts holding the %d "
                  "a token takes",
                  k->groups, m->experts, k->topk_groups, m->experts_per_token);
        return FALSE;
    }
    if (m->first_dense_layers > m->layers) {
        json_fail(error, doc, "$", k->first_dense,
                  cJSON_GetObjectItemCaseSensitive(root, k->first_dense), "at most %s, %d",
                  k->layers, m->layers);
        return FALSE;
    }
    /* a dense plansim model with a mixture of experts' key is a mistake
     * (Hugging Face configs of dense models may carry them unused) */
    const char *moe_keys[] = {k->top_k,       k->shared,  k->expert_ffn,     k->frequency,
                              k->first_dense, k->groups, k->topk_groups, "router_bias"};
    for (gsize i = 0; !hf && m->experts <= 1 && i < G_N_ELEMENTS(moe_keys); i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, moe_keys[i]);
        if (item) {
            json_fail(error, doc, "$", moe_keys[i], item,
                      "no %s in a dense model (experts %d): give experts > 1 or remove it",
                      moe_keys[i], m->experts);
            return FALSE;
        }
    }
    if (m->hybrid_layers && !check_hybrid(doc, m, error))
        return FALSE;
    g_autofree char *where = g_strconcat(doc->path, ": $", NULL);
    return check_products(m, where, error);
}

ModelSpec *model_spec_load(const char *path, GError **error)
{
    gboolean from_max_positions;
    return model_spec_load_noting(path, &from_max_positions, error);
}

/* The model `doc` holds, in either format. */
static ModelSpec *model_of(const JsonDoc *doc, gboolean *from_max_positions, GError **error)
{
    g_autoptr(ModelSpec) m = g_new0(ModelSpec, 1);
    gboolean hf = cJSON_HasObjectItem(doc->root, "num_hidden_layers");
    *from_max_positions = hf;
    if (!(hf ? read_hugging_face(doc, m, error) : read_plansim(doc, m, error)) ||
        !check_shape(doc, m, hf, error))
        return NULL;
    return g_steal_pointer(&m);
}

ModelSpec *model_spec_load_noting(const char *path, gboolean *from_max_positions, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    return doc ? model_of(doc, from_max_positions, error) : NULL;
}

ModelSpec *model_spec_parse(const char *origin, const char *json, GError **error)
{
    gboolean from_max_positions;
    g_autoptr(JsonDoc) doc = json_doc_parse(origin, json, strlen(json), error);
    return doc ? model_of(doc, &from_max_positions, error) : NULL;
}

gboolean model_spec_set_seq_length(ModelSpec *model, const char *text, const char *origin,
                                   GError **error)
{
    double tokens = 0;
    if (!text_parse_count(text, TEXT_BINARY, TRUE, &tokens) ||
        !(tokens >= 1 && tokens <= G_MAXINT)) {
        g_autofree char *got = g_strdup_printf("\"%s\"", text);
        ps_error_value(error, origin, got, "a positive integer (tokens per sequence)%s",
                       text_suffixes_help(TEXT_BINARY));
        return FALSE;
    }
    model->seq_length = (int)tokens;
    return check_products(model, origin, error);
}

void model_spec_free(ModelSpec *model)
{
    if (!model)
        return;
    g_free(model->name);
    g_free(model->window_layers);
    g_free(model->hybrid_layers);
    g_free(model);
}
