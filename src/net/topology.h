/* topology.h: the links of a cluster, and the path between two GPUs or
 * between a GPU and its host.
 *
 * Inside a node each GPU has an NVLink port to the NVSwitch, one link out
 * and one in. Across nodes each node has nics_per_node NICs (GPUs share
 * them in order when there are fewer NICs than GPUs), one link out and one
 * in; NIC i of every node hangs from leaf switch i (rail-optimized), and
 * the leaves meet at a spine whose links are `oversubscription` times
 * thinner than the NICs beneath them. A path between GPUs on one node is
 * (NVLink out, NVLink in); between nodes on the same rail (NIC out, NIC
 * in); between rails (NIC out, leaf up, leaf down, NIC in).
 *
 * The host path (spec/cluster.h, HostPathSpec; docs/model.md, "The host
 * path"): each GPU has a host link (its PCIe x16, or NVLink-C2C to a
 * Grace), one link out (to the host) and one in, when the GPU gives its
 * bandwidth; the GPUs of a node may share, in order, PCIe switches whose
 * uplink to the CPU has a link up and one down, and CPUs whose memory is
 * one link both ways. A copy from a GPU to its host crosses (host link
 * out, uplink up, memory), back (memory, uplink down, host link in),
 * whichever of them the cluster has. Where the NICs hang from the GPUs'
 * PCIe switches (nic_via_host), a path between nodes crosses the sender's
 * host link out first and the receiver's host link in last. Capacities are
 * bytes/s in one direction (a memory's: both together). */
#ifndef PLANSIM_NET_TOPOLOGY_H
#define PLANSIM_NET_TOPOLOGY_H

#include <glib.h>

#include "spec/cluster.h"

/* The classes, in the order their links are numbered: a block of each. */
typedef enum {
    LINK_NVLINK,
    LINK_NIC,
    LINK_SPINE,
    LINK_HOST,
    LINK_UPLINK,
    LINK_MEMORY,
    LINK_CLASSES
} LinkClass;

#define TOPOLOGY_MAX_PATH 6

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

/* Keeps the paths between nodes on the host links (HostPathSpec's
 * nic_via_host) only where they may bind: when `copies` run over the host
 * path, or some host link is narrower than a NIC, or some link is slowed
 * (topology_scale_link, first). Else a GPU's host link carries a part of
 * its NIC's flows at no less capacity, so the max-min rates are the same
 * without it, and the paths leave it out. */
void topology_trim_nic_paths(Topology *t, gboolean copies);

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

/* "node 3 gpu 5 nvlink out", "node 0 nic 2 in", "rail 2 spine up",
 * "node 0 gpu 1 host out", "node 0 switch 1 down", "node 1 cpu 0 memory". */
char *topology_link_name(const Topology *t, int link);

/* "nvlink", "nic", "spine", "host", "uplink", "memory". */
const char *topology_class_name(LinkClass c);

/* The links of one unit of class `c`: 2 (out and in, up and down), or 1
 * for a CPU's memory, both ways. */
int topology_directions(LinkClass c);

/* The link of class `c` that GPU `gpu` sends through (`dir` 0) or
 * receives through (1): its NVLink port's, its NIC's, its host link's
 * (out: to the host), its PCIe switch's uplink (up: to the CPU) or its
 * CPU's memory (both ways); for LINK_SPINE, its rail's spine link up (0)
 * or down (1). -1 when the cluster has no link of that class. */
int topology_gpu_link(const Topology *t, int gpu, LinkClass c, int dir);

/* The units of class `c` on a node (NVLink ports, NICs, host links,
 * switches, CPUs; for LINK_SPINE the rails), and the one GPU `gpu` uses,
 * numbered on its node (its rail). GPUs share the units of a class in
 * order: a GPU of a unit of its own has the unit of its local index. */
int topology_units(const Topology *t, LinkClass c);
int topology_gpu_unit(const Topology *t, int gpu, LinkClass c);

/* The link of class `c` (not the spine) of unit `unit`, numbered over the
 * nodes (node x topology_units + its unit on the node), in direction
 * `dir` (ignored for a link both ways): a class's links are numbered so,
 * unit after unit. */
int topology_unit_link(const Topology *t, LinkClass c, int unit, int dir);

/* The host of GPU `gpu`, as an end of a path (topology_path) and of a
 * transfer (net/algorithm.h): topology_gpus + gpu, so that a shift of the
 * GPUs that adds a multiple of a stride to a GPU's number moves its host
 * alike (net/symmetry.h). The cluster must give the GPU's host link. */
int topology_host(const Topology *t, int gpu);

/* The links from `src` to `dst`, *n of them, 0 when they are the same:
 * between GPUs (global numbers), or between a GPU and its host
 * (topology_host), a copy down or up. */
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
 * share a NIC, a switch or a CPU onto GPUs that share one): the link that
 * joins the images of what `link` joins, in the same direction. The link classes follow from
 * the orbits of the GPUs instead (symmetry_link_classes); tests check
 * them against the orbits these images make. */
int topology_link_image(const Topology *t, int link, int (*map)(void *ctx, int gpu), void *ctx);

#endif
