/* net.h: the network the engine runs collectives on.
 *
 * It knows the cluster's links (topology.h) and how each algorithm
 * decomposes a collective into phases of transfers (algorithm.h). With
 * link contention on, every running transfer is a flow over the links of
 * its path, and concurrent flows share each link max-min fairly
 * (core/share.h): a collective ends when the last transfer of its last
 * phase ends, however other traffic slowed it. With contention off, every
 * collective takes the time it would alone. Either way the network is
 * driven by the engine: it starts collectives and asks when the network
 * next changes, then lets it process that instant.
 *
 * Time alone: per phase its latency plus the most loaded link's bytes over
 * its capacity (for rings and trees, the alpha-beta formulas exactly).
 * Algorithm choice (algo_choose, over algorithm.h's table): forced by the
 * plan's collective_algorithm, else by the cluster, else (auto) the
 * applicable algorithm that is fastest alone for that group and size, as
 * NCCL's tuner picks one from its cost model. A collective's route is its
 * algorithm's phases of transfers between GPUs (algorithm.h, CollRoute). Routes are cached per
 * (group, op, bytes) and numbered, so a repeated collective costs one lookup, or none by its
 * number. */
#ifndef PLANSIM_NET_NET_H
#define PLANSIM_NET_NET_H

#include <glib.h>

#include "net/algorithm.h"
#include "net/symmetry.h"
#include "net/topology.h"
#include "spec/cluster.h"

/* A collective none of whose transfers carries more than this (a packet,
 * InfiniBand's largest MTU, 4 KiB) is latency-bound: it takes its time
 * alone and loads no link (net.c). */
#define NET_PACKET_BYTES 4096.0

typedef struct Net Net;

/* The network of the first `gpus` GPUs of `cluster` (rank r on GPU r),
 * which runs `copies` between GPUs and hosts (net_copy_route) or none
 * (topology_trim_nic_paths).
 * With a symmetry `sym` (NULL: none) the collectives started stand for
 * their images too (symmetry.h): their links are link classes, and the
 * bytes of a link are those of every link of its class. With cells
 * (symmetry_new_cells) they stand for their group's instances
 * (symmetry_instances), over link units (net.c), and net_seal makes their
 * flows. `algorithm` forces one (AUTO: the cluster's choice); `tags` is
 * the number of purposes transfers are labelled with, for the per-link
 * report. `link_scale` (NULL: none; only without a symmetry, or with
 * cells around the GPUs of the links it slows) gives each link of the
 * topology the fraction of its capacity it runs at
 * (topology_scale_link). */
Net *net_new(const ClusterSpec *cluster, int gpus, const Symmetry *sym, CollAlgorithm algorithm,
             gboolean contention, int tags, const double *link_scale, gboolean copies);
void net_free(Net *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Net, net_free)

/* The route of a collective: `op` of `bytes` over the GPUs `members` (an
 * array that outlives the network, which tells groups apart by its
 * address). Made, with its algorithm, the first time it is asked for, and
 * looked up in a hash after that: callers that start many collectives of
 * one route keep its index. */
int net_route(Net *net, CollOp op, const int *members, int n, double bytes);

/* The route of a copy of `bytes` between GPU `gpu` and its host, up (to
 * the GPU) or down: one transfer over the host path (topology.h), as a
 * collective of a group of one that net_start runs; with a symmetry it
 * stands for its images, the copies of the ranks its rank stands for. The
 * cluster must give the GPUs' host links. Made the first time it is asked
 * for, looked up in a hash after that. */
int net_copy_route(Net *net, int gpu, gboolean up, double bytes);

/* One collective (or copy) of route `route` runs on `stream`, a number
 * the caller gives each stream that runs its collectives one after
 * another (>= 0). Said of every collective to start, before net_seal:
 * the routes whose collectives all run on one stream never overlap that
 * stream's other routes. */
void net_route_stream(Net *net, int route, gint64 stream);

/* Once the routes of every collective to start are made, before the
 * first starts: with cells, makes their flows; else, with `apart`, finds
 * the routes apart (net.c), whose flows need no fair share. */
void net_seal(Net *net, gboolean apart);

/* The flows of routes apart run so far, none through the share. */
guint64 net_flows_apart(const Net *net);

/* Counts the bytes of the flows apart that ran on their links: once the
 * replay is over, before the links' bytes are read. */
void net_settle(Net *net);

/* Starts collective (or copy) `token` at `now` by route `route`
 * (net_route, net_copy_route), labelled `tag`. Returns the algorithm it
 * runs. */
CollAlgorithm net_start(Net *net, double now, int32_t token, int route, int tag);

/* The generators of the symmetry (a bit each) that some collective's route
 * was not symmetric under, or whose group it split: the replay does not
 * stand for the full one, which must be replayed without them. With
 * cells, also NET_BROKEN_CELLS when the links of a unit loaded unequally
 * or a group's instances ended a phase apart: the cells do not stand for
 * the full replay. 0 when all is well. */
#define NET_BROKEN_CELLS (1u << 31)
unsigned net_broken(const Net *net);

/* The members routes single out where they break a generator (net_broken)
 * that maps their group onto itself, *n of them, each with that
 * generator's SYMMETRY_ bit: in each route, the members whose part in a
 * phase (transfers out and in, and their bytes) differs from most of
 * those its shifts move into each other, a double binary tree's roots say.
 * In cells around them (symmetry_new_cells) the routes are replayed
 * transfer by transfer and checked, as a what-if's. A generator broken
 * with none (every member plays one part) no cells can save. With cells,
 * only members not yet in cells of their own, each of which breaks its
 * generator again. */
const SymmetryMark *net_marks(const Net *net, int *n);

/* When the network next changes (a phase's latency elapses, a transfer may
 * end); INFINITY when nothing is running. */
double net_next_s(const Net *net);

/* Processes everything that happens at net_next_s; returns the tokens of
 * the collectives that ended then, *n of them, in the order they ended
 * (valid until the next call). */
const int32_t *net_step(Net *net, int *n);

/* Counts on the links what `times` more collectives (or copies) of route
 * `route` labelled `tag` carry, as if they had run: a steady state's
 * periods the replay skips (engine.h). */
void net_repeat(Net *net, int route, int tag, double times);

/* Bytes GPU `gpu`, a member, sends in a collective of route `route`. */
double net_sent_bytes(const Net *net, int route, int gpu);

/* The links, for reports: bytes each carried in all and per tag. */
const Topology *net_topology(const Net *net);
double net_link_bytes(const Net *net, int link);
double net_link_tag_bytes(const Net *net, int link, int tag);

#endif
