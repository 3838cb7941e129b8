/* topology.c: link numbering and paths.
 *
 * Links are numbered in blocks: NVLink out then in for every GPU, NIC out
 * then in for every NIC of every node, leaf up then down for every rail.
 * A NIC's capacity is the per-GPU InfiniBand bandwidth times the GPUs that
 * share it; a rail's spine links carry all the cluster's NICs on that rail
 * (every node's, used or not), divided by the oversubscription. */
#include "net/topology.h"

#include <string.h>

struct Topology {
    int nodes, gpus_per_node, nics;
    int gpus;
    int nvlink_base, nic_base, spine_base, n_links;
    LinkSpec link[2];       /* inside a node, across nodes */
    unsigned protocols;     /* ClusterSpec's */
    double base_latency_s;  /* ClusterSpec's */
    double tree_efficiency; /* ClusterSpec's, 1 for 0 */
    gboolean nvls;          /* ClusterSpec's, and its: */
    double nvls_efficiency, nvls_latency_s;
    double capacity[LINK_CLASSES]; /* per link of each class */
    double *slowdown;              /* per link, 1 / its what-if factor; NULL: all 1 */
};

static const char *const class_names[LINK_CLASSES] = {"nvlink", "nic", "spine"};

double topology_nic_capacity(const ClusterSpec *cluster, int *nics)
{
    *nics = MIN(cluster->nics_per_node, cluster->gpus_per_node);
    return cluster->inter.bandwidth_Bps * cluster->gpus_per_node / *nics;
}

Topology *topology_new(const ClusterSpec *cluster, int nodes)
{
    g_assert(nodes >= 1 && nodes <= cluster->nodes);
    Topology *t = g_new0(Topology, 1);
    t->nodes = nodes;
    t->gpus_per_node = cluster->gpus_per_node;
    double nic_Bps = topology_nic_capacity(cluster, &t->nics);
    t->gpus = nodes * t->gpus_per_node;
    t->nvlink_base = 0;
    t->nic_base = 2 * t->gpus;
    t->spine_base = t->nic_base + 2 * nodes * t->nics;
    t->n_links = t->spine_base + 2 * t->nics;
    t->link[0] = cluster->intra;
    t->link[1] = cluster->inter;
    t->protocols = cluster->protocols;
    t->base_latency_s = cluster->base_latency_s;
    t->tree_efficiency = cluster->tree_efficiency > 0 ? cluster->tree_efficiency : 1;
    t->nvls = cluster->nvls;
    t->nvls_efficiency = cluster->nvls_efficiency > 0 ? cluster->nvls_efficiency : 1;
    t->nvls_latency_s = cluster->nvls_latency_s;
    t->capacity[LINK_NVLINK] = cluster->intra.bandwidth_Bps;
    t->capacity[LINK_NIC] = nic_Bps;
    t->capacity[LINK_SPINE] = nic_Bps * cluster->nodes / cluster->oversubscription;
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
    return link < t->nic_base ? LINK_NVLINK : link < t->spine_base ? LINK_NIC : LINK_SPINE;
}

const char *topology_class_name(LinkClass c)
{
    return class_names[c];
}

char *topology_link_name(const Topology *t, int link)
{
    const char *dir = link % 2 ? "in" : "out";
    switch (topology_class(t, link)) {
    case LINK_NVLINK: {
        int gpu = (link - t->nvlink_base) / 2;
        return g_strdup_printf("node %d gpu %d nvlink %s", gpu / t->gpus_per_node,
                               gpu % t->gpus_per_node, dir);
    }
    case LINK_NIC: {
        int nic = (link - t->nic_base) / 2;
        return g_strdup_printf("node %d nic %d %s", nic / t->nics, nic % t->nics, dir);
    }
    default:
        break;
    }
    return g_strdup_printf("rail %d spine %s", (link - t->spine_base) / 2,
                           link % 2 ? "down" : "up");
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

/* GPUs share NICs in order. */
int topology_nic(const Topology *t, int gpu)
{
    return gpu % t->gpus_per_node * t->nics / t->gpus_per_node;
}

/* The link out (dir 0) or in (1) of NIC `nic` of node `node`. */
static int nic_link(const Topology *t, int node, int nic, int dir)
{
    return t->nic_base + 2 * (node * t->nics + nic) + dir;
}

/* The first GPU of a node (its local index) that sends through NIC `nic`. */
static int first_local(const Topology *t, int nic)
{
    return (nic * t->gpus_per_node + t->nics - 1) / t->nics;
}

int topology_link_image(const Topology *t, int link, int (*map)(void *ctx, int gpu), void *ctx)
{
    int dir = link % 2;
    switch (topology_class(t, link)) {
    case LINK_NVLINK:
        return t->nvlink_base + 2 * map(ctx, (link - t->nvlink_base) / 2) + dir;
    case LINK_NIC: { /* the image of the NIC's first GPU has the image NIC */
        int nic = (link - t->nic_base) / 2;
        int image = map(ctx, nic / t->nics * t->gpus_per_node + first_local(t, nic % t->nics));
        return nic_link(t, topology_node(t, image), topology_nic(t, image), dir);
    }
    default:
        break;
    }
    int image = map(ctx, first_local(t, (link - t->spine_base) / 2)); /* via node 0's NIC */
    return t->spine_base + 2 * topology_nic(t, image) + dir;
}

int topology_gpu_link(const Topology *t, int gpu, LinkClass c, int dir)
{
    g_assert(gpu >= 0 && gpu < t->gpus && (dir == 0 || dir == 1));
    switch (c) {
    case LINK_NVLINK:
        return t->nvlink_base + 2 * gpu + dir;
    case LINK_NIC:
        return nic_link(t, topology_node(t, gpu), topology_nic(t, gpu), dir);
    default:
        break;
    }
    return t->spine_base + 2 * topology_nic(t, gpu) + dir;
}

void topology_path(const Topology *t, int src, int dst, int links[TOPOLOGY_MAX_PATH], int *n)
{
    g_assert(src >= 0 && src < t->gpus && dst >= 0 && dst < t->gpus);
    *n = 0;
    if (src == dst)
        return;
    int a = topology_node(t, src), b = topology_node(t, dst);
    if (a == b) {
        links[(*n)++] = t->nvlink_base + 2 * src;
        links[(*n)++] = t->nvlink_base + 2 * dst + 1;
        return;
    }
    int na = topology_nic(t, src), nb = topology_nic(t, dst);
    links[(*n)++] = nic_link(t, a, na, 0);
    if (na != nb) {
        links[(*n)++] = t->spine_base + 2 * na;
        links[(*n)++] = t->spine_base + 2 * nb + 1;
    }
    links[(*n)++] = nic_link(t, b, nb, 1);
}
