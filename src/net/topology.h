/* topology.h: the links of a cluster, and the path between two GPUs.
 *
 * Inside a node each GPU has an NVLink port to the NVSwitch, one link out
 * and one in. Across nodes each node has nics_per_node NICs (GPUs share
 * them in order when there are fewer NICs than GPUs), one link out and one
 * in; NIC i of every node hangs from leaf switch i (rail-optimized), and
 * the leaves meet at a spine whose links are `oversubscription` times
 * thinner than the NICs beneath them. A path between GPUs on one node is
 * (NVLink out, NVLink in); between nodes on the same rail (NIC out, NIC
 * in); between rails (NIC out, leaf up, leaf down, NIC in). Capacities are
 * bytes/s in one direction. */
#ifndef PLANSIM_NET_TOPOLOGY_H
#define PLANSIM_NET_TOPOLOGY_H

#include <glib.h>

#include "spec/cluster.h"

typedef enum { LINK_NVLINK, LINK_NIC, LINK_SPINE, LINK_CLASSES } LinkClass;

#define TOPOLOGY_MAX_PATH 4

typedef struct Topology Topology;

/* A node's NICs (its GPUs share them when there are fewer), set in *nics,
 * and a NIC's capacity per direction, bytes/s: the per-GPU InfiniBand
 * bandwidth times the GPUs that share it. */
double topology_nic_capacity(const ClusterSpec *cluster, int *nics);

/* The links of the first `nodes` nodes of `cluster`. */
Topology *topology_new(const ClusterSpec *cluster, int nodes);
void topology_free(Topology *t);

int topology_links(const Topology *t);
/* A link's capacity, bytes/s in its direction: its class's. */
double topology_capacity(const Topology *t, int link);
double topology_class_capacity(const Topology *t, LinkClass c);
LinkClass topology_class(const Topology *t, int link);

/* A what-if (app/whatif.h): `link` runs at `factor` (0 < factor <= 1) of
 * its class's capacity, a degraded NIC or NVLink port. topology_capacity
 * gives the link's own; topology_slowdown is 1 / factor (1 for a whole
 * link), what the link's bytes weigh against its class's capacity. */
void topology_scale_link(Topology *t, int link, double factor);
double topology_slowdown(const Topology *t, int link);

/* The links named `name` as topology_link_name prints them ("node 0 nic 2
 * out"), or without the direction for both ("node 0 nic 2"): returns how
 * many (0: no such link) and stores them in `links`. */
int topology_find_link(const Topology *t, const char *name, int links[2]);

/* "node 3 gpu 5 nvlink out", "node 0 nic 2 in", "rail 2 spine up". */
char *topology_link_name(const Topology *t, int link);

/* "nvlink", "nic", "spine". */
const char *topology_class_name(LinkClass c);

/* The link of class `c` that GPU `gpu` sends through (`dir` 0) or
 * receives through (1): its NVLink port's or its NIC's; for LINK_SPINE,
 * its rail's spine link up (0) or down (1). */
int topology_gpu_link(const Topology *t, int gpu, LinkClass c, int dir);

/* The links from GPU `src` to GPU `dst` (global GPU numbers): *n of them,
 * 0 when they are the same GPU. */
void topology_path(const Topology *t, int src, int dst, int links[TOPOLOGY_MAX_PATH], int *n);

/* The node of a GPU. */
int topology_node(const Topology *t, int gpu);

/* The cluster's collective model (spec/cluster.h, LinkSpec and ClusterSpec): the
 * latency per message inside a node or across nodes with protocol `p`;
 * the fraction of a link's capacity the Simple protocol reaches there (1
 * for an ideal link); whether `p` is modelled (Simple always is); the
 * base latency of every collective; the tree's efficiency between nodes
 * (1 for an ideal cluster); and whether the nodes have NVLink SHARP, with
 * its efficiency and latency. */
double topology_alpha(const Topology *t, gboolean across_nodes, CollProtocol p);
/* The same of a link class `l` alone: its latency per message with
 * protocol `p`, and its Simple efficiency (1 when not given): the one
 * home of those defaults, for the topology and for the bounds of
 * netbound.h, which have a cluster but no topology. */
double topology_link_alpha(const LinkSpec *l, CollProtocol p);
double topology_link_efficiency(const LinkSpec *l);
double topology_efficiency(const Topology *t, gboolean across_nodes);
gboolean topology_has_protocol(const Topology *t, CollProtocol p);
double topology_base_latency(const Topology *t);
double topology_tree_efficiency(const Topology *t);
gboolean topology_nvls(const Topology *t, double *efficiency, double *latency_s);

/* NICs per node; GPUs, all and per node. */
int topology_nics(const Topology *t);
int topology_gpus(const Topology *t);
int topology_gpus_per_node(const Topology *t);

/* The NIC (0 .. nics - 1 of its node) a GPU sends through. */
int topology_nic(const Topology *t, int gpu);

/* The image of `link` under a permutation `map` of the GPUs that maps the
 * cluster onto itself (whole nodes onto whole nodes, and the GPUs that
 * share a NIC onto GPUs that share one): the link that joins the images of
 * what `link` joins, in the same direction. The link classes follow from
 * the orbits of the GPUs instead (symmetry_link_classes); tests check
 * them against the orbits these images make. */
int topology_link_image(const Topology *t, int link, int (*map)(void *ctx, int gpu), void *ctx);

#endif
