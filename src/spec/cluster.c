/* cluster.c: cluster files (GPUs, NVLink inside a node, InfiniBand between).
 *
 * A cluster file may inherit from a base cluster and name its GPU's file
 * (json_doc_load_kind: cluster_kind); what is read is the merged tree.
 * The file's units (TFLOPS, GiB, GBps, us) become SI here. Invariant of a
 * returned ClusterSpec: every rate and size positive (the runtime reserve
 * >= 0 and at most the memory), efficiencies in (0, 1],
 * latencies >= 0, a GEMM efficiency curve (if any) with increasing
 * intensities, and at most 2^20 GPUs. The "calibration" record is read,
 * checked and written back, never used. */
#include <math.h>
#include <string.h>

#include "spec/json.h"
#include "spec/cluster.h"
#include "spec/gpu.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "base/shipped.h"

#define MAX_GPUS CLUSTER_MAX_GPUS

/* A cluster file, whose "gpu" may be a GPU file's name (topologies/gpus/),
 * and a GPU file; both may name a "base" of their kind. */
static const JsonKind gpu_kind = {.files = &shipped_gpus};
static const JsonKind cluster_kind = {.files = &shipped_clusters, .part = "gpu",
                                      .part_kind = &gpu_kind};

static const char *const cluster_keys[] = {"name",
                                           "nodes",
                                           "gpus_per_node",
                                           "gpu",
                                           "intra_node",
                                           "inter_node",
                                           "collective_algorithm",
                                           "storage",
                                           "host_memory_GiB",
                                           "gpu_hour_price",
                                           "cpu_adam_params_per_s",
                                           "reliability",
                                           "host_path",
                                           "calibration",
                                           NULL};
static const char *const storage_keys[] = {"read_bandwidth_GBps",  "preprocess_samples_per_s",
                                           "write_bandwidth_GBps", "aggregate_read_GBps",
                                           "aggregate_write_GBps", NULL};
static const char *const reliability_keys[] = {
    "gpu_mtbf_hours",  "gpu_failures_per_1000_node_days",
    "node_mtbf_hours", "node_failures_per_1000_node_days",
    "nic_mtbf_hours",  "nic_failures_per_1000_node_days",
    "detect_s",        "restart_s",
    "replace_s",       "hot_spares",
    "warmup_steps",    NULL};
static const char *const gpu_keys[] = {
    "name",
    "peak_tflops",
    "peak_fp8_tflops",
    "peak_fp4_tflops",
    "mxfp8",
    "fp8_any_layout",
    "gemm_epilogue_overlap",
    "pcie_GBps",
    "memory_GiB",
    "runtime_reserve_GiB",
    "memory_bandwidth_GBps",
    "compute_efficiency",
    "memory_efficiency",
    "kernel_launch_us",
    "comm_compute_interference",
    "gemm_sustained",
    "attention_forward_efficiency",
    "attention_backward_efficiency",
    "sm_count",
    "gemm_efficiency",
    "attention_head_dim_factor",
    "attention_seq_factor",
    "gemm_dtype_share",
    NULL,
};
static const char *const intra_keys[] = {
    "bandwidth_GBps",  "latency_us", "efficiency",      "ll_latency_us",   "ll128_latency_us",
    "base_latency_us", "nvls",       "nvls_efficiency", "nvls_latency_us", NULL};
static const char *const inter_keys[] = {"bandwidth_GBps", "latency_us",       "efficiency",
                                         "ll_latency_us",  "ll128_latency_us", "tree_efficiency",
                                         "nics_per_node",  "oversubscription", NULL};
/* "host_path"'s keys: whether the NICs share the host links, then each
 * HostShared's count of GPUs and bandwidth (HOST_COUNT_KEY, HOST_BANDWIDTH_KEY). */
static const char *const host_path_keys[] = {"nic_shares_host_link", "gpus_per_switch",
                                             "switch_uplink_GBps",   "gpus_per_cpu",
                                             "cpu_memory_GBps",      NULL};
#define HOST_COUNT_KEY(i)     host_path_keys[1 + 2 * (i)]
#define HOST_BANDWIDTH_KEY(i) host_path_keys[2 + 2 * (i)]
G_STATIC_ASSERT(G_N_ELEMENTS(host_path_keys) == 1 + 2 * HOST_SHARED + 1);
/* The calibration record's keys: what wrote it and from what, then the
 * lists of the states PARAM_FITTED on (calibration_keys[FIRST_LIST + s -
 * PARAM_FITTED] lists state s). */
static const char *const calibration_keys[] = {"by", "base", "fitted", "kept", "given", NULL};
#define FIRST_LIST 2
G_STATIC_ASSERT(G_N_ELEMENTS(calibration_keys) == FIRST_LIST + PARAM_STATES - PARAM_FITTED + 1);

const char *const cluster_param_names[] = {
#define CLUSTER_PARAM(ID, object, key, fit, needs) #object "." #key,
#include "spec/cluster_params.def"
#undef CLUSTER_PARAM
    NULL};

/* What a profile must model for a parameter to exist: its row's `needs`. */
typedef enum { NEEDS_ALWAYS, NEEDS_LL, NEEDS_LL128, NEEDS_NVLS, NEEDS_CURVE } ParamNeeds;
static const ParamNeeds param_needs[] = {
#define CLUSTER_PARAM(ID, object, key, fit, needs) [CLUSTER_PARAM_##ID] = NEEDS_##needs,
#include "spec/cluster_params.def"
#undef CLUSTER_PARAM
};

/* The per-message latency keys of the protocols besides Simple, by
 * CollProtocol. */
static const char *const protocol_latency_keys[] = {"ll_latency_us", "ll128_latency_us"};

/* An optional curve `key`: 1 to CURVE_POINTS pairs [x, y], x > 0 and
 * increasing, y in (0, ymax]; `what` names them in the error. */
static gboolean read_curve(const JsonDoc *doc, const cJSON *o, const char *key, double ymax,
                           const char *what, Curve *c, GError **error)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, key), *pair;
    g_autofree char *expected = g_strdup_printf(
        "a list of 1 to %d %s pairs, the first > 0 and increasing, the second > 0 and <= %g",
        CURVE_POINTS, what, ymax);
    c->n = 0;
    if (!list)
        return TRUE;
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    if (n < 1 || n > CURVE_POINTS) {
        json_fail(error, doc, "$.gpu", key, list, "%s", expected);
        return FALSE;
    }
    cJSON_ArrayForEach(pair, list)
    {
        const cJSON *x = cJSON_GetArrayItem(pair, 0), *y = cJSON_GetArrayItem(pair, 1);
        if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !cJSON_IsNumber(x) ||
            !cJSON_IsNumber(y) || !(x->valuedouble > (c->n ? c->x[c->n - 1] : 0)) ||
            !isfinite(x->valuedouble) || !(y->valuedouble > 0 && y->valuedouble <= ymax)) {
            json_fail(error, doc, "$.gpu", key, pair, "%s", expected);
            return FALSE;
        }
        c->x[c->n] = x->valuedouble;
        c->y[c->n] = y->valuedouble;
        c->n++;
    }
    return TRUE;
}

/* The smallest values the numbers of a cluster file take, so that no time
 * computed from them overflows: 1 GFLOP/s, 1 MB/s, 1 MiB, 1 %, one
 * parameter or sample a second. */
#define MIN_TFLOPS     1e-3
#define MIN_GBPS       1e-3
#define MIN_GIB        1e-3
#define MIN_EFFICIENCY 0.01
#define MIN_RATE       1

/* The narrow dtypes' names: dtype_names less bf16's, the first. */
G_STATIC_ASSERT(DTYPE_BF16 == 0);
static const char *const *const narrow_dtype_names = dtype_names + 1;

/* "gemm_dtype_share": an object of a share in (0, 1] for any of the
 * narrow dtypes; each one absent: 0 (gpu_gemm_dtype_share's 1). */
static gboolean read_dtype_shares(const JsonDoc *doc, const cJSON *gpu_obj, GpuSpec *gpu,
                                  GError **error)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(gpu_obj, "gemm_dtype_share");
    memset(gpu->gemm_dtype_share, 0, sizeof gpu->gemm_dtype_share);
    if (!o)
        return TRUE;
    if (!cJSON_IsObject(o)) {
        g_autofree char *names = names_list(narrow_dtype_names, FALSE);
        json_fail(error, doc, "$.gpu", "gemm_dtype_share", o, "an object of shares in (0, 1] by dtype (%s)",
                  names);
        return FALSE;
    }
    if (!json_check_keys(doc, o, "$.gpu.gemm_dtype_share", narrow_dtype_names, error))
        return FALSE;
    for (int d = DTYPE_BF16 + 1; d < DTYPES; d++)
        if (!json_number(doc, o, "$.gpu.gemm_dtype_share", dtype_names[d], FALSE, MIN_EFFICIENCY,
                         1, 0, &gpu->gemm_dtype_share[d], error))
            return FALSE;
    return TRUE;
}

static gboolean read_gpu(const JsonDoc *doc, GpuSpec *gpu, GError **error)
{
    const cJSON *o = json_object(doc, doc->root, "$", "gpu", error);
    double tflops, fp8_tflops, fp4_tflops, pcie_gbps, gib, reserve_gib, gbps, launch_us;
    long long sms;
    if (!o || !json_check_keys(doc, o, "$.gpu", gpu_keys, error) ||
        !json_string(doc, o, "$.gpu", "name", FALSE, "gpu", &gpu->name, error) ||
        !json_number(doc, o, "$.gpu", "peak_tflops", TRUE, MIN_TFLOPS, 1e9, 0, &tflops, error) ||
        !json_number(doc, o, "$.gpu", "peak_fp8_tflops", FALSE, MIN_TFLOPS, 1e9, 0, &fp8_tflops,
                     error) ||
        !json_number(doc, o, "$.gpu", "peak_fp4_tflops", FALSE, MIN_TFLOPS, 1e9, 0, &fp4_tflops,
                     error) ||
        !json_bool(doc, o, "$.gpu", "mxfp8", FALSE, FALSE, &gpu->mxfp8, error) ||
        !json_bool(doc, o, "$.gpu", "fp8_any_layout", FALSE, FALSE, &gpu->fp8_any_layout, error) ||
        !json_bool(doc, o, "$.gpu", "gemm_epilogue_overlap", FALSE, FALSE,
                   &gpu->gemm_epilogue_overlap, error) ||
        !json_number(doc, o, "$.gpu", "pcie_GBps", FALSE, MIN_GBPS, 1e12, 0, &pcie_gbps, error) ||
        !json_number(doc, o, "$.gpu", "memory_GiB", TRUE, MIN_GIB, 1e9, 0, &gib, error) ||
        !json_number(doc, o, "$.gpu", "runtime_reserve_GiB", FALSE, 0, gib, 0, &reserve_gib,
                     error) ||
        !json_number(doc, o, "$.gpu", "memory_bandwidth_GBps", TRUE, MIN_GBPS, 1e9, 0, &gbps,
                     error) ||
        !json_number(doc, o, "$.gpu", "compute_efficiency", FALSE, MIN_EFFICIENCY, 1, 1,
                     &gpu->compute_efficiency, error) ||
        !json_number(doc, o, "$.gpu", "memory_efficiency", FALSE, MIN_EFFICIENCY, 1, 1,
                     &gpu->memory_efficiency, error) ||
        !json_number(doc, o, "$.gpu", "kernel_launch_us", FALSE, 0, 1e9, 0, &launch_us, error) ||
        !json_number(doc, o, "$.gpu", "comm_compute_interference", FALSE, 0, 0.95, 0,
                     &gpu->comm_interference, error) ||
        !json_number(doc, o, "$.gpu", "gemm_sustained", FALSE, MIN_EFFICIENCY, 1, 1,
                     &gpu->gemm_sustained, error) ||
        !json_number(doc, o, "$.gpu", "attention_forward_efficiency", FALSE, MIN_EFFICIENCY, 1,
                     GPU_ATTENTION_FORWARD_EFFICIENCY, &gpu->attention_forward_efficiency, error) ||
        !json_number(doc, o, "$.gpu", "attention_backward_efficiency", FALSE, MIN_EFFICIENCY, 1,
                     GPU_ATTENTION_BACKWARD_EFFICIENCY, &gpu->attention_backward_efficiency,
                     error) ||
        !json_int(doc, o, "$.gpu", "sm_count", FALSE, 1, 100000, 0, &sms, error) ||
        !read_curve(doc, o, "gemm_efficiency", 1, "[flop_per_byte, efficiency]", &gpu->gemm,
                    error) ||
        !read_curve(doc, o, "attention_head_dim_factor", 4, "[head_dim, factor]",
                    &gpu->attention_head_dim, error) ||
        !read_curve(doc, o, "attention_seq_factor", 4, "[sequence_length, factor]",
                    &gpu->attention_seq, error) ||
        !read_dtype_shares(doc, o, gpu, error))
        return FALSE;
    gpu->sm_count = (int)sms;
    gpu->peak_flops = tflops * 1e12;
    gpu->peak_fp8_flops = fp8_tflops * 1e12;
    gpu->peak_fp4_flops = fp4_tflops * 1e12;
    gpu->pcie_Bps = pcie_gbps * 1e9;
    gpu->memory_bytes = gib * 1073741824.0;
    gpu->reserve_bytes = reserve_gib * 1073741824.0;
    gpu->memory_Bps = gbps * 1e9;
    gpu->launch_s = launch_us * 1e-6;
    return TRUE;
}

/* A link class; *given gets a bit per protocol whose latency it gives. */
static gboolean read_link(const JsonDoc *doc, const char *key, const char *const *keys,
                          LinkSpec *link, const cJSON **obj, unsigned *given, GError **error)
{
    g_autofree char *where = g_strconcat("$.", key, NULL);
    double gbps, us, ll_us, ll128_us;
    *obj = json_object(doc, doc->root, "$", key, error);
    if (!*obj || !json_check_keys(doc, *obj, where, keys, error) ||
        !json_number(doc, *obj, where, "bandwidth_GBps", TRUE, MIN_GBPS, 1e12, 0, &gbps, error) ||
        !json_number(doc, *obj, where, "latency_us", FALSE, 0, 1e9, 0, &us, error) ||
        !json_number(doc, *obj, where, "efficiency", FALSE, MIN_EFFICIENCY, 1, 1, &link->efficiency,
                     error) ||
        !json_number(doc, *obj, where, "ll_latency_us", FALSE, 0, 1e9, 0, &ll_us, error) ||
        !json_number(doc, *obj, where, "ll128_latency_us", FALSE, 0, 1e9, 0, &ll128_us, error))
        return FALSE;
    link->bandwidth_Bps = gbps * 1e9;
    link->latency_s = us * 1e-6;
    link->ll_latency_s = ll_us * 1e-6;
    link->ll128_latency_s = ll128_us * 1e-6;
    *given = 0;
    for (int p = 0; p < PROTOCOL_SIMPLE; p++)
        if (cJSON_GetObjectItemCaseSensitive(*obj, protocol_latency_keys[p]))
            *given |= 1u << p;
    return TRUE;
}

/* The collective model's keys beyond the links' (intra_node's base latency
 * and NVLS, inter_node's tree efficiency), and the protocols: LL or LL128
 * is modelled when both link classes give its latency, and one giving it
 * alone is an error. */
static gboolean read_collectives(const JsonDoc *doc, const cJSON *intra, const cJSON *inter,
                                 unsigned intra_given, unsigned inter_given, ClusterSpec *c,
                                 GError **error)
{
    for (int p = 0; p < PROTOCOL_SIMPLE; p++) {
        if (((intra_given ^ inter_given) >> p & 1) == 0)
            continue;
        gboolean in_intra = intra_given >> p & 1;
        json_fail(error, doc, in_intra ? "$.inter_node" : "$.intra_node", protocol_latency_keys[p],
                  NULL, "a latency in us, as %s gives one", in_intra ? "intra_node" : "inter_node");
        return FALSE;
    }
    c->protocols = intra_given & inter_given;
    double base_us, nvls_us;
    if (!json_number(doc, intra, "$.intra_node", "base_latency_us", FALSE, 0, 1e9, 0, &base_us,
                     error) ||
        !json_bool(doc, intra, "$.intra_node", "nvls", FALSE, FALSE, &c->nvls, error) ||
        !json_number(doc, intra, "$.intra_node", "nvls_efficiency", FALSE, MIN_EFFICIENCY, 1,
                     c->intra.efficiency, &c->nvls_efficiency, error) ||
        !json_number(doc, intra, "$.intra_node", "nvls_latency_us", FALSE, 0, 1e9, 0, &nvls_us,
                     error) ||
        !json_number(doc, inter, "$.inter_node", "tree_efficiency", FALSE, MIN_EFFICIENCY, 1, 1,
                     &c->tree_efficiency, error))
        return FALSE;
    c->base_latency_s = base_us * 1e-6;
    c->nvls_latency_s = nvls_us * 1e-6;
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
              cJSON_GetObjectItemCaseSensitive(doc->root, "collective_algorithm"), "%s", expected);
    return FALSE;
}

/* The optional "storage": the data loader's limits per node; an absent
 * object or key means unlimited (0). */
static gboolean read_storage(const JsonDoc *doc, ClusterSpec *c, GError **error)
{
    const cJSON *o = NULL;
    double gbps;
    if (!cJSON_GetObjectItemCaseSensitive(doc->root, "storage"))
        return TRUE;
    if (!(o = json_object(doc, doc->root, "$", "storage", error)) ||
        !json_check_keys(doc, o, "$.storage", storage_keys, error) ||
        !json_number(doc, o, "$.storage", "read_bandwidth_GBps", FALSE, MIN_GBPS, 1e9, 0, &gbps,
                     error) ||
        !json_number(doc, o, "$.storage", "preprocess_samples_per_s", FALSE, MIN_RATE, 1e12, 0,
                     &c->preprocess_samples_s, error))
        return FALSE;
    c->storage_Bps = gbps * 1e9;
    /* the checkpoints' keys, storage_keys[2] on */
    double *fields[] = {&c->storage_write_Bps, &c->storage_total_read_Bps,
                        &c->storage_total_write_Bps};
    for (gsize i = 0; i < G_N_ELEMENTS(fields); i++) {
        if (!json_number(doc, o, "$.storage", storage_keys[2 + i], FALSE, MIN_GBPS, 1e9, 0, &gbps,
                         error))
            return FALSE;
        *fields[i] = gbps * 1e9;
    }
    return TRUE;
}

/* The optional "host_path" (HostPathSpec): whether traffic between nodes
 * crosses the GPUs' host links, and each HostShared resource: its
 * bandwidth, and how many GPUs in order share one (by default one a PCIe
 * switch, every GPU of a node a CPU; a count without its bandwidth is an
 * error). It needs the GPU's host link, gpu.pcie_GBps. */
static gboolean read_host_path(const JsonDoc *doc, ClusterSpec *c, int per_node, GError **error)
{
    const char *where = "$.host_path";
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(doc->root, "host_path");
    HostPathSpec *h = &c->host_path;
    if (!o)
        return TRUE;
    if (!(o = json_object(doc, doc->root, "$", "host_path", error)) ||
        !json_check_keys(doc, o, where, host_path_keys, error) ||
        !json_bool(doc, o, where, "nic_shares_host_link", FALSE, FALSE, &h->nic_via_host, error))
        return FALSE;
    if (c->gpu.pcie_Bps <= 0) {
        json_fail(error, doc, "$", "host_path", o,
                  "no host path without the GPU's host link, gpu.pcie_GBps");
        return FALSE;
    }
    const long long fallback[HOST_SHARED] = {[HOST_SWITCH] = 1, [HOST_CPU] = per_node};
    for (int i = 0; i < HOST_SHARED; i++) {
        const cJSON *count = cJSON_GetObjectItemCaseSensitive(o, HOST_COUNT_KEY(i));
        double gbps;
        long long gpus;
        if (!json_number(doc, o, where, HOST_BANDWIDTH_KEY(i), FALSE, MIN_GBPS, 1e12, 0, &gbps,
                         error) ||
            !json_int(doc, o, where, HOST_COUNT_KEY(i), FALSE, 1, per_node, fallback[i], &gpus,
                      error))
            return FALSE;
        if (count && gbps == 0) {
            json_fail(error, doc, where, HOST_COUNT_KEY(i), count,
                      "%s beside it, the bandwidth its GPUs share", HOST_BANDWIDTH_KEY(i));
            return FALSE;
        }
        h->shared[i] =
            (HostResource){.gpus = gbps > 0 ? (int)gpus : 0, .bandwidth_Bps = gbps * 1e9};
    }
    return TRUE;
}

/* The host path's keys that differ from a file without them. */
static void write_host_path(JsonWriter *w, const HostPathSpec *h)
{
    gboolean any = h->nic_via_host;
    for (int i = 0; i < HOST_SHARED; i++)
        any |= h->shared[i].gpus > 0;
    if (!any)
        return;
    jsonw_begin_object(jsonw_key(w, "host_path"), JSONW_INLINE);
    if (h->nic_via_host)
        jsonw_bool(jsonw_key(w, "nic_shares_host_link"), TRUE);
    for (int i = 0; i < HOST_SHARED; i++)
        if (h->shared[i].gpus > 0) {
            jsonw_int(jsonw_key(w, HOST_COUNT_KEY(i)), h->shared[i].gpus);
            jsonw_number(jsonw_key(w, HOST_BANDWIDTH_KEY(i)), h->shared[i].bandwidth_Bps / 1e9);
        }
    jsonw_end(w);
}

static const char *const failure_kind_names[] = {"gpu", "node", "nic", NULL};

/* Llama 3 405B's pre-training (Dubey et al. 2024, "The Llama 3 Herd of
 * Models", section 3.3.4): 419 unexpected interruptions in 54 days on
 * 16,384 H100s, 2,048 nodes; GPU issues (faulty GPUs, HBM3, SRAM, the
 * system processor, silent data corruption, thermal) 58.7 % of them,
 * network switches, cables and NICs 10.1 %, the rest (software, host
 * maintenance, CPUs, power, SSDs, ...) 31.2 %. Per node-day: */
#define LLAMA3_FAILURES_PER_NODE_DAY (419.0 / (2048.0 * 54.0))
static const double default_failure_share[FAILURE_KINDS] = {
    [FAILURE_GPU] = 0.587, [FAILURE_NIC] = 0.101, [FAILURE_NODE] = 0.312};

/* The restart's defaults, assumptions where no run publishes its parts:
 * a crashed rank seen in 2 minutes, 8 to relaunch the job on a hot spare
 * (ten minutes from failure to loading), an hour to find a node without
 * one, no warm-up (docs/inputs.md, "Reliability"). */
static const ReliabilitySpec default_reliability = {
    .detect_s = 120, .restart_s = 480, .replace_s = 3600, .hot_spares = TRUE, .warmup_steps = 0};

/* A kind's default failures per node-hour. */
static double default_rate(FailureKind k)
{
    return LLAMA3_FAILURES_PER_NODE_DAY * default_failure_share[k] / 24;
}

/* A part's units in a node: GPUs, the node itself, its NICs. */
static int failure_units(FailureKind k, int per_node, int nics)
{
    return k == FAILURE_GPU ? per_node : k == FAILURE_NIC ? nics : 1;
}

/* The optional "reliability" (metrics/run.h): each part's failures as a
 * mean time between failures of one part, or as failures per 1,000
 * node-days (of all a node's parts of the kind), not both; the restart's
 * parts. Absent keys take the defaults above. */
static gboolean read_reliability(const JsonDoc *doc, ClusterSpec *c, int per_node, int nics,
                                 GError **error)
{
    ReliabilitySpec *r = &c->reliability;
    *r = default_reliability;
    for (int k = 0; k < FAILURE_KINDS; k++)
        r->per_node_hour[k] = default_rate(k);
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(doc->root, "reliability");
    if (!o)
        return TRUE;
    const char *where = "$.reliability";
    long long warmup;
    if (!(o = json_object(doc, doc->root, "$", "reliability", error)) ||
        !json_check_keys(doc, o, where, reliability_keys, error))
        return FALSE;
    for (int k = 0; k < FAILURE_KINDS; k++) {
        g_autofree char *mtbf = g_strdup_printf("%s_mtbf_hours", failure_kind_names[k]);
        g_autofree char *rate =
            g_strdup_printf("%s_failures_per_1000_node_days", failure_kind_names[k]);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, mtbf);
        if (m && cJSON_GetObjectItemCaseSensitive(o, rate)) {
            json_fail(error, doc, where, mtbf, m, "one of %s and %s, not both", mtbf, rate);
            return FALSE;
        }
        double hours = 0, per_1000 = -1;
        if (!json_number(doc, o, where, mtbf, FALSE, 1e-3, 1e12, 0, &hours, error) ||
            !json_number(doc, o, where, rate, FALSE, 0, 1e9, -1, &per_1000, error))
            return FALSE;
        if (hours > 0)
            r->per_node_hour[k] = failure_units(k, per_node, nics) / hours;
        else if (per_1000 >= 0)
            r->per_node_hour[k] = per_1000 / 1000 / 24;
    }
    if (!json_number(doc, o, where, "detect_s", FALSE, 0, 1e9, r->detect_s, &r->detect_s, error) ||
        !json_number(doc, o, where, "restart_s", FALSE, 0, 1e9, r->restart_s, &r->restart_s,
                     error) ||
        !json_number(doc, o, where, "replace_s", FALSE, 0, 1e9, r->replace_s, &r->replace_s,
                     error) ||
        !json_bool(doc, o, where, "hot_spares", FALSE, r->hot_spares, &r->hot_spares, error) ||
        !json_int(doc, o, where, "warmup_steps", FALSE, 0, 1000000, r->warmup_steps, &warmup,
                  error))
        return FALSE;
    r->warmup_steps = (int)warmup;
    return TRUE;
}

/* The reliability block's keys whose values differ from the defaults,
 * the rates as failures per 1,000 node-days; nothing when none does. */
static void write_reliability(JsonWriter *w, const ClusterSpec *c)
{
    const ReliabilitySpec *r = &c->reliability, *d = &default_reliability;
    gboolean rate_differs[FAILURE_KINDS], any = FALSE;
    for (int k = 0; k < FAILURE_KINDS; k++) {
        rate_differs[k] = fabs(r->per_node_hour[k] - default_rate(k)) > 1e-9 * default_rate(k);
        any |= rate_differs[k];
    }
    gboolean restart_differs[] = {r->detect_s != d->detect_s, r->restart_s != d->restart_s,
                                  r->replace_s != d->replace_s};
    static const char *const restart_keys[] = {"detect_s", "restart_s", "replace_s"};
    const double restart_values[] = {r->detect_s, r->restart_s, r->replace_s};
    for (gsize i = 0; i < G_N_ELEMENTS(restart_differs); i++)
        any |= restart_differs[i];
    if (!any && r->hot_spares == d->hot_spares && r->warmup_steps == d->warmup_steps)
        return;
    jsonw_begin_object(jsonw_key(w, "reliability"), 4);
    for (int k = 0; k < FAILURE_KINDS; k++)
        if (rate_differs[k]) {
            g_autofree char *key =
                g_strdup_printf("%s_failures_per_1000_node_days", failure_kind_names[k]);
            jsonw_number(jsonw_key(w, key), r->per_node_hour[k] * 24 * 1000);
        }
    for (gsize i = 0; i < G_N_ELEMENTS(restart_differs); i++)
        if (restart_differs[i])
            jsonw_number(jsonw_key(w, restart_keys[i]), restart_values[i]);
    if (r->hot_spares != d->hot_spares)
        jsonw_bool(jsonw_key(w, "hot_spares"), r->hot_spares);
    if (r->warmup_steps != d->warmup_steps)
        jsonw_int(jsonw_key(w, "warmup_steps"), r->warmup_steps);
    jsonw_end(w);
}

/* The optional "calibration": "by" and "base", strings, and the lists
 * "fitted", "kept" and "given" (absent: empty) of parameters by name
 * (cluster_param_names), each parameter in one list at most. */
static gboolean read_calibration(const JsonDoc *doc, ClusterSpec *c, GError **error)
{
    const char *where = "$.calibration";
    if (!cJSON_GetObjectItemCaseSensitive(doc->root, "calibration"))
        return TRUE;
    g_autoptr(ClusterCalibration) r = g_new0(ClusterCalibration, 1);
    const cJSON *o = json_object(doc, doc->root, "$", "calibration", error);
    if (!o || !json_check_keys(doc, o, where, calibration_keys, error) ||
        !json_string(doc, o, where, "by", TRUE, NULL, &r->by, error) ||
        !json_string(doc, o, where, "base", TRUE, NULL, &r->base, error))
        return FALSE;
    for (ParamState s = PARAM_FITTED; s < PARAM_STATES; s++) {
        const char *key = calibration_keys[FIRST_LIST + s - PARAM_FITTED];
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, key), *item;
        if (list && !cJSON_IsArray(list)) {
            json_fail(error, doc, where, key, list, "a list of parameter names");
            return FALSE;
        }
        int i = 0;
        cJSON_ArrayForEach(item, list)
        {
            int p = names_find(cluster_param_names, cJSON_GetStringValue(item));
            if (p < 0 || r->state[p] != PARAM_UNLISTED) {
                g_autofree char *at = g_strdup_printf("%s[%d]", key, i);
                g_autofree char *names = p < 0 ? names_list(cluster_param_names, TRUE) : NULL;
                if (p < 0)
                    json_fail(error, doc, where, at, item, "a parameter calibrate fits, one of %s",
                              names);
                else
                    json_fail(error, doc, where, at, item,
                              "a parameter listed once (it is in \"%s\" already)",
                              calibration_keys[FIRST_LIST + r->state[p] - PARAM_FITTED]);
                return FALSE;
            }
            r->state[p] = s;
            i++;
        }
    }
    c->calibration = g_steal_pointer(&r);
    return TRUE;
}

ClusterSpec *cluster_spec_load(const char *path, int nodes_override, GError **error)
{
    g_autoptr(JsonDoc) doc = json_doc_load_kind(path, &cluster_kind, error);
    if (!doc)
        return NULL;
    g_autoptr(ClusterSpec) c = g_new0(ClusterSpec, 1);
    long long nodes, per_node, nics;
    double host_gib;
    const cJSON *intra, *inter;
    unsigned intra_given, inter_given; /* protocols whose latency each gives */
    if (!json_check_keys(doc, doc->root, "$", cluster_keys, error) ||
        !json_string(doc, doc->root, "$", "name", TRUE, NULL, &c->name, error) ||
        !json_int(doc, doc->root, "$", "nodes", TRUE, 1, MAX_GPUS, 0, &nodes, error) ||
        !json_int(doc, doc->root, "$", "gpus_per_node", TRUE, 1, MAX_GPUS, 0, &per_node, error) ||
        !read_gpu(doc, &c->gpu, error) ||
        !read_link(doc, "intra_node", intra_keys, &c->intra, &intra, &intra_given, error) ||
        !read_link(doc, "inter_node", inter_keys, &c->inter, &inter, &inter_given, error) ||
        !read_collectives(doc, intra, inter, intra_given, inter_given, c, error) ||
        !json_int(doc, inter, "$.inter_node", "nics_per_node", FALSE, 1, MAX_GPUS, per_node, &nics,
                  error) ||
        !json_number(doc, inter, "$.inter_node", "oversubscription", FALSE, 1, 1e6, 1,
                     &c->oversubscription, error) ||
        !read_algorithm(doc, &c->algorithm, error) || !read_storage(doc, c, error) ||
        !json_number(doc, doc->root, "$", "host_memory_GiB", FALSE, MIN_GIB, 1e9, 0, &host_gib,
                     error) ||
        !json_number(doc, doc->root, "$", "cpu_adam_params_per_s", FALSE, MIN_RATE, 1e18, 0,
                     &c->cpu_adam_params_s, error) ||
        !json_number(doc, doc->root, "$", "gpu_hour_price", FALSE, 0, 1e6, 0, &c->gpu_hour_price,
                     error) ||
        !read_reliability(doc, c, (int)per_node, (int)nics, error) ||
        !read_host_path(doc, c, (int)per_node, error) || !read_calibration(doc, c, error))
        return NULL;
    c->host_memory_bytes = host_gib * 1073741824.0;
    c->path = g_strdup(path);
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

gboolean cluster_spec_use_gpus_per_node(ClusterSpec *c, int used, const char *origin,
                                        GError **error)
{
    if (used == 0 || used == c->gpus_per_node)
        return TRUE;
    g_autofree char *got = g_strdup_printf("%d", used);
    if (used > c->gpus_per_node) {
        ps_error_value(error, origin, got, "at most the %d GPUs of a node of %s", c->gpus_per_node,
                       c->name);
        return FALSE;
    }
    if (c->nics_per_node < c->gpus_per_node) {
        ps_error_value(error, origin, got,
                       "all %d GPUs of a node of %s, whose GPUs share its %d NICs (part of a node "
                       "needs a NIC a GPU)",
                       c->gpus_per_node, c->name, c->nics_per_node);
        return FALSE;
    }
    c->host_memory_bytes *= (double)used / c->gpus_per_node;
    c->node_gpus = c->gpus_per_node;
    c->gpus_per_node = used;
    return TRUE;
}

void cluster_calibration_free(ClusterCalibration *r)
{
    if (!r)
        return;
    g_free(r->by);
    g_free(r->base);
    g_free(r);
}

void cluster_spec_free(ClusterSpec *cluster)
{
    if (!cluster)
        return;
    g_free(cluster->name);
    g_free(cluster->gpu.name);
    g_free(cluster->path);
    cluster_calibration_free(cluster->calibration);
    g_free(cluster);
}

ClusterSpec *cluster_spec_copy(const ClusterSpec *c)
{
    ClusterSpec *copy = g_memdup2(c, sizeof *c);
    copy->name = g_strdup(c->name);
    copy->gpu.name = g_strdup(c->gpu.name);
    copy->path = g_strdup(c->path);
    if (c->calibration) {
        copy->calibration = g_memdup2(c->calibration, sizeof *c->calibration);
        copy->calibration->by = g_strdup(c->calibration->by);
        copy->calibration->base = g_strdup(c->calibration->base);
    }
    return copy;
}

/* An efficiency as the file gives it: 0 (built in code) counts as 1. */
static double efficiency(double e)
{
    return e > 0 ? e : 1;
}

/* A link class's keys that both classes have. */
/* A curve as its key's list of pairs; nothing for one without points. */
static void write_curve(JsonWriter *w, const char *key, const Curve *c)
{
    if (c->n == 0)
        return;
    jsonw_begin_list(jsonw_key(w, key), JSONW_INLINE);
    for (int i = 0; i < c->n; i++) {
        jsonw_begin_list(w, JSONW_INLINE);
        jsonw_number(w, c->x[i]);
        jsonw_number(w, c->y[i]);
        jsonw_end(w);
    }
    jsonw_end(w);
}

/* The calibration record, if any: each list in cluster_params.def's
 * order, empty ones too. */
static void write_calibration(JsonWriter *w, const ClusterCalibration *r)
{
    if (!r)
        return;
    jsonw_begin_object(jsonw_key(w, "calibration"), 4);
    jsonw_string(jsonw_key(w, "by"), r->by);
    jsonw_string(jsonw_key(w, "base"), r->base);
    for (ParamState s = PARAM_FITTED; s < PARAM_STATES; s++) {
        jsonw_begin_list(jsonw_key(w, calibration_keys[FIRST_LIST + s - PARAM_FITTED]),
                         JSONW_INLINE);
        for (int p = 0; p < CLUSTER_N_PARAMS; p++)
            if (r->state[p] == s)
                jsonw_string(w, cluster_param_names[p]);
        jsonw_end(w);
    }
    jsonw_end(w);
}

static void link_keys(JsonWriter *w, const LinkSpec *l, unsigned protocols)
{
    jsonw_number(jsonw_key(w, "bandwidth_GBps"), l->bandwidth_Bps / 1e9);
    jsonw_number(jsonw_key(w, "latency_us"), l->latency_s * 1e6);
    jsonw_number(jsonw_key(w, "efficiency"), efficiency(l->efficiency));
    if (protocols >> PROTOCOL_LL & 1)
        jsonw_number(jsonw_key(w, "ll_latency_us"), l->ll_latency_s * 1e6);
    if (protocols >> PROTOCOL_LL128 & 1)
        jsonw_number(jsonw_key(w, "ll128_latency_us"), l->ll128_latency_s * 1e6);
}

char *cluster_spec_json(const ClusterSpec *c)
{
    GString *out = g_string_new(NULL);
    JsonWriter w;
    jsonw_init(&w, out);
    jsonw_begin_object(&w, 2);
    jsonw_string(jsonw_key(&w, "name"), c->name);
    jsonw_int(jsonw_key(&w, "nodes"), c->nodes);
    jsonw_int(jsonw_key(&w, "gpus_per_node"), c->gpus_per_node);
    if (c->algorithm != ALGORITHM_AUTO)
        jsonw_string(jsonw_key(&w, "collective_algorithm"),
                     collective_algorithm_name(c->algorithm));
    if (c->host_memory_bytes > 0)
        jsonw_number(jsonw_key(&w, "host_memory_GiB"), c->host_memory_bytes / 1073741824.0);
    if (c->cpu_adam_params_s > 0)
        jsonw_number(jsonw_key(&w, "cpu_adam_params_per_s"), c->cpu_adam_params_s);
    if (c->gpu_hour_price > 0)
        jsonw_number(jsonw_key(&w, "gpu_hour_price"), c->gpu_hour_price);
    const double storage[] = {c->storage_Bps / 1e9, c->preprocess_samples_s,
                              c->storage_write_Bps / 1e9, c->storage_total_read_Bps / 1e9,
                              c->storage_total_write_Bps / 1e9};
    gboolean any_storage = FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(storage); i++)
        any_storage |= storage[i] > 0;
    if (any_storage) {
        jsonw_begin_object(jsonw_key(&w, "storage"), JSONW_INLINE);
        for (gsize i = 0; i < G_N_ELEMENTS(storage); i++)
            if (storage[i] > 0)
                jsonw_number(jsonw_key(&w, storage_keys[i]), storage[i]);
        jsonw_end(&w);
    }
    write_reliability(&w, c);
    write_host_path(&w, &c->host_path);
    const GpuSpec *g = &c->gpu;
    jsonw_begin_object(jsonw_key(&w, "gpu"), 4);
    jsonw_string(jsonw_key(&w, "name"), g->name);
    jsonw_number(jsonw_key(&w, "peak_tflops"), g->peak_flops / 1e12);
    if (g->peak_fp8_flops > 0)
        jsonw_number(jsonw_key(&w, "peak_fp8_tflops"), g->peak_fp8_flops / 1e12);
    if (g->peak_fp4_flops > 0)
        jsonw_number(jsonw_key(&w, "peak_fp4_tflops"), g->peak_fp4_flops / 1e12);
    if (g->mxfp8)
        jsonw_bool(jsonw_key(&w, "mxfp8"), TRUE);
    if (g->fp8_any_layout)
        jsonw_bool(jsonw_key(&w, "fp8_any_layout"), TRUE);
    if (g->gemm_epilogue_overlap)
        jsonw_bool(jsonw_key(&w, "gemm_epilogue_overlap"), TRUE);
    if (g->pcie_Bps > 0)
        jsonw_number(jsonw_key(&w, "pcie_GBps"), g->pcie_Bps / 1e9);
    jsonw_number(jsonw_key(&w, "memory_GiB"), g->memory_bytes / 1073741824.0);
    jsonw_number(jsonw_key(&w, "runtime_reserve_GiB"), g->reserve_bytes / 1073741824.0);
    jsonw_number(jsonw_key(&w, "memory_bandwidth_GBps"), g->memory_Bps / 1e9);
    jsonw_number(jsonw_key(&w, "compute_efficiency"), g->compute_efficiency);
    jsonw_number(jsonw_key(&w, "memory_efficiency"), g->memory_efficiency);
    jsonw_number(jsonw_key(&w, "kernel_launch_us"), g->launch_s * 1e6);
    jsonw_number(jsonw_key(&w, "comm_compute_interference"), g->comm_interference);
    jsonw_number(jsonw_key(&w, "gemm_sustained"), gpu_gemm_sustained(g));
    jsonw_number(jsonw_key(&w, "attention_forward_efficiency"), gpu_attention_efficiency(g, TRUE));
    jsonw_number(jsonw_key(&w, "attention_backward_efficiency"),
                 gpu_attention_efficiency(g, FALSE));
    if (g->sm_count > 0)
        jsonw_int(jsonw_key(&w, "sm_count"), g->sm_count);
    write_curve(&w, "gemm_efficiency", &g->gemm);
    write_curve(&w, "attention_head_dim_factor", &g->attention_head_dim);
    write_curve(&w, "attention_seq_factor", &g->attention_seq);
    gboolean shares = FALSE;
    for (int d = 0; d < DTYPES; d++)
        shares |= g->gemm_dtype_share[d] > 0;
    if (shares) {
        jsonw_begin_object(jsonw_key(&w, "gemm_dtype_share"), JSONW_INLINE);
        for (int d = DTYPE_BF16 + 1; d < DTYPES; d++)
            if (g->gemm_dtype_share[d] > 0)
                jsonw_number(jsonw_key(&w, dtype_names[d]), g->gemm_dtype_share[d]);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_begin_object(jsonw_key(&w, "intra_node"), 4);
    link_keys(&w, &c->intra, c->protocols);
    jsonw_number(jsonw_key(&w, "base_latency_us"), c->base_latency_s * 1e6);
    if (c->nvls) {
        jsonw_bool(jsonw_key(&w, "nvls"), TRUE);
        jsonw_number(jsonw_key(&w, "nvls_efficiency"), efficiency(c->nvls_efficiency));
        jsonw_number(jsonw_key(&w, "nvls_latency_us"), c->nvls_latency_s * 1e6);
    }
    jsonw_end(&w);
    jsonw_begin_object(jsonw_key(&w, "inter_node"), 4);
    link_keys(&w, &c->inter, c->protocols);
    jsonw_number(jsonw_key(&w, "tree_efficiency"), efficiency(c->tree_efficiency));
    jsonw_int(jsonw_key(&w, "nics_per_node"), c->nics_per_node);
    jsonw_number(jsonw_key(&w, "oversubscription"), c->oversubscription);
    jsonw_end(&w);
    write_calibration(&w, c->calibration);
    jsonw_end(&w);
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}

int cluster_spec_gpus(const ClusterSpec *cluster)
{
    return cluster->nodes * cluster->gpus_per_node;
}

gboolean cluster_spec_has_param(const ClusterSpec *c, ClusterParam p)
{
    switch (param_needs[p]) {
    case NEEDS_LL:
        return c->protocols >> PROTOCOL_LL & 1;
    case NEEDS_LL128:
        return c->protocols >> PROTOCOL_LL128 & 1;
    case NEEDS_NVLS:
        return c->nvls;
    case NEEDS_CURVE:
        return c->gpu.gemm.n > 0;
    default:
        return TRUE;
    }
}
