/* check_spec.c: every error path of the spec parser, and good files.
 *
 * Each bad case is a JSON text and the pieces its one-line error must
 * contain: the JSON path, the bad value, what was expected. */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "base/error.h"
#include "base/text.h"
#include "spec/pipeline_layout.h"

#define GOOD_MODEL                                                                                 \
    "{\"name\": \"m\", \"layers\": 2, \"hidden_size\": 64, \"attention_heads\": 4, "               \
    "\"vocab_size\": 100, \"seq_length\": 16"
/* A hybrid Hugging Face config of 4 layers but its pattern and its
 * groups, Mamba-2 mixers of 4 heads of 16 */
#define HYBRID_MODEL                                                                               \
    "{\"num_hidden_layers\": 4, \"hidden_size\": 64, \"num_attention_heads\": 4, "               \
    "\"vocab_size\": 100, \"max_position_embeddings\": 16, \"mlp_hidden_act\": \"relu2\", "      \
    "\"mamba_num_heads\": 4, \"mamba_head_dim\": 16, \"ssm_state_size\": 8, "                    \
    "\"conv_kernel\": 4, \"chunk_size\": 8, "
#define GOOD_GPU                                                                                   \
    "\"gpu\": {\"peak_tflops\": 100, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000}"
#define GOOD_LINKS                                                                                 \
    "\"intra_node\": {\"bandwidth_GBps\": 300}, \"inter_node\": {\"bandwidth_GBps\": 25}"
#define GOOD_CLUSTER                                                                               \
    "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " GOOD_GPU ", " GOOD_LINKS

typedef enum { MODEL, CLUSTER, PLAN } Kind;

typedef struct {
    Kind kind;
    const char *json;
    const char *expect[3]; /* substrings of the error message */
} BadCase;

static const BadCase bad[] = {
    {MODEL, "{\"name\": \"m\",", {"line 1, column", "malformed JSON"}},
    {MODEL, "[1, 2]", {"$: expected a JSON object", "[1,2]"}},
    /* a key given twice, both values valid: rejected, naming the key */
    {MODEL, GOOD_MODEL ", \"layers\": 4}", {"$.layers: key given twice"}},
    {MODEL,
     "{\"name\": \"m\", \"layers\": -3, \"hidden_size\": 64, \"attention_heads\": 4, "
     "\"vocab_size\": 100, \"seq_length\": 16}",
     {"$.layers", "expected an integer from 1 to 65536", "got -3"}},
    {MODEL,
     "{\"name\": \"m\", \"layers\": \"2\", \"hidden_size\": 64, \"attention_heads\": 4, "
     "\"vocab_size\": 100, \"seq_length\": 16}",
     {"$.layers", "got \"2\""}},
    {MODEL,
     "{\"name\": \"m\", \"layers\": 2.5, \"hidden_size\": 64, \"attention_heads\": 4, "
     "\"vocab_size\": 100, \"seq_length\": 16}",
     {"$.layers", "got 2.5"}},
    {MODEL,
     "{\"name\": \"m\", \"layers\": 2, \"attention_heads\": 4, \"vocab_size\": 100, "
     "\"seq_length\": 16}",
     {"$.hidden_size", "missing"}},
    {MODEL, GOOD_MODEL ", \"hiden\": 3}", {"$.hiden", "unknown key", "\"hidden_size\""}},
    {MODEL,
     "{\"name\": \"m\", \"layers\": 2, \"hidden_size\": 64, \"attention_heads\": 5, "
     "\"vocab_size\": 100, \"seq_length\": 16}",
     {"$.attention_heads", "a divisor of hidden_size = 64", "got 5"}},
    {MODEL, GOOD_MODEL ", \"kv_heads\": 3}", {"$.kv_heads", "a divisor of attention_heads"}},
    {MODEL, GOOD_MODEL ", \"vocab_size\": 200}", {"$.vocab_size: key given twice"}},
    {MODEL,
     "{\"name\": \"m\", \"layers\": 2, \"hidden_size\": 64, \"attention_heads\": 4, "
     "\"vocab_size\": 0, \"seq_length\": 16}",
     {"$.vocab_size", "expected a positive integer", "got 0"}},
    {MODEL,
     GOOD_MODEL ", \"mlp\": \"relu\"}",
     {"$.mlp", "one of \"gelu\", \"swiglu\", \"relu2\"", "\"relu\""}},
    {MODEL, GOOD_MODEL ", \"tied_embeddings\": 1}", {"$.tied_embeddings", "true or false"}},
    {MODEL,
     "{\"name\": \"m\", \"layers\": 65536, \"hidden_size\": 2000000000, "
     "\"attention_heads\": 1, \"vocab_size\": 100, \"seq_length\": 16}",
     {"2^53"}},
    /* MODEL_MAX_LAYERS */
    {MODEL,
     "{\"name\": \"m\", \"layers\": 65537, \"hidden_size\": 64, "
     "\"attention_heads\": 4, \"vocab_size\": 100, \"seq_length\": 16}",
     {"$.layers", "from 1 to 65536", "got 65537"}},
    {MODEL,
     "{\"name\": \"\", \"layers\": 2, \"hidden_size\": 64, \"attention_heads\": 4, "
     "\"vocab_size\": 100, \"seq_length\": 16}",
     {"$.name", "a non-empty string"}},
    {MODEL,
     "{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"vocab_size\": 100, \"max_position_embeddings\": 16, \"hidden_act\": \"tanh\"}",
     {"$.hidden_act", "\"tanh\""}},
    /* the windowed layers: a type a layer, of the two known */
    {MODEL,
     GOOD_MODEL ", \"layer_types\": [\"full_attention\"]}",
     {"$.layer_types", "a list of layers = 2 layer types", "[\"full_attention\"]"}},
    {MODEL,
     GOOD_MODEL ", \"layer_types\": [\"full_attention\", \"linear_attention\"]}",
     {"$.layer_types[1]", "\"full_attention\", \"sliding_attention\"", "\"linear_attention\""}},
    {MODEL, GOOD_MODEL ", \"router_bias\": true}", {"$.router_bias", "no router_bias in a dense"}},
    /* a hybrid pattern: a known symbol a layer, num_hidden_layers of them */
    {MODEL,
     HYBRID_MODEL "\"hybrid_override_pattern\": \"M-M\"}",
     {"$.hybrid_override_pattern", "num_hidden_layers = 4 symbols", "\"M-M\""}},
    {MODEL,
     HYBRID_MODEL "\"hybrid_override_pattern\": \"M-X-\"}",
     {"$.hybrid_override_pattern", "symbols of \"M*-E\"", "layer 2 being none"}},
    {MODEL,
     HYBRID_MODEL "\"hybrid_override_pattern\": \"M-E-\", \"n_groups\": 2}",
     {"$.hybrid_override_pattern", "no E (MoE) at layer 2"}},
    {MODEL,
     HYBRID_MODEL "\"hybrid_override_pattern\": \"M-*-\", \"n_groups\": 3}",
     {"$.n_groups", "a divisor of mamba_num_heads = 4", "got 3"}},
    {MODEL,
     "{\"num_hidden_layers\": 4, \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"vocab_size\": 100, \"max_position_embeddings\": 16, \"mlp_hidden_act\": \"relu2\", "
     "\"hybrid_override_pattern\": \"M-*-\"}",
     {"$.mamba_num_heads", "missing"}},
    /* Qwen's MoE layers: every layer, but the first ones dense */
    {MODEL,
     "{\"num_hidden_layers\": 4, \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"vocab_size\": 100, \"max_position_embeddings\": 16, \"num_experts\": 4, "
     "\"decoder_sparse_step\": 2}",
     {"$.decoder_sparse_step", "expected 1", "got 2"}},
    {MODEL,
     "{\"num_hidden_layers\": 4, \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"vocab_size\": 100, \"max_position_embeddings\": 16, \"num_experts\": 4, "
     "\"mlp_only_layers\": [0, 2]}",
     {"$.mlp_only_layers[1]", "expected 1 (plansim reads dense layers first", "got 2"}},
    {MODEL,
     "{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"vocab_size\": 100, \"max_position_embeddings\": 16, \"num_experts\": 4, "
     "\"mlp_only_layers\": [0, 1, 2]}",
     {"$.mlp_only_layers", "at most num_hidden_layers = 2"}},
    {CLUSTER, GOOD_CLUSTER ", \"nodes\": 3}", {"$.nodes: key given twice"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, \"gpu\": {\"peak_tflops\": "
     "100, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000, \"memory_GiB\": 80}, " GOOD_LINKS
     "}",
     {"$.gpu.memory_GiB: key given twice"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 0, \"gpus_per_node\": 4, " GOOD_GPU ", " GOOD_LINKS "}",
     {"$.nodes", "got 0"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, \"gpu\": {\"peak_tflops\": "
     "-1, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000}, " GOOD_LINKS "}",
     {"$.gpu.peak_tflops", "got -1"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, \"gpu\": {\"peak_tflops\": "
     "1, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000, \"compute_efficiency\": "
     "1.5}, " GOOD_LINKS "}",
     {"$.gpu.compute_efficiency", "from 0.01 to 1", "got 1.5"}},
    /* the runtime reserve: at most the memory */
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, \"gpu\": {\"peak_tflops\": "
     "1, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000, \"runtime_reserve_GiB\": "
     "90}, " GOOD_LINKS "}",
     {"$.gpu.runtime_reserve_GiB", "from 0 to 80", "got 90"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, \"gpu\": {\"peak_tflops\": "
     "1, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000, \"tflops\": 3}, " GOOD_LINKS "}",
     {"$.gpu.tflops", "unknown key"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " GOOD_GPU
     ", \"intra_node\": {\"bandwidth_GBps\": 300}}",
     {"$.inter_node", "expected an object", "got nothing"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " GOOD_GPU
     ", \"intra_node\": {\"bandwidth_GBps\": 300, \"latency_us\": -2}, "
     "\"inter_node\": {\"bandwidth_GBps\": 25}}",
     {"$.intra_node.latency_us", "got -2"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 1048576, \"gpus_per_node\": 8, " GOOD_GPU ", " GOOD_LINKS "}",
     {"$.nodes", "GPUs"}},
    {CLUSTER,
     GOOD_CLUSTER ", \"collective_algorithm\": \"butterfly\"}",
     {"$.collective_algorithm", "\"hierarchical\"", "got \"butterfly\""}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " GOOD_GPU
     ", \"intra_node\": {\"bandwidth_GBps\": 300}, \"inter_node\": {\"bandwidth_GBps\": "
     "25, \"oversubscription\": 0.5}}",
     {"$.inter_node.oversubscription", "a number from 1 to 1e+06", "got 0.5"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, \"gpu\": {\"peak_tflops\": "
     "1, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000, "
     "\"comm_compute_interference\": 1}, " GOOD_LINKS "}",
     {"$.gpu.comm_compute_interference", "from 0 to 0.95", "got 1"}},
/* the host path: its keys, each count with its bandwidth, within a node,
 * and only over a host link the GPU gives */
#define HOST_GPU                                                                                   \
    "\"gpu\": {\"peak_tflops\": 100, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2000, "        \
    "\"pcie_GBps\": 50}, " GOOD_LINKS
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " HOST_GPU
     ", \"host_path\": {\"gpus_per_switch\": 2}}",
     {"$.host_path.gpus_per_switch: expected switch_uplink_GBps beside it", "got 2"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " HOST_GPU
     ", \"host_path\": {\"gpus_per_cpu\": 8, \"cpu_memory_GBps\": 200}}",
     {"$.host_path.gpus_per_cpu", "an integer from 1 to 4", "got 8"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " HOST_GPU
     ", \"host_path\": {\"switch_uplink_GBps\": 0}}",
     {"$.host_path.switch_uplink_GBps", "got 0"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " HOST_GPU
     ", \"host_path\": {\"nic_shares_host_link\": 1}}",
     {"$.host_path.nic_shares_host_link", "true or false", "got 1"}},
    {CLUSTER,
     "{\"name\": \"c\", \"nodes\": 2, \"gpus_per_node\": 4, " HOST_GPU
     ", \"host_path\": {\"cpu_memory_gbps\": 200}}",
     {"$.host_path.cpu_memory_gbps", "unknown key", "\"cpu_memory_GBps\""}},
    {CLUSTER,
     GOOD_CLUSTER ", \"host_path\": {\"nic_shares_host_link\": true}}",
     {"$.host_path: expected no host path without the GPU's host link, gpu.pcie_GBps"}},
#undef HOST_GPU
    /* the calibration record: names of cluster_params.def, each listed once */
    {CLUSTER,
     GOOD_CLUSTER ", \"calibration\": {\"by\": \"me\", \"base\": \"b.json\", \"fitted\": "
                  "[\"gpu.gemm_sustained\", \"gpu.gemm_sustaned\"]}}",
     {"$.calibration.fitted[1]: expected a parameter calibrate fits, one of "
      "\"intra_node.efficiency\", \"intra_node.latency_us\", ",
      "\"gpu.memory_efficiency\", got \"gpu.gemm_sustaned\""}},
    {CLUSTER,
     GOOD_CLUSTER ", \"calibration\": {\"by\": \"me\", \"base\": \"b.json\", \"kept\": "
                  "[\"inter_node.efficiency\"], \"given\": [\"inter_node.efficiency\"]}}",
     {"$.calibration.given[0]", "listed once (it is in \"kept\" already)",
      "got \"inter_node.efficiency\""}},
    {CLUSTER,
     GOOD_CLUSTER ", \"calibration\": {\"by\": \"me\", \"base\": \"b.json\", \"fitted\": "
                  "\"gpu.gemm_sustained\"}}",
     {"$.calibration.fitted: expected a list of parameter names", "got \"gpu.gemm_sustained\""}},
    {CLUSTER,
     GOOD_CLUSTER ", \"calibration\": {\"by\": \"me\", \"base\": \"b.json\", \"given\": [3]}}",
     {"$.calibration.given[0]", "got 3"}},
    {CLUSTER,
     GOOD_CLUSTER ", \"calibration\": {\"base\": \"b.json\", \"fitted\": []}}",
     {"$.calibration.by: missing"}},
    {CLUSTER,
     GOOD_CLUSTER ", \"calibration\": {\"by\": \"me\", \"base\": \"b.json\", \"fited\": []}}",
     {"$.calibration.fited", "unknown key", "\"fitted\""}},
    {CLUSTER, GOOD_CLUSTER ", \"calibration\": [\"fitted\"]}", {"$.calibration", "object"}},
    {PLAN, "{\"tp\": 2, \"pp\": 2, \"tp\": 2}", {"$.tp: key given twice"}},
    {PLAN, "{\"collective_algorithm\": \"tree2\"}", {"$.collective_algorithm", "got \"tree2\""}},
    {PLAN, "{\"link_contention\": 0}", {"$.link_contention", "true or false"}},
    {PLAN, "{\"rank_order\": \"tp-pp\"}", {"$.rank_order", "\"pp-dp-tp\""}},
    {PLAN, "{\"layers_per_stage\": [4, -1]}", {"$.layers_per_stage", "integers from 0"}},
    /* an object where the list goes: libFuzzer found it overflowing */
    {PLAN,
     "{\"layers_per_stage\": {\"a\": [1, 3], \"b\": 2}}",
     {"$.layers_per_stage", "got {\"a\":[1,3],\"b\":2}"}},
    {PLAN, "{\"tp\": 0}", {"$.tp", "an integer from 1 to", "got 0"}},
    {PLAN, "{\"zero_stage\": 7}", {"$.zero_stage", "from 0 to 3 or \"fsdp\"", "got 7"}},
    {PLAN, "{\"zero_stage\": \"zero3\"}", {"$.zero_stage", "got \"zero3\""}},
    {PLAN, "{\"schedule\": \"zigzag\"}", {"$.schedule", "\"1f1b\"", "got \"zigzag\""}},
    {PLAN, "{\"micro_batch\": 2}", {"$.micro_batch", "unknown key", "\"micro_batch_size\""}},
    {PLAN, "{\"sequence_parallel\": \"yes\"}", {"$.sequence_parallel", "true or false"}},
    {PLAN, "{\"global_batch_size\": 1e300}", {"$.global_batch_size", "positive integer"}},
    {PLAN, "{\"dtype\": \"fp4\"}", {"$.dtype", "\"bf16\", \"fp8\"", "\"fp4\""}},
};

static GError *load(Kind kind, const char *json, char **path_out)
{
    char *path = test_write_tmp(json);
    GError *error = NULL;
    if (kind == MODEL) {
        model_spec_free(model_spec_load(path, &error));
    } else if (kind == CLUSTER) {
        cluster_spec_free(cluster_spec_load(path, 0, &error));
    } else {
        PlanSpec *plan = plan_spec_new();
        plan_spec_load(plan, path, &error);
        plan_spec_free(plan);
    }
    *path_out = path;
    return error;
}

START_TEST(bad_input_names_path_value_and_expectation)
{
    const BadCase *c = &bad[_i];
    char *path;
    GError *error = load(c->kind, c->json, &path);
    ck_assert_msg(error != NULL, "case %d accepted: %s", _i, c->json);
    ck_assert(g_error_matches(error, PS_ERROR, PS_ERROR_INPUT));
    /* one line, starting with the file */
    ck_assert_ptr_null(strchr(error->message, '\n'));
    ck_assert_msg(g_str_has_prefix(error->message, path), "no file in: %s", error->message);
    for (int k = 0; k < 3 && c->expect[k]; k++)
        ck_assert_msg(strstr(error->message, c->expect[k]), "case %d: \"%s\" lacks \"%s\"", _i,
                      error->message, c->expect[k]);
    g_error_free(error);
    test_remove(path);
}
END_TEST

/* Every shipped model, plan and cluster loads, each found in its folder:
 * a model's name is its file's; --nodes overrides a cluster's nodes. */
START_TEST(shipped_files_load)
{
    g_autoptr(GPtrArray) models = test_shipped_files("models");
    for (guint i = 0; i < models->len; i++) {
        const char *file = models->pdata[i];
        ModelSpec *m = test_shipped_model("models", file);
        ck_assert_int_eq(strlen(m->name) + 5, strlen(file));
        ck_assert(g_str_has_prefix(file, m->name));
        model_spec_free(m);
    }
    g_autoptr(GPtrArray) plans = test_shipped_files("plans");
    for (guint i = 0; i < plans->len; i++) {
        g_autofree char *path = test_shipped("plans", plans->pdata[i]);
        PlanSpec *plan = plan_spec_new();
        GError *error = NULL;
        ck_assert_msg(plan_spec_load(plan, path, &error), "%s", error ? error->message : "");
        plan_spec_free(plan);
    }
    g_autoptr(GPtrArray) clusters = test_shipped_files("topologies");
    for (guint i = 0; i < clusters->len; i++) {
        ClusterSpec *c = test_shipped_cluster(clusters->pdata[i], 3);
        ck_assert_int_eq(c->nodes, 3); /* --nodes overrides */
        cluster_spec_free(c);
    }
    ck_assert_uint_ge(models->len * plans->len * clusters->len, 1);
}
END_TEST

/* Hugging Face names map onto plansim's; silu means SwiGLU. */
START_TEST(hugging_face_config)
{
    char *path = test_write_tmp(
        "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_act\": \"silu\", \"hidden_size\": "
        "4096, \"intermediate_size\": 11008, \"max_position_embeddings\": 4096, "
        "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8, "
        "\"tie_word_embeddings\": false, \"vocab_size\": 32000, \"rms_norm_eps\": 1e-05}");
    GError *error = NULL;
    ModelSpec *m = model_spec_load(path, &error);
    ck_assert_msg(m, "%s", error ? error->message : "");
    ck_assert_int_eq(m->layers, 32);
    ck_assert_int_eq(m->kv_heads, 8);
    ck_assert_int_eq(m->ffn_hidden_size, 11008);
    ck_assert_int_eq(m->seq_length, 4096);
    ck_assert_int_eq(m->mlp, MLP_SWIGLU);
    ck_assert(!m->tied_embeddings);
    model_spec_free(m);
    test_remove(path);
}
END_TEST

START_TEST(defaults_and_units)
{
    char *path = test_write_tmp(GOOD_CLUSTER "}");
    ClusterSpec *c = cluster_spec_load(path, 0, NULL);
    ck_assert_ptr_nonnull(c);
    ck_assert_double_eq(c->gpu.peak_flops, 100e12);                /* TFLOPS */
    ck_assert_double_eq(c->gpu.memory_bytes, 80.0 * 1073741824.0); /* GiB */
    ck_assert_double_eq(c->inter.bandwidth_Bps, 25e9);             /* GB = 1e9 */
    ck_assert_double_eq(c->gpu.compute_efficiency, 1);
    ck_assert_int_eq(c->nics_per_node, 4);
    cluster_spec_free(c);
    test_remove(path);
    path = test_write_tmp(GOOD_MODEL "}");
    ModelSpec *m = model_spec_load(path, NULL);
    ck_assert_int_eq(m->kv_heads, 4);          /* default: attention_heads */
    ck_assert_int_eq(m->ffn_hidden_size, 256); /* default: 4 h */
    model_spec_free(m);
    test_remove(path);
}
END_TEST

/* A cluster file's calibration record: read into the states its lists
 * say (a name in no list unlisted), written last with each list in
 * cluster_params.def's order (intra_node's efficiency before inter_node's,
 * though the file lists them the other way; an absent list written
 * empty), then read and written again byte for byte; copied with the
 * cluster; and nothing else of the cluster differs from the same file
 * without it, so that no simulation sees it. */
START_TEST(calibration_record_round_trip)
{
    char *plain_path = test_write_tmp(GOOD_CLUSTER "}");
    char *path = test_write_tmp(
        GOOD_CLUSTER ", \"calibration\": {\"by\": \"plansim calibrate\", \"base\": \"b.json\", "
                     "\"fitted\": [\"inter_node.efficiency\", \"intra_node.efficiency\"], "
                     "\"kept\": [\"inter_node.tree_efficiency\"]}}");
    GError *error = NULL;
    g_autoptr(ClusterSpec) plain = cluster_spec_load(plain_path, 0, &error);
    g_autoptr(ClusterSpec) c = cluster_spec_load(path, 0, &error);
    ck_assert_msg(plain && c, "%s", error ? error->message : "");
    const ClusterCalibration *r = c->calibration;
    ck_assert_ptr_null(plain->calibration);
    ck_assert_str_eq(r->by, "plansim calibrate");
    ck_assert_str_eq(r->base, "b.json");
    for (int p = 0; p < CLUSTER_N_PARAMS; p++) {
        ParamState expected =
            p == CLUSTER_PARAM_INTRA_EFFICIENCY || p == CLUSTER_PARAM_INTER_EFFICIENCY
                ? PARAM_FITTED
            : p == CLUSTER_PARAM_TREE_EFFICIENCY ? PARAM_KEPT
                                                 : PARAM_UNLISTED;
        ck_assert_msg(r->state[p] == expected, "%s", cluster_param_names[p]);
    }
    g_autofree char *json = cluster_spec_json(c);
    const char *record = strstr(json, "\"calibration\"");
    ck_assert_msg(record && record > strstr(json, "\"oversubscription\""), "%s", json);
    ck_assert_ptr_nonnull(
        strstr(record, "\"fitted\": [\"intra_node.efficiency\", \"inter_node.efficiency\"]"));
    ck_assert_ptr_nonnull(strstr(record, "\"kept\": [\"inter_node.tree_efficiency\"]"));
    ck_assert_ptr_nonnull(strstr(record, "\"given\": []\n  }\n}\n"));
    char *again_path = test_write_tmp(json);
    g_autoptr(ClusterSpec) again = cluster_spec_load(again_path, 0, &error);
    ck_assert_msg(again, "%s", error ? error->message : "");
    g_autofree char *json_again = cluster_spec_json(again);
    ck_assert_str_eq(json_again, json);
    g_autoptr(ClusterSpec) copy = cluster_spec_copy(c);
    ck_assert(copy->calibration != r && copy->calibration->base != r->base);
    ck_assert_str_eq(copy->calibration->base, "b.json");
    ck_assert(memcmp(copy->calibration->state, r->state, sizeof r->state) == 0);
    ClusterSpec x = *plain, y = *c;
    x.path = y.path = x.name = y.name = x.gpu.name = y.gpu.name = NULL;
    y.calibration = NULL;
    ck_assert(memcmp(&x, &y, sizeof x) == 0);
    test_remove(plain_path);
    test_remove(path);
    test_remove(again_path);
}
END_TEST

/* Flags are validated like file values and name the flag. */
START_TEST(flags_and_resolution)
{
    PlanSpec *plan = plan_spec_new();
    GError *error = NULL;
    ck_assert(!plan_spec_set(plan, PLAN_TP, "abc", "--tp", &error));
    ck_assert_str_eq(error->message, "--tp: expected an integer from 1 to 1048576, got \"abc\"");
    g_clear_error(&error);
    ck_assert(plan_spec_set(plan, PLAN_ZERO_STAGE, "fsdp", "--zero-stage", NULL));
    ck_assert_int_eq(plan->zero_stage, 3); /* FSDP is ZeRO stage 3 */
    ck_assert(!plan_spec_set(plan, PLAN_RECOMPUTE, "some", "--recompute", &error));
    ck_assert_ptr_nonnull(strstr(error->message, "\"selective\""));
    g_clear_error(&error);

    ModelSpec *m = test_gpt(2, 64, 4, 100, 16);
    ClusterSpec *c = test_cluster(2, 4, 1e9, 1e9);
    ck_assert(plan_spec_set(plan, PLAN_MICRO_BATCH_SIZE, "4", "--micro-batch-size", NULL));
    ck_assert(plan_spec_set(plan, PLAN_GLOBAL_BATCH_SIZE, "100", "--global-batch-size", NULL));
    ck_assert(!plan_spec_resolve(plan, m, c, &error));
    ck_assert_str_eq(error->message, "--global-batch-size: expected a multiple of "
                                     "micro_batch_size x dp = 4 x 8 = 32, got 100");
    g_clear_error(&error);
    ck_assert(plan_spec_set(plan, PLAN_GLOBAL_BATCH_SIZE, "64", "--global-batch-size", NULL));
    ck_assert(plan_spec_resolve(plan, m, c, NULL));
    ck_assert_int_eq(plan->dp, 8); /* GPUs / (tp x pp) */
    ck_assert_int_eq(plan_spec_micro_batches(plan), 2);

    PlanSpec *big = plan_spec_new();
    ck_assert(plan_spec_set(big, PLAN_DP, "9", "--dp", NULL));
    ck_assert(!plan_spec_resolve(big, m, c, &error));
    /* 9 GPUs at 4 a node: 3 nodes */
    ck_assert_str_eq(error->message, "--dp: expected tp 1 x pp 1 x dp 9 = 9 at most the "
                                     "cluster's 8 GPUs (try --nodes 3: 12 GPUs), got 9");
    g_clear_error(&error);
    plan_spec_free(big);
    plan_spec_free(plan);
    model_spec_free(m);
    cluster_spec_free(c);
}
END_TEST

/* Layers that pp x virtual_stages do not divide: as even a split as can
 * be, the middle chunks holding the extra layers and the first and last
 * (embedding, head) fewer, as Llama 3 405B trains (126 layers on 16
 * stages: 7 + 14 x 8 + 7; Dubey et al. 2024, section 3.3.2). */
START_TEST(uneven_layers_go_to_the_middle_stages)
{
    static const struct {
        int layers, pp, v;
        int expected[24];
    } cases[] = {
        {126, 16, 1, {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}},
        {10, 4, 1, {2, 3, 3, 2}},
        {4, 3, 1, {1, 2, 1}},
        {5, 2, 1, {3, 2}},       /* two chunks: the head's holds fewer */
        {7, 4, 1, {2, 2, 2, 1}}, /* every chunk but one has one more */
        {10, 2, 3, {1, 2, 2, 2, 2, 1}},
        {80, 24, 1, {3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}},
    };
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        ModelSpec *m = test_gpt(cases[k].layers, 64, 4, 100, 16);
        ClusterSpec *c = test_cluster(1, cases[k].pp, 1e9, 1e9);
        PlanSpec *plan = plan_spec_new();
        plan->pp = cases[k].pp;
        plan->virtual_stages = cases[k].v;
        plan->schedule = cases[k].v > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        plan->global_batch_size = cases[k].pp;
        test_resolve(plan, m, c);
        int chunks = cases[k].pp * cases[k].v, sum = 0;
        ck_assert_int_eq(plan->layers_per_stage.n, chunks);
        for (int i = 0; i < chunks; i++) {
            ck_assert_msg(plan->layers_per_stage.v[i] == cases[k].expected[i],
                          "%d layers on %d chunks: chunk %d holds %d, expected %d", cases[k].layers,
                          chunks, i, plan->layers_per_stage.v[i], cases[k].expected[i]);
            sum += plan->layers_per_stage.v[i];
        }
        ck_assert_int_eq(sum, cases[k].layers);
        plan_spec_free(plan);
        cluster_spec_free(c);
        model_spec_free(m);
    }
}
END_TEST

/* Megatron-Core's own splits (its get_transformer_layer_offset), by hand
 * on 126 layers (Llama 3 405B) and 16 stages:
 *   - the embedding and the loss counted as layers: 128 over the chunks,
 *     the first chunk one fewer, the last one fewer. 16 x 8 chunks hold one
 *     each, the first and the last none (GB200's Llama 3.1 405B plans, PP
 *     16 x VP 8, Megatron-Bridge); 16 x 1 hold 8, the first and last 7;
 *     the loss alone, 127 over 127 chunks? no: 127 over 16 is refused;
 *   - the first stage's layers given, 6: the other 120 over 15 stages, 8;
 *     first 8 and last 6 with 2 chunks a stage: 4 + 4, 3 + 3, and the
 *     middle 112 / 14 = 8 as 4 + 4, chunk c of stage s at c x 16 + s. */
START_TEST(megatron_layer_splits)
{
    static const struct {
        int v, first, last;
        gboolean embedding, loss;
        int stage0[8], stage1[8], stage15[8]; /* each stage's chunks */
    } cases[] = {
        {.v = 8,
         .embedding = TRUE,
         .loss = TRUE,
         .stage0 = {0, 1, 1, 1, 1, 1, 1, 1},
         .stage1 = {1, 1, 1, 1, 1, 1, 1, 1},
         .stage15 = {1, 1, 1, 1, 1, 1, 1, 0}},
        {.v = 1, .embedding = TRUE, .loss = TRUE, .stage0 = {7}, .stage1 = {8}, .stage15 = {7}},
        {.v = 1, .first = 6, .stage0 = {6}, .stage1 = {8}, .stage15 = {8}},
        {.v = 2, .first = 8, .last = 6, .stage0 = {4, 4}, .stage1 = {4, 4}, .stage15 = {3, 3}},
    };
    ModelSpec *m = test_gpt(126, 64, 4, 100, 16);
    ClusterSpec *c = test_cluster(16, 1, 1e9, 1e9);
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        PlanSpec *plan = plan_spec_new();
        plan->pp = 16;
        plan->virtual_stages = cases[k].v;
        plan->schedule = cases[k].v > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        plan->global_batch_size = 16;
        plan->decoder_first_pipeline_num_layers = cases[k].first;
        plan->decoder_last_pipeline_num_layers = cases[k].last;
        plan->account_for_embedding_in_pipeline_split = cases[k].embedding;
        plan->account_for_loss_in_pipeline_split = cases[k].loss;
        test_resolve(plan, m, c);
        ck_assert_int_eq(plan->layers_per_stage.n, 16 * cases[k].v);
        int sum = 0;
        for (int i = 0; i < plan->layers_per_stage.n; i++)
            sum += plan->layers_per_stage.v[i];
        ck_assert_int_eq(sum, 126);
        for (int chunk = 0; chunk < cases[k].v; chunk++) {
            const int *v = plan->layers_per_stage.v;
            ck_assert_msg(v[chunk * 16] == cases[k].stage0[chunk] &&
                              v[chunk * 16 + 1] == cases[k].stage1[chunk] &&
                              v[chunk * 16 + 15] == cases[k].stage15[chunk],
                          "case %d chunk %d: stages 0, 1, 15 hold %d, %d, %d", (int)k, chunk,
                          v[chunk * 16], v[chunk * 16 + 1], v[chunk * 16 + 15]);
        }
        plan_spec_free(plan);
    }
    cluster_spec_free(c);
    model_spec_free(m);
}
END_TEST

/* Checks that `plan` (freed) does not resolve, with `message` in the
 * error of case `k`. */
static void resolve_refused(PlanSpec *plan, ModelSpec *m, ClusterSpec *c, const char *message,
                            int k)
{
    GError *error = NULL;
    ck_assert(!plan_spec_resolve(plan, m, c, &error));
    ck_assert_msg(strstr(error->message, message), "case %d: %s", k, error->message);
    g_clear_error(&error);
    plan_spec_free(plan);
}

/* What Megatron-Core refuses, each in one line naming the field: layers
 * counted with the loss (127) that 16 x 4 chunks do not divide; the first
 * stage's layers beside the counted embedding; a first stage of 7 layers
 * over 2 chunks; 6 + 6 leaving 114 for 14 stages; a first stage with pp 1. */
START_TEST(megatron_layer_splits_refused)
{
    static const struct {
        int pp, v, first, last;
        gboolean embedding, loss;
        const char *message;
    } cases[] = {
        {.pp = 16,
         .v = 4,
         .loss = TRUE,
         .message = "pp: expected pp x virtual_stages dividing the 127 layers counted"},
        {.pp = 16,
         .v = 1,
         .first = 6,
         .embedding = TRUE,
         .message = "decoder_first_pipeline_num_layers: expected not set with "
                    "account_for_embedding_in_pipeline_split"},
        {.pp = 16,
         .v = 2,
         .first = 7,
         .last = 7,
         .message = "decoder_first_pipeline_num_layers: expected a number of layers at the first "
                    "stage (7) divisible by virtual_stages 2"},
        {.pp = 16,
         .v = 1,
         .first = 6,
         .last = 6,
         .message = "(114) an equal share on each of the 14 other stages"},
        {.pp = 1, .v = 1, .first = 6, .message = "set only with pp at least 2 (pp = 1)"},
    };
    ModelSpec *m = test_gpt(126, 64, 4, 100, 16);
    ClusterSpec *c = test_cluster(16, 1, 1e9, 1e9);
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        PlanSpec *plan = plan_spec_new();
        plan->pp = cases[k].pp;
        plan->virtual_stages = cases[k].v;
        plan->schedule = cases[k].v > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        plan->decoder_first_pipeline_num_layers = cases[k].first;
        plan->decoder_last_pipeline_num_layers = cases[k].last;
        plan->account_for_embedding_in_pipeline_split = cases[k].embedding;
        plan->account_for_loss_in_pipeline_split = cases[k].loss;
        resolve_refused(plan, m, c, cases[k].message, (int)k);
    }
    cluster_spec_free(c);
    model_spec_free(m);
}
END_TEST

/* Megatron-Core's layout strings, read by hand from its rules
 * (pipeline_parallel_layer_layout.py's docs): "(...)*N" and "x*N" unrolled,
 * commas dropped, chunks split by '|'. "Et*3|(tt|)*29,m|L" is the
 * DeepSeek-V3 example of Megatron's docs, its MTP layer m in the last chunk
 * but one: Ettt, 29 x tt, m, L = chunks of 3, 29 x 2, 1 and 0 layers (62,
 * of them 1 MTP layer); "E|t*3|(t|)*5mL" its multi_token_prediction.md's,
 * MTP in the last chunk: 0, 3, 5 x 1, 1 (9, 1 MTP). Each list written
 * back reads back the same. */
START_TEST(pipeline_layout_strings)
{
    static const struct {
        const char *text, *written;
        int n, chunks[8]; /* the first chunks */
        long long layers;
        int mtp;
    } cases[] = {
        {"Et*3|(tt|)*29,t|L", "Et*3|(t*2|)*29,t|L", 32, {3, 2, 2, 2}, 62, 0},
        {"Et*3|(tt|)*29,m|L", "Et*3|(t*2|)*29,m|L", 32, {3, 2, 2, 2}, 62, 1},
        {"E|t*3|(t|)*5mL", "E|t*3|(t|)*5,mL", 8, {0, 3, 1, 1}, 9, 1},
        {"E|t|tm*2|L", "E|t|tm*2|L", 4, {0, 1, 3, 0}, 4, 2},
        {"E|(t|)*126,L", "E|(t|)*126,L", 128, {0, 1, 1, 1}, 126, 0},
        {"EtttL", "Et*3L", 1, {3}, 3, 0},
        {"Et,t|t*0|t*2|L", "Et*2||t*2|L", 4, {2, 0, 2, 0}, 4, 0},
        {"E(t)*1000000|L", "Et*1000000|L", 2, {1000000, 0}, 1000000, 0},
        {"E||t|L", "E||t|L", 4, {0, 0, 1, 0}, 1, 0},
    };
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        int *chunks, n, mtp;
        char *why = NULL;
        ck_assert_msg(pipeline_layout_parse(cases[k].text, &chunks, &n, &mtp, &why), "%s: %s",
                      cases[k].text, why);
        ck_assert_int_eq(n, cases[k].n);
        ck_assert_int_eq(mtp, cases[k].mtp);
        long long layers = 0;
        for (int i = 0; i < n; i++)
            layers += chunks[i];
        ck_assert_int_eq(layers, cases[k].layers);
        for (int i = 0; i < MIN(n, 4); i++)
            ck_assert_int_eq(chunks[i], cases[k].chunks[i]);
        g_autofree char *written = pipeline_layout_text(chunks, n, mtp);
        ck_assert_str_eq(written, cases[k].written);
        int *again, m, mtp_again;
        ck_assert(pipeline_layout_parse(written, &again, &m, &mtp_again, &why));
        ck_assert_int_eq(m, n);
        ck_assert_int_eq(mtp_again, mtp);
        ck_assert(memcmp(again, chunks, sizeof(int) * (gsize)n) == 0);
        g_free(again);
        g_free(chunks);
    }
    static const struct {
        const char *text, *why;
    } refused[] = {
        {"E|m|t|L", "every transformer layer t before the multi-token-prediction layers m"},
        {"E|t(tm)*2|L", "every transformer layer t before the multi-token-prediction layers m"},
        {"E|tm|m|L", "the multi-token-prediction layers m all in one chunk"},
        {"tE|L", "the embedding E once, first in the first chunk"},
        {"|Et|L", "the embedding E once, first in the first chunk"},
        {"E|(E|)*2,L", "the embedding E once"},
        {"E|t|L|", "nothing after the loss L"},
        {"E|t", "the loss L last in the last chunk"},
        {"t|L", "the embedding E first in the first chunk"},
        {"E|(t|*2L", "a ')' closing each '('"},
        {"E|(t|)L", "a count after each run"},
        {"E(t(t))*2L", "no '(' inside another"},
        {"Et**2L", "a count after '*'"},
        {"Et x|L", "a character of E, t, m, L, |, *, ( and ), got ' '"},
        {"E(t|)*4000000000L", "a count of at most"},
        {"E(|)*2000000L", "at most 1048576 chunks"},
        {"E(t*2000000000)*2L", "at most 2147483647 transformer layers"},
    };
    for (gsize k = 0; k < G_N_ELEMENTS(refused); k++) {
        int *chunks = NULL, n = 0, mtp = 0;
        g_autofree char *why = NULL;
        ck_assert_msg(!pipeline_layout_parse(refused[k].text, &chunks, &n, &mtp, &why), "%s",
                      refused[k].text);
        ck_assert_msg(strstr(why, refused[k].why), "%s: %s", refused[k].text, why);
    }
}
END_TEST

/* A layer split no field says (the even split's, uneven) is written out
 * as the layout flag that makes it, so that Megatron-Core runs the plan
 * as plansim did (issue 37): 10 layers on 4 stages split 2, 3, 3, 2 (the
 * first and last fewer), "E" and "L" around them; read back, that layout
 * gives the same chunks. 8 layers on 4 stages split evenly, and 10 split
 * by the first and last stages' counts (2 and 2, the middle 3 each) say
 * their split already: no layout. */
START_TEST(uneven_split_written_as_layout)
{
    ClusterSpec *c = test_cluster(4, 1, 1e9, 1e9);
    static const struct {
        int layers, first, last;
        const char *layout;
    } cases[] = {{10, 0, 0, "Et*2|(t*3|)*2,t*2L"}, {8, 0, 0, NULL}, {10, 2, 2, NULL}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        ModelSpec *m = test_gpt(cases[i].layers, 64, 4, 100, 16);
        PlanSpec *plan = plan_spec_new();
        plan->pp = 4;
        plan->global_batch_size = 8;
        plan->decoder_first_pipeline_num_layers = cases[i].first;
        plan->decoder_last_pipeline_num_layers = cases[i].last;
        test_resolve(plan, m, c);
        g_autofree char *flags = plan_spec_flags(plan);
        const char *at = strstr(flags, "--pipeline-model-parallel-layout");
        if (!cases[i].layout) {
            ck_assert_msg(!at, "%s", flags);
        } else {
            g_autofree char *want =
                g_strdup_printf("--pipeline-model-parallel-layout '%s'", cases[i].layout);
            ck_assert_msg(at && strcmp(at, want) == 0, "%s", flags);
            int *chunks, n, mtp;
            char *why = NULL;
            ck_assert(pipeline_layout_parse(cases[i].layout, &chunks, &n, &mtp, &why));
            ck_assert_int_eq(n, plan->layers_per_stage.n);
            for (int g = 0; g < n; g++)
                ck_assert_int_eq(chunks[g], plan->layers_per_stage.v[g]);
            g_free(chunks);
        }
        plan_spec_free(plan);
        model_spec_free(m);
    }
    cluster_spec_free(c);
}
END_TEST

/* A layout resolved: its chunks become layers_per_stage, virtual_stages
 * its chunks / pp and the schedule interleaved when none is given; and
 * what Megatron-Core refuses of it, each in one line naming its field. */
START_TEST(pipeline_layout_resolved)
{
    ModelSpec *m = test_gpt(62, 64, 4, 100, 16);
    ClusterSpec *c = test_cluster(16, 1, 1e9, 1e9);
    PlanSpec *plan = plan_spec_new();
    plan->pp = 16;
    plan->global_batch_size = 32;
    GError *error = NULL;
    ck_assert(plan_spec_set(plan, PLAN_LAYOUT, "Et*3|(tt|)*29,t|L", "--layout", &error));
    test_resolve(plan, m, c);
    ck_assert_int_eq(plan->virtual_stages, 2);
    ck_assert_int_eq(plan->schedule, SCHEDULE_INTERLEAVED);
    ck_assert_int_eq(plan->layers_per_stage.n, 32);
    ck_assert_int_eq(plan->layers_per_stage.v[0], 3);  /* stage 0's first chunk */
    ck_assert_int_eq(plan->layers_per_stage.v[16], 2); /* stage 0's second */
    ck_assert_int_eq(plan->layers_per_stage.v[30], 1); /* stage 14's second */
    ck_assert_int_eq(plan->layers_per_stage.v[31], 0); /* stage 15's second: the loss */
    g_autofree char *flags = plan_spec_flags(plan);
    ck_assert(strstr(flags, "--pipeline-model-parallel-layout 'Et*3|(t*2|)*29,t|L'"));
    plan_spec_free(plan);
    static const struct {
        const char *layout, *flag, *value, *message;
    } cases[] = {
        {"E|t*61|L", NULL, NULL,
         "pipeline_model_parallel_layout: expected a number of chunks divisible by pp = 16"},
        {"E|(t|)*30,t*31L", NULL, NULL,
         "pipeline_model_parallel_layout: expected the model's 62 transformer layers t "
         "(Megatron-Core's rule; it has 61)"},
        {"Et*3|(tt|)*29,t|L", "--virtual-stages", "4",
         "--virtual-stages: expected the layout's chunks over pp, 32 / 16 = 2"},
        {"Et*3|(tt|)*29,t|L", "--decoder-first-pipeline-num-layers", "4",
         "--decoder-first-pipeline-num-layers: expected not set with "
         "pipeline_model_parallel_layout"},
        {"Et*3|(tt|)*29,t|L", "--layers-per-stage", "31,31",
         "--layers-per-stage: expected not set"},
    };
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        plan = plan_spec_new();
        plan->pp = 16;
        plan->global_batch_size = 32;
        ck_assert(plan_spec_set(plan, PLAN_LAYOUT, cases[k].layout, NULL, &error));
        for (int f = 0; cases[k].flag && f < PLAN_N_FIELDS; f++) {
            g_autofree char *flag = g_strconcat("--", plan_fields[f].flag, NULL);
            if (strcmp(flag, cases[k].flag) == 0)
                ck_assert(plan_spec_set(plan, (PlanField)f, cases[k].value, flag, &error));
        }
        resolve_refused(plan, m, c, cases[k].message, (int)k);
    }
    cluster_spec_free(c);
    model_spec_free(m);
}
END_TEST

/* Counts and sizes (text_parse_count), by hand: suffixes in either case,
 * powers of ten for token totals and of two otherwise; whole numbers
 * without a fraction unless a suffix scales them. */
START_TEST(counts_and_sizes)
{
    static const struct {
        const char *text;
        TextSuffixes suffixes;
        gboolean whole;
        double value; /* NAN: refused */
    } cases[] = {
        {"2T", TEXT_DECIMAL, FALSE, 2e12},    {"2t", TEXT_DECIMAL, FALSE, 2e12},
        {"1.5b", TEXT_DECIMAL, FALSE, 1.5e9}, {"300e9", TEXT_DECIMAL, FALSE, 3e11},
        {"2X", TEXT_DECIMAL, FALSE, NAN},     {"128k", TEXT_BINARY, TRUE, 131072},
        {"4K", TEXT_BINARY, TRUE, 4096},      {"1.5k", TEXT_BINARY, TRUE, 1536},
        {"4096", TEXT_BINARY, TRUE, 4096},    {"4096.0", TEXT_BINARY, TRUE, NAN},
        {"4e3", TEXT_BINARY, TRUE, NAN},      {"1.1k", TEXT_BINARY, TRUE, NAN},
        {"1b", TEXT_BINARY, FALSE, NAN},      {"1T", TEXT_BINARY, FALSE, 1099511627776.0},
        {"4k", TEXT_PLAIN, FALSE, NAN},       {"k", TEXT_BINARY, FALSE, NAN},
        {"2.5", TEXT_PLAIN, FALSE, 2.5},      {"1e308k", TEXT_BINARY, FALSE, NAN},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        double v = -1;
        gboolean ok = text_parse_count(cases[i].text, cases[i].suffixes, cases[i].whole, &v);
        ck_assert_msg(ok == !isnan(cases[i].value), "%s: %s", cases[i].text,
                      ok ? "read" : "refused");
        if (ok)
            ck_assert_double_eq(v, cases[i].value);
        else
            ck_assert_double_eq(v, -1); /* untouched */
    }
}
END_TEST

Suite *suite_spec(void)
{
    Suite *s = suite_create("spec");
    TCase *tc = tcase_create("parse");
    tcase_add_loop_test(tc, bad_input_names_path_value_and_expectation, 0, G_N_ELEMENTS(bad));
    tcase_add_test(tc, shipped_files_load);
    tcase_add_test(tc, hugging_face_config);
    tcase_add_test(tc, defaults_and_units);
    tcase_add_test(tc, calibration_record_round_trip);
    tcase_add_test(tc, flags_and_resolution);
    tcase_add_test(tc, uneven_layers_go_to_the_middle_stages);
    tcase_add_test(tc, megatron_layer_splits);
    tcase_add_test(tc, megatron_layer_splits_refused);
    tcase_add_test(tc, pipeline_layout_strings);
    tcase_add_test(tc, pipeline_layout_resolved);
    tcase_add_test(tc, uneven_split_written_as_layout);
    tcase_add_test(tc, counts_and_sizes);
    suite_add_tcase(s, tc);
    return s;
}
