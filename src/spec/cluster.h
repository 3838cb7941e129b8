/* cluster.h: what a simulation runs on, as plain C structs (cluster.c): the GPU
 * (spec/gpu.h), NVLink inside a node, InfiniBand between nodes, storage,
 * reliability, the host and the path to it, and a calibrated profile's
 * record.
 *
 * Read from a cluster file and fully validated; nothing outside src/spec/
 * sees cJSON. Every error names the file, the JSON path, the bad value and
 * what was expected.
 *
 * Units: sizes are counts; rates are SI (FLOP/s, bytes/s); times seconds;
 * memory bytes. The JSON files use the units their key names say (GBps is
 * 1e9 bytes per second, per GPU per direction; us is microseconds; GiB is
 * 2^30 bytes) and the parser converts. */
#ifndef PLANSIM_SPEC_CLUSTER_H
#define PLANSIM_SPEC_CLUSTER_H

#include <glib.h>

#include "base/names.h"
#include "spec/gpu.h"

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

/* What interrupts a run and what a restart costs (the cluster's
 * "reliability", metrics/run.h). Any failure stops the whole job (a
 * synchronous step needs every GPU). A cluster file's absent keys take
 * the defaults of cluster.c (docs/inputs.md, "Reliability"); a cluster
 * built in code has none: no failures, free restarts. */
typedef enum { FAILURE_GPU, FAILURE_NODE, FAILURE_NIC, FAILURE_KINDS } FailureKind;

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

/* What the GPUs of a node share on their way to the host: the uplink of
 * a PCIe switch to the CPU (per direction), and a CPU's memory (reads and
 * writes together). */
typedef enum { HOST_SWITCH, HOST_CPU, HOST_SHARED } HostShared;

typedef struct {
    int gpus;             /* GPUs, in order, that share one; 0: not modelled */
    double bandwidth_Bps; /* its bandwidth */
} HostResource;

/* The host path (docs/model.md, "The host path"): each GPU's link to its
 * host (gpu.pcie_Bps, PCIe or a Grace's NVLink-C2C) and what the GPUs of a
 * node share beyond it. A cluster file without "host_path", or a cluster
 * built in code: each GPU's host link alone (all 0). */
typedef struct {
    gboolean nic_via_host; /* traffic between nodes crosses the GPU's host link: its
                            * NIC hangs from the GPU's PCIe switch (GPUDirect RDMA) */
    HostResource shared[HOST_SHARED];
} HostPathSpec;

typedef struct {
    char *name;
    int nodes;
    int gpus_per_node; /* the GPUs of each node the job uses */
    int node_gpus;     /* a node's GPUs, when the job uses fewer of each; else 0 */
    GpuSpec gpu;
    LinkSpec intra;          /* NVLink inside a node */
    LinkSpec inter;          /* InfiniBand between nodes, per GPU */
    int nics_per_node;       /* GPUs share a NIC when there are fewer */
    double oversubscription; /* of the spine over the rail leaves, >= 1 */
    double gpu_hour_price;   /* a GPU-hour's price, any currency ("gpu_hour_price"); 0: none */
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
    HostPathSpec host_path;
    char *path;                      /* the file it was read from, for errors; NULL if built */
    ClusterCalibration *calibration; /* how calibrate fitted it; NULL: no record */
} ClusterSpec;

/* The most GPUs a cluster may hold. */
#define CLUSTER_MAX_GPUS (1 << 20)

/* Reads a cluster file; `nodes_override` > 0 replaces its "nodes". */
ClusterSpec *cluster_spec_load(const char *path, int nodes_override, GError **error);

/* The job uses `used` GPUs of each node (0: all), as Slurm's block
 * scheduling lays a job of 64 GPUs a rack over NVL72 racks of 72: each
 * node is then `used` GPUs, the rest idle, with their NICs (one a GPU, or
 * it is refused) and their share of the host's memory; node_gpus keeps
 * the node's count for the report. `origin` names the setting in errors. */
gboolean cluster_spec_use_gpus_per_node(ClusterSpec *c, int used, const char *origin,
                                        GError **error);
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

#endif
