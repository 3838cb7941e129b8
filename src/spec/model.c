/* model.c: model files, plansim's own format or a Hugging Face config.json.
 *
 * Invariant of a returned ModelSpec: every size is positive, the heads divide
 * the hidden size, the KV heads divide the heads, and the parameter count is
 * below 2^53 so that every product the simulator forms stays exact in a
 * double and in 64-bit integers. */
#include <string.h>

#include "spec/json.h"
#include "spec/spec.h"
#include "base/error.h"

static const char *const model_keys[] = {
    "name",       "layers",     "hidden_size", "attention_heads", "kv_heads", "ffn_hidden_size",
    "vocab_size", "seq_length", "mlp",         "tied_embeddings", NULL,
};

/* The key names of the two formats, in the order of ModelSpec's fields. */
typedef struct {
    const char *layers, *hidden, *heads, *kv_heads, *ffn, *vocab, *seq;
} ModelKeys;

static const ModelKeys plansim_names = {"layers",    "hidden_size",     "attention_heads",
                                        "kv_heads",  "ffn_hidden_size", "vocab_size",
                                        "seq_length"};
static const ModelKeys hf_names = {
    "num_hidden_layers", "hidden_size", "num_attention_heads",    "num_key_value_heads",
    "intermediate_size", "vocab_size",  "max_position_embeddings"};

static gboolean read_int(const JsonDoc *doc, const char *key, gboolean required, int fallback,
                         int *out, GError **error)
{
    long long v;
    if (!json_int(doc, doc->root, "$", key, required, 1, G_MAXINT, fallback, &v, error))
        return FALSE;
    *out = (int)v;
    return TRUE;
}

static gboolean read_sizes(const JsonDoc *doc, const ModelKeys *k, ModelSpec *m, GError **error)
{
    if (!read_int(doc, k->layers, TRUE, 0, &m->layers, error) ||
        !read_int(doc, k->hidden, TRUE, 0, &m->hidden_size, error) ||
        !read_int(doc, k->heads, TRUE, 0, &m->attention_heads, error) ||
        !read_int(doc, k->kv_heads, FALSE, m->attention_heads, &m->kv_heads, error) ||
        !read_int(doc, k->vocab, TRUE, 0, &m->vocab_size, error) ||
        !read_int(doc, k->seq, TRUE, 0, &m->seq_length, error))
        return FALSE;
    /* the FFN default needs the hidden size; 4h must not overflow an int */
    int ffn_default = m->hidden_size <= G_MAXINT / 4 ? 4 * m->hidden_size : G_MAXINT;
    return read_int(doc, k->ffn, FALSE, ffn_default, &m->ffn_hidden_size, error);
}

static gboolean read_plansim(const JsonDoc *doc, ModelSpec *m, GError **error)
{
    g_autofree char *mlp = NULL;
    if (!json_check_keys(doc, doc->root, "$", model_keys, error) ||
        !json_string(doc, doc->root, "$", "name", TRUE, NULL, &m->name, error) ||
        !read_sizes(doc, &plansim_names, m, error) ||
        !json_string(doc, doc->root, "$", "mlp", FALSE, "gelu", &mlp, error) ||
        !json_bool(doc, doc->root, "$", "tied_embeddings", FALSE, FALSE, &m->tied_embeddings,
                   error))
        return FALSE;
    if (strcmp(mlp, "gelu") == 0) {
        m->mlp = MLP_GELU;
    } else if (strcmp(mlp, "swiglu") == 0) {
        m->mlp = MLP_SWIGLU;
    } else {
        json_fail(error, doc, "$", "mlp", cJSON_GetObjectItemCaseSensitive(doc->root, "mlp"),
                  "\"gelu\" or \"swiglu\"");
        return FALSE;
    }
    return TRUE;
}

/* Hugging Face configs carry many keys plansim does not use: they are not
 * checked against a list. */
static gboolean read_hugging_face(const JsonDoc *doc, ModelSpec *m, GError **error)
{
    g_autofree char *act = NULL, *name = NULL;
    if (!read_sizes(doc, &hf_names, m, error) ||
        !json_string(doc, doc->root, "$", "hidden_act", FALSE, "gelu", &act, error) ||
        !json_bool(doc, doc->root, "$", "tie_word_embeddings", FALSE, TRUE, &m->tied_embeddings,
                   error) ||
        !json_string(doc, doc->root, "$", "_name_or_path", FALSE, NULL, &name, error))
        return FALSE;
    if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0) {
        m->mlp = MLP_SWIGLU;
    } else if (g_str_has_prefix(act, "gelu")) {
        m->mlp = MLP_GELU;
    } else {
        json_fail(error, doc, "$", "hidden_act",
                  cJSON_GetObjectItemCaseSensitive(doc->root, "hidden_act"),
                  "\"silu\" or a \"gelu\" variant");
        return FALSE;
    }
    if (!name) { /* the file's name, without its folder and ".json", made
                  * printable as JSON names are checked to be */
        g_autofree char *base = g_path_get_basename(doc->path);
        if (g_str_has_suffix(base, ".json"))
            base[strlen(base) - 5] = '\0';
        name = ps_error_escape(base);
    }
    m->name = g_steal_pointer(&name);
    return TRUE;
}

static gboolean check_shape(const JsonDoc *doc, const ModelSpec *m, gboolean hf, GError **error)
{
    const ModelKeys *k = hf ? &hf_names : &plansim_names;
    const cJSON *root = doc->root;
    if (m->hidden_size % m->attention_heads != 0) {
        json_fail(error, doc, "$", k->heads, cJSON_GetObjectItemCaseSensitive(root, k->heads),
                  "a divisor of %s = %d", k->hidden, m->hidden_size);
        return FALSE;
    }
    if (m->attention_heads % m->kv_heads != 0) {
        json_fail(error, doc, "$", k->kv_heads, cJSON_GetObjectItemCaseSensitive(root, k->kv_heads),
                  "a divisor of %s = %d", k->heads, m->attention_heads);
        return FALSE;
    }
    /* 12 l h^2 dominates the parameter count; keep every product exact */
    double h = m->hidden_size;
    double params =
        m->layers * (4.0 * h * h + 3.0 * h * m->ffn_hidden_size) + 2.0 * h * m->vocab_size;
    double scores = (double)m->seq_length * m->seq_length * m->attention_heads;
    if (params >= 9007199254740992.0 || scores >= 9007199254740992.0) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: $: expected a model whose sizes multiply to less than 2^53, got %g "
                    "parameters and %g attention scores per sequence",
                    doc->path, params, scores);
        return FALSE;
    }
    return TRUE;
}

ModelSpec *model_spec_load(const char *path, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    if (!doc)
        return NULL;
    g_autoptr(ModelSpec) m = g_new0(ModelSpec, 1);
    gboolean hf = cJSON_HasObjectItem(doc->root, "num_hidden_layers");
    if (!(hf ? read_hugging_face(doc, m, error) : read_plansim(doc, m, error)) ||
        !check_shape(doc, m, hf, error))
        return NULL;
    return g_steal_pointer(&m);
}

void model_spec_free(ModelSpec *model)
{
    if (!model)
        return;
    g_free(model->name);
    g_free(model);
}
