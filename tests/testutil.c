/* testutil.c: shared helpers of the Check tests. */
#include "testutil.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

char *test_write_tmp(const char *text)
{
    char *path = NULL;
    GError *error = NULL;
    int fd = g_file_open_tmp("plansim-test-XXXXXX.json", &path, &error);
    ck_assert_msg(fd >= 0, "temporary file: %s", error ? error->message : "?");
    close(fd);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

void test_remove(char *path)
{
    g_unlink(path);
    g_free(path);
}

char *test_shipped(const char *folder, const char *file)
{
    const char *top = g_getenv("top_srcdir") ? g_getenv("top_srcdir") : ".";
    return g_build_filename(top, folder, file, NULL);
}

static int compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *test_shipped_files(const char *folder)
{
    g_autofree char *path = test_shipped(folder, "");
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    ck_assert_msg(dir, "no folder %s", path);
    for (const char *file; (file = g_dir_read_name(dir));)
        if (g_str_has_suffix(file, ".json"))
            g_ptr_array_add(files, g_strdup(file));
    g_ptr_array_sort(files, compare_names);
    return files;
}

ClusterSpec *test_shipped_cluster(const char *file, int nodes)
{
    g_autofree char *path = test_shipped("topologies", file);
    GError *error = NULL;
    ClusterSpec *c = cluster_spec_load(path, nodes, &error);
    ck_assert_msg(c, "%s: %s", path, error ? error->message : "?");
    return c;
}

ModelSpec *test_shipped_model(const char *folder, const char *file)
{
    g_autofree char *path = test_shipped(folder, file);
    GError *error = NULL;
    ModelSpec *m = model_spec_load(path, &error);
    ck_assert_msg(m, "%s: %s", path, error ? error->message : "?");
    return m;
}

ModelSpec test_llama(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab, int seq)
{
    return (ModelSpec){.name = (char *)"test-llama",
                       .layers = layers,
                       .hidden_size = hidden,
                       .attention_heads = heads,
                       .kv_heads = kv_heads,
                       .ffn_hidden_size = ffn,
                       .vocab_size = vocab,
                       .seq_length = seq,
                       .hidden_dropout = MODEL_DEFAULT_DROPOUT,
                       .attention_dropout = MODEL_DEFAULT_DROPOUT,
                       .mlp = MLP_SWIGLU};
}

ModelSpec *test_gpt(int layers, int hidden, int heads, int vocab, int seq)
{
    ModelSpec *m = g_new0(ModelSpec, 1);
    m->name = g_strdup("test-gpt");
    m->layers = layers;
    m->hidden_size = hidden;
    m->attention_heads = heads;
    m->kv_heads = heads;
    m->ffn_hidden_size = 4 * hidden;
    m->vocab_size = vocab;
    m->seq_length = seq;
    m->mlp = MLP_GELU;
    m->tied_embeddings = TRUE;
    m->hidden_dropout = m->attention_dropout = MODEL_DEFAULT_DROPOUT; /* Megatron-Core's */
    return m;
}

ModelSpec *test_moe(int layers, int hidden, int heads, int vocab, int seq, int experts, int k,
                    int expert_ffn)
{
    ModelSpec *m = test_gpt(layers, hidden, heads, vocab, seq);
    m->mlp = MLP_SWIGLU;
    m->experts = experts;
    m->experts_per_token = k;
    m->moe_ffn_hidden_size = expert_ffn;
    m->moe_layer_frequency = 1;
    return m;
}

ClusterSpec *test_cluster(int nodes, int per_node, double intra_Bps, double inter_Bps)
{
    ClusterSpec *c = g_new0(ClusterSpec, 1);
    c->name = g_strdup("test-cluster");
    c->nodes = nodes;
    c->gpus_per_node = per_node;
    c->gpu = (GpuSpec){.name = g_strdup("test-gpu"),
                       .peak_flops = 312e12,
                       .memory_bytes = 80.0 * 1073741824.0,
                       .memory_Bps = 2039e9,
                       .compute_efficiency = 0.75,
                       .memory_efficiency = 0.85};
    c->intra = (LinkSpec){.bandwidth_Bps = intra_Bps};
    c->inter = (LinkSpec){.bandwidth_Bps = inter_Bps};
    c->nics_per_node = per_node;
    c->oversubscription = 1;
    return c;
}

Replay *test_replay_on_two_ranks(const Graph *g, GError **error)
{
    ClusterSpec *c = test_cluster(1, 2, 100e9, 10e9);
    EngineNet net = {.cluster = c, .algorithm = ALGORITHM_RING, .contention = TRUE, .tags = 1};
    Replay *r = engine_run(g, &net, error);
    cluster_spec_free(c);
    return r;
}

void test_resolve(PlanSpec *plan, const ModelSpec *m, const ClusterSpec *c)
{
    GError *error = NULL;
    ck_assert_msg(plan_spec_resolve(plan, m, c, &error), "resolve: %s",
                  error ? error->message : "?");
}

Run run_new(ModelSpec *model, ClusterSpec *cluster)
{
    return (Run){.model = model, .cluster = cluster, .plan = plan_spec_new()};
}

void run_simulate(Run *run)
{
    test_resolve(run->plan, run->model, run->cluster);
    GError *error = NULL;
    ck_assert_msg(simulate_run(run->model, run->cluster, run->plan, &run->rep, &error), "%s",
                  error ? error->message : "");
}

void run_free(Run *run)
{
    report_clear(&run->rep);
    model_spec_free(run->model);
    cluster_spec_free(run->cluster);
    plan_spec_free(run->plan);
}
