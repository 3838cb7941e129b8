/* topology.c: link numbering and paths.
 *
 * Links are numbered in blocks, one a class in LinkClass order: NVLink out
 * then in for every GPU, NIC out then in for every NIC of every node, leaf
 * up then down for every rail, host link out then in for every GPU, uplink
 * up then down for every PCIe switch of every node, and one link for every
 * CPU's memory; a class the cluster lacks has an empty block. GPUs share
 * the units of a class in order (a NIC: as the NICs divide the GPUs; a
 * switch or a CPU: host_path's GPUs each). A NIC's capacity is the
 * per-GPU InfiniBand bandwidth times the GPUs that share it; a rail's
 * spine links carry all the cluster's NICs on that rail (every node's,
 * used or not), divided by the oversubscription. */
#include "net/topology.h"

#include <string.h>

/* A class's links: `units` a node (the spine's: the rails, in all), each
 * with `directions` links (out and in, or one both ways), shared by
 * `gpus` GPUs in order (0: as the NICs divide them). */
typedef struct {
    int base; /* its first link */
    int units, directions, gpus;
} Block;

struct Topology {
    int nodes, gpus_per_node, nics;
    int gpus;
    Block block[LINK_CLASSES];
    int n_links;
    gboolean nic_via_host;  /* HostPathSpec's */
    LinkSpec link[2];       /* inside a node, across nodes */
    unsigned protocols;     /* ClusterSpec's */
    double base_latency_s;  /* ClusterSpec's */
    double tree_efficiency; /* ClusterSpec's, 1 for 0 */
    gboolean nvls;          /* ClusterSpec's, and its: */
    double nvls_efficiency, nvls_latency_s;
    double capacity[LINK_CLASSES]; /* per link of each class */
    double *slowdown;              /* per link, 1 / its what-if factor; NULL: all 1 */
};

/* Each class as reports name it and as its links' names spell it: "node N
 * <unit> U <infix><direction>" ("rail U spine up" for the spine). */
static const struct {
    const char *name, *unit, *infix;
    const char *dir[2]; /* out and in (up and down); "" for a link both ways */
} classes[LINK_CLASSES] = {
    [LINK_NVLINK] = {"nvlink", "gpu", "nvlink ", {"out", "in"}},
    [LINK_NIC] = {"nic", "nic", "", {"out", "in"}},
    [LINK_SPINE] = {"spine", "rail", "spine ", {"up", "down"}},
    [LINK_HOST] = {"host", "gpu", "host ", {"out", "in"}},
    [LINK_UPLINK] = {"uplink", "switch", "", {"up", "down"}},
    [LINK_MEMORY] = {"memory", "cpu", "memory", {"", ""}},
};

double topology_nic_capacity(const ClusterSpec *cluster, int *nics)
{
    *nics = MIN(cluster->nics_per_node, cluster->gpus_per_node);
    return cluster->inter.bandwidth_Bps * cluster->gpus_per_node / *nics;
}

/* The units of `gpus` GPUs each on a node of `per_node`, none for 0. */
static int shared_units(int per_node, int gpus)
{
    return gpus > 0 ? (per_node + gpus - 1) / gpus : 0;
}

Topology *topology_new(const ClusterSpec *cluster, int nodes)
{
    g_assert(nodes >= 1 && nodes <= cluster->nodes);
    Topology *t = g_new0(Topology, 1);
    t->nodes = nodes;
    int per_node = t->gpus_per_node = cluster->gpus_per_node;
    double nic_Bps = topology_nic_capacity(cluster, &t->nics);
    t->gpus = nodes * per_node;
    const HostPathSpec *host = &cluster->host_path;
    gboolean host_links = cluster->gpu.pcie_Bps > 0;
    int switch_gpus = host->shared[HOST_SWITCH].gpus, cpu_gpus = host->shared[HOST_CPU].gpus;
    const Block blocks[LINK_CLASSES] = {
        [LINK_NVLINK] = {.units = per_node, .gpus = 1},
        [LINK_NIC] = {.units = t->nics},
        [LINK_SPINE] = {.units = t->nics},
        [LINK_HOST] = {.units = host_links ? per_node : 0, .gpus = 1},
        [LINK_UPLINK] = {.units = shared_units(per_node, switch_gpus), .gpus = switch_gpus},
        [LINK_MEMORY] = {.units = shared_units(per_node, cpu_gpus), .gpus = cpu_gpus},
    };
    for (int c = 0; c < LINK_CLASSES; c++) {
        t->block[c] = blocks[c];
        t->block[c].directions = topology_directions((LinkClass)c);
        t->block[c].base = t->n_links;
        t->n_links += blocks[c].units * t->block[c].directions * (c == LINK_SPINE ? 1 : nodes);
    }
    g_assert(!host->nic_via_host || host_links); /* cluster.c refuses it */
    t->nic_via_host = host->nic_via_host;
    t->link[0] = cluster->intra;
    t->link[1] = cluster->inter;
    t->protocols = cluster->protocols;
    t->base_latency_s = cluster->base_latency_s;
    t->tree_efficiency = cluster->tree_efficiency > 0 ? cluster->tree_efficiency : 1;
    t->nvls = cluster->nvls;
    t->nvls_efficiency = cluster->nvls_efficiency > 0 ? cluster->nvls_efficiency : 1;
    t->nvls_latency_s = cluster->nvls_latency_s;
    const double capacity[LINK_CLASSES] = {
        [LINK_NVLINK] = cluster->intra.bandwidth_Bps,
        [LINK_NIC] = nic_Bps,
        [LINK_SPINE] = nic_Bps * cluster->nodes / cluster->oversubscription,
        [LINK_HOST] = cluster->gpu.pcie_Bps,
        [LINK_UPLINK] = host->shared[HOST_SWITCH].bandwidth_Bps,
        [LINK_MEMORY] = host->shared[HOST_CPU].bandwidth_Bps,
    };
    memcpy(t->capacity, capacity, sizeof capacity);
    return t;
}

void topology_free(Topology *t)
{
    if (t)
        g_free(t->slowdown);
    g_free(t);
}

int topology_links(const Topology *t)
{
    return t->n_links;
}

double topology_capacity(const Topology *t, int link)
{
    return t->capacity[topology_class(t, link)] / topology_slowdown(t, link);
}

void topology_trim_nic_paths(Topology *t, gboolean copies)
{
    if (!copies && !t->slowdown && t->capacity[LINK_HOST] >= t->capacity[LINK_NIC])
        t->nic_via_host = FALSE;
}

void topology_scale_link(Topology *t, int link, double factor)
{
    g_assert(link >= 0 && link < t->n_links && factor > 0 && factor <= 1);
    if (!t->slowdown) {
        t->slowdown = g_new(double, t->n_links);
        for (int l = 0; l < t->n_links; l++)
            t->slowdown[l] = 1;
    }
    t->slowdown[link] = 1 / factor;
}

double topology_slowdown(const Topology *t, int link)
{
    return t->slowdown ? t->slowdown[link] : 1;
}

int topology_find_link(const Topology *t, const char *name, int links[2])
{
    int n = 0;
    gsize len = strlen(name);
    for (int l = 0; l < t->n_links && n < 2; l++) {
        g_autofree char *full = topology_link_name(t, l);
        /* the whole name, or all of it but the direction (the last word) */
        if (strcmp(full, name) == 0 ||
            (strncmp(full, name, len) == 0 && full[len] == ' ' && !strchr(full + len + 1, ' ')))
            links[n++] = l;
    }
    return n;
}

double topology_class_capacity(const Topology *t, LinkClass c)
{
    return t->capacity[c];
}

LinkClass topology_class(const Topology *t, int link)
{
    int c = LINK_CLASSES - 1; /* the last block that starts at or before it: an empty one
                               * starts where the next does */
    while (c > 0 && t->block[c].base > link)
        c--;
    return (LinkClass)c;
}

const char *topology_class_name(LinkClass c)
{
    return classes[c].name;
}

int topology_directions(LinkClass c)
{
    return classes[c].dir[0][0] ? 2 : 1;
}

/* The link of class `c`, node `node` (ignored for the spine), unit `unit`
 * and direction `dir` (ignored for a link both ways). */
static int unit_link(const Topology *t, LinkClass c, int node, int unit, int dir)
{
    const Block *b = &t->block[c];
    int index = c == LINK_SPINE ? unit : node * b->units + unit;
    return b->base + index * b->directions + dir % b->directions;
}

/* GPU `gpu`'s own link of class `c` (a unit a GPU: NVLink, host) in
 * direction `dir`: unit_link's, its unit's index being the GPU's. */
static inline int own_link(const Topology *t, LinkClass c, int gpu, int dir)
{
    return t->block[c].base + 2 * gpu + dir;
}

/* The class of `link`, and its node (0 for the spine), unit and direction. */
static LinkClass locate(const Topology *t, int link, int *node, int *unit, int *dir)
{
    LinkClass c = topology_class(t, link);
    const Block *b = &t->block[c];
    int index = (link - b->base) / b->directions;
    *dir = (link - b->base) % b->directions;
    *node = c == LINK_SPINE ? 0 : index / b->units;
    *unit = c == LINK_SPINE ? index : index % b->units;
    return c;
}

char *topology_link_name(const Topology *t, int link)
{
    int node, unit, dir;
    LinkClass c = locate(t, link, &node, &unit, &dir);
    g_autofree char *at = c == LINK_SPINE ? g_strdup("") : g_strdup_printf("node %d ", node);
    return g_strdup_printf("%s%s %d %s%s", at, classes[c].unit, unit, classes[c].infix,
                           classes[c].dir[dir]);
}

int topology_node(const Topology *t, int gpu)
{
    return gpu / t->gpus_per_node;
}

double topology_link_alpha(const LinkSpec *l, CollProtocol p)
{
    return p == PROTOCOL_LL      ? l->ll_latency_s
           : p == PROTOCOL_LL128 ? l->ll128_latency_s
                                 : l->latency_s;
}

double topology_link_efficiency(const LinkSpec *l)
{
    return l->efficiency > 0 ? l->efficiency : 1;
}

double topology_alpha(const Topology *t, gboolean across_nodes, CollProtocol p)
{
    return topology_link_alpha(&t->link[across_nodes ? 1 : 0], p);
}

double topology_efficiency(const Topology *t, gboolean across_nodes)
{
    return topology_link_efficiency(&t->link[across_nodes ? 1 : 0]);
}

gboolean topology_has_protocol(const Topology *t, CollProtocol p)
{
    return p == PROTOCOL_SIMPLE || (t->protocols >> p & 1);
}

double topology_base_latency(const Topology *t)
{
    return t->base_latency_s;
}

double topology_tree_efficiency(const Topology *t)
{
    return t->tree_efficiency;
}

gboolean topology_nvls(const Topology *t, double *efficiency, double *latency_s)
{
    *efficiency = t->nvls_efficiency;
    *latency_s = t->nvls_latency_s;
    return t->nvls;
}

int topology_nics(const Topology *t)
{
    return t->nics;
}

int topology_gpus(const Topology *t)
{
    return t->gpus;
}

int topology_gpus_per_node(const Topology *t)
{
    return t->gpus_per_node;
}

int topology_units(const Topology *t, LinkClass c)
{
    return t->block[c].units;
}

int topology_gpu_unit(const Topology *t, int gpu, LinkClass c)
{
    int local = gpu % t->gpus_per_node, shared = t->block[c].gpus;
    return shared ? local / shared : local * t->nics / t->gpus_per_node;
}

int topology_unit_link(const Topology *t, LinkClass c, int unit, int dir)
{
    g_assert(c != LINK_SPINE);
    return unit_link(t, c, 0, unit, dir);
}

int topology_nic(const Topology *t, int gpu)
{
    return topology_gpu_unit(t, gpu, LINK_NIC);
}

int topology_host(const Topology *t, int gpu)
{
    g_assert(gpu >= 0 && gpu < t->gpus && t->block[LINK_HOST].units > 0);
    return t->gpus + gpu;
}

/* The first local index of the GPUs that share unit `unit` of class `c`. */
static int first_local(const Topology *t, LinkClass c, int unit)
{
    int shared = t->block[c].gpus;
    return shared ? unit * shared : (unit * t->gpus_per_node + t->nics - 1) / t->nics;
}

int topology_link_image(const Topology *t, int link, int (*map)(void *ctx, int gpu), void *ctx)
{
    int node, unit, dir;
    LinkClass c = locate(t, link, &node, &unit, &dir);
    /* the image of the unit's first GPU (a rail's: on node 0) has the image unit */
    int image = map(ctx, node * t->gpus_per_node + first_local(t, c, unit));
    return topology_gpu_link(t, image, c, dir);
}

int topology_gpu_link(const Topology *t, int gpu, LinkClass c, int dir)
{
    g_assert(gpu >= 0 && gpu < t->gpus && (dir == 0 || dir == 1));
    if (t->block[c].units == 0)
        return -1;
    return unit_link(t, c, topology_node(t, gpu), topology_gpu_unit(t, gpu, c), dir);
}

/* The links of a copy between GPU `gpu` and its host, down (`up` FALSE:
 * host link out, uplink up, memory) or up (the same, reversed and in the
 * other direction), whichever of them the cluster has. */
static void host_path(const Topology *t, int gpu, gboolean up, int links[TOPOLOGY_MAX_PATH], int *n)
{
    static const LinkClass order[] = {LINK_HOST, LINK_UPLINK, LINK_MEMORY};
    int k = G_N_ELEMENTS(order);
    *n = 0;
    for (int i = 0; i < k; i++) {
        int l = topology_gpu_link(t, gpu, order[up ? k - 1 - i : i], up);
        if (l >= 0)
            links[(*n)++] = l;
    }
}

void topology_path(const Topology *t, int src, int dst, int links[TOPOLOGY_MAX_PATH], int *n)
{
    g_assert(src >= 0 && src < 2 * t->gpus && dst >= 0 && dst < 2 * t->gpus);
    *n = 0;
    if (src == dst)
        return;
    if (src >= t->gpus || dst >= t->gpus) { /* a copy between a GPU and its host */
        gboolean up = src >= t->gpus;
        int gpu = up ? dst : src;
        g_assert((up ? src : dst) == topology_host(t, gpu));
        host_path(t, gpu, up, links, n);
        return;
    }
    int a = topology_node(t, src), b = topology_node(t, dst);
    if (a == b) {
        links[(*n)++] = own_link(t, LINK_NVLINK, src, 0);
        links[(*n)++] = own_link(t, LINK_NVLINK, dst, 1);
        return;
    }
    int na = topology_nic(t, src), nb = topology_nic(t, dst);
    if (t->nic_via_host)
        links[(*n)++] = own_link(t, LINK_HOST, src, 0);
    links[(*n)++] = unit_link(t, LINK_NIC, a, na, 0);
    if (na != nb) {
        links[(*n)++] = unit_link(t, LINK_SPINE, 0, na, 0);
        links[(*n)++] = unit_link(t, LINK_SPINE, 0, nb, 1);
    }
    links[(*n)++] = unit_link(t, LINK_NIC, b, nb, 1);
    if (t->nic_via_host)
        links[(*n)++] = own_link(t, LINK_HOST, dst, 1);
}
