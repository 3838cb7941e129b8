/* cluster.c: cluster files (GPUs, NVLink inside a node, InfiniBand between).
 *
 * The file's units (TFLOPS, GiB, GBps, us) become SI here. Invariant of a
 * returned ClusterSpec: every rate and size positive, efficiencies in (0, 1],
 * latencies >= 0, and at most 2^20 GPUs. */
#include <string.h>

#include "spec/json.h"
#include "spec/spec.h"
#include "base/error.h"

#define MAX_GPUS (1 << 20)

static const char *const cluster_keys[] = {
    "name",       "nodes",      "gpus_per_node",        "gpu",
    "intra_node", "inter_node", "collective_algorithm", NULL};
static const char *const gpu_keys[] = {
    "name",
    "peak_tflops",
    "memory_GiB",
    "memory_bandwidth_GBps",
    "compute_efficiency",
    "memory_efficiency",
    "kernel_launch_us",
    "comm_compute_interference",
    NULL,
};
static const char *const intra_keys[] = {"bandwidth_GBps", "latency_us", NULL};
static const char *const inter_keys[] = {"bandwidth_GBps", "latency_us", "nics_per_node",
                                         "oversubscription", NULL};

static gboolean read_gpu(const JsonDoc *doc, GpuSpec *gpu, GError **error)
{
    const cJSON *o = json_object(doc, doc->root, "$", "gpu", error);
    double tflops, gib, gbps, launch_us;
    if (!o || !json_check_keys(doc, o, "$.gpu", gpu_keys, error) ||
        !json_string(doc, o, "$.gpu", "name", FALSE, "gpu", &gpu->name, error) ||
        !json_number(doc, o, "$.gpu", "peak_tflops", TRUE, FALSE, 1e9, 0, &tflops, error) ||
        !json_number(doc, o, "$.gpu", "memory_GiB", TRUE, FALSE, 1e9, 0, &gib, error) ||
        !json_number(doc, o, "$.gpu", "memory_bandwidth_GBps", TRUE, FALSE, 1e9, 0, &gbps, error) ||
        !json_number(doc, o, "$.gpu", "compute_efficiency", FALSE, FALSE, 1, 1,
                     &gpu->compute_efficiency, error) ||
        !json_number(doc, o, "$.gpu", "memory_efficiency", FALSE, FALSE, 1, 1,
                     &gpu->memory_efficiency, error) ||
        !json_number(doc, o, "$.gpu", "kernel_launch_us", FALSE, TRUE, 1e9, 0, &launch_us, error) ||
        !json_number(doc, o, "$.gpu", "comm_compute_interference", FALSE, TRUE, 0.95, 0,
                     &gpu->comm_interference, error))
        return FALSE;
    gpu->peak_flops = tflops * 1e12;
    gpu->memory_bytes = gib * 1073741824.0;
    gpu->memory_Bps = gbps * 1e9;
    gpu->launch_s = launch_us * 1e-6;
    return TRUE;
}

static gboolean read_link(const JsonDoc *doc, const char *key, const char *const *keys,
                          LinkSpec *link, const cJSON **obj, GError **error)
{
    g_autofree char *where = g_strconcat("$.", key, NULL);
    double gbps, us;
    *obj = json_object(doc, doc->root, "$", key, error);
    if (!*obj || !json_check_keys(doc, *obj, where, keys, error) ||
        !json_number(doc, *obj, where, "bandwidth_GBps", TRUE, FALSE, 1e12, 0, &gbps, error) ||
        !json_number(doc, *obj, where, "latency_us", FALSE, TRUE, 1e9, 0, &us, error))
        return FALSE;
    link->bandwidth_Bps = gbps * 1e9;
    link->latency_s = us * 1e-6;
    return TRUE;
}

/* The optional "collective_algorithm": one a plan may force too. */
static gboolean read_algorithm(const JsonDoc *doc, CollAlgorithm *out, GError **error)
{
    g_autofree char *name = NULL;
    if (!json_string(doc, doc->root, "$", "collective_algorithm", FALSE, "auto", &name, error))
        return FALSE;
    int a = names_find(collective_algorithm_choices, name);
    if (a >= 0) {
        *out = (CollAlgorithm)a;
        return TRUE;
    }
    g_autofree char *choices = names_list(collective_algorithm_choices, TRUE);
    g_autofree char *expected = g_strdup_printf("one of %s", choices);
    json_fail(error, doc, "$", "collective_algorithm",
              cJSON_GetObjectItemCaseSensitive(doc->root, "collective_algorithm"), expected);
    return FALSE;
}

ClusterSpec *cluster_spec_load(const char *path, int nodes_override, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load(path, error);
    if (!doc)
        return NULL;
    g_autoptr(ClusterSpec) c = g_new0(ClusterSpec, 1);
    long long nodes, per_node, nics;
    const cJSON *intra, *inter;
    if (!json_check_keys(doc, doc->root, "$", cluster_keys, error) ||
        !json_string(doc, doc->root, "$", "name", TRUE, NULL, &c->name, error) ||
        !json_int(doc, doc->root, "$", "nodes", TRUE, 1, MAX_GPUS, 0, &nodes, error) ||
        !json_int(doc, doc->root, "$", "gpus_per_node", TRUE, 1, MAX_GPUS, 0, &per_node, error) ||
        !read_gpu(doc, &c->gpu, error) ||
        !read_link(doc, "intra_node", intra_keys, &c->intra, &intra, error) ||
        !read_link(doc, "inter_node", inter_keys, &c->inter, &inter, error) ||
        !json_int(doc, inter, "$.inter_node", "nics_per_node", FALSE, 1, MAX_GPUS, per_node, &nics,
                  error) ||
        !json_number(doc, inter, "$.inter_node", "oversubscription", FALSE, FALSE, 1e6, 1,
                     &c->oversubscription, error) ||
        !read_algorithm(doc, &c->algorithm, error))
        return NULL;
    if (c->oversubscription < 1) {
        json_fail(error, doc, "$.inter_node", "oversubscription",
                  cJSON_GetObjectItemCaseSensitive(inter, "oversubscription"), "a number >= 1");
        return NULL;
    }
    if (nodes_override > 0)
        nodes = nodes_override;
    if (nodes * per_node > MAX_GPUS) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "%s: $.nodes: expected nodes x gpus_per_node <= %d GPUs, got %lld x %lld", path,
                    MAX_GPUS, nodes, per_node);
        return NULL;
    }
    c->nodes = (int)nodes;
    c->gpus_per_node = (int)per_node;
    c->nics_per_node = (int)nics;
    return g_steal_pointer(&c);
}

void cluster_spec_free(ClusterSpec *cluster)
{
    if (!cluster)
        return;
    g_free(cluster->name);
    g_free(cluster->gpu.name);
    g_free(cluster);
}

int cluster_spec_gpus(const ClusterSpec *cluster)
{
    return cluster->nodes * cluster->gpus_per_node;
}
