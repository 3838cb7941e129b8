/* net.c: running collectives as phases of flows over shared links.
 *
 * State: a pool of running collectives (activities), each at one phase of
 * its cached route, with the count of that phase's flows still running; the
 * flows themselves live in a Share. The network's own event queue holds
 * "latency elapsed" events per activity and "flow may end" events per flow
 * (stamped with the flow's version: a flow whose rate changed since is
 * skipped, a newer event is queued). Without contention an activity has one
 * event, at its end alone.
 *
 * Routes are numbered in the order they are made, a hash from their key to
 * the number finding them again. A route's flows are made once, when it is
 * cached (each transfer's path), and so are the bytes each member sends;
 * then its transfers are dropped.
 * With a symmetry (symmetry.h) the share's links are the link classes (the
 * orbits of the links under the shifts, symmetry_link_classes) and the
 * flows of a phase are merged by orbit: transfers with one canonical form
 * are one flow, weighted on each class by the number of the orbit's
 * transfers that cross any one link of it, images x count x
 * links-of-the-class-on-the-path / links-in-the-class. A cached route whose
 * group some shift maps onto itself must be mapped onto itself by that
 * shift too (a tree rooted at one member is not; checked in time linear in
 * its transfers): otherwise the symmetry is broken and the replay says so
 * (net_broken). With cells around a what-if (symmetry_new_cells) a route
 * stands for its group's instances instead, whose transfers net_seal
 * lists one by one over link units, and the replay checks each instant
 * that they stand for the full one (the section "cells" below).
 * A collective whose every transfer carries at most one packet's data
 * (NET_PACKET_BYTES) is latency-bound: the fluid model of shared links is for
 * streams of packets, and such a collective takes its time alone, makes
 * no flows and loads no links (its few bytes would change others' times
 * by nanoseconds). Its route need not be symmetric: a tree of amaxes
 * rooted at one replica leaves the replay's symmetry whole.
 * A copy between a GPU and its host (net_copy_route) is a route too: a
 * group of one GPU, one phase of one transfer to or from the GPU's host
 * (topology_host), whose flow crosses the host path's links and shares
 * them, as any flow, with the other copies and the traffic between nodes
 * that crosses them; with a symmetry its canonical form is the simulated
 * rank's, and its images are the copies of the ranks that rank stands
 * for.
 * A route apart runs its flows without the share: its collectives run one
 * after another on one stream (net_route_stream), no route of another
 * stream crosses any of its links, and the flows of each of its phases
 * cross no link in common: no other flow is ever on its links. Each flow
 * then keeps, from its start to its end, the rate it would have alone,
 * and net_step ends it when the share would have: the same instants, the
 * same rate and end to the bit (share_alone_rate). Its bytes go on its
 * links once the replay is over, times the runs of its phase (net_settle):
 * the share's sums, added in another order. The fair share is solved only
 * where flows meet. */
#include "net/net.h"

#include <math.h>

#include "base/bigmem.h"
#include "core/evq.h"
#include "core/share.h"

#include <string.h>

enum { EV_LATENCY, EV_FLOW, EV_ALONE, EV_APART }; /* event kinds, in aux's top bits */
#define KIND_SHIFT   30
#define STREAM_NONE  (-1) /* a route's stream: none said yet */
#define STREAM_MANY  (-2) /* ... more than one */
#define VERSION_MASK ((1u << KIND_SHIFT) - 1)
#define LOAD_COLUMNS (PROTOCOLS - 1) /* alone_s's loads: LL's come from Simple's */

typedef struct {
    const int *members;
    int n;
    CollOp op;
    CollAlgorithm forced;
    int copy; /* 0: a collective; a copy between a GPU and its host: 1 down, 2 up */
    double bytes;
} RouteKey;

/* A flow of a route: a transfer (or, with a symmetry, an orbit of them;
 * with cells, the transfers of its collectives with one path over the
 * link units). */
typedef struct {
    int n; /* links (or link classes, or units) on its path */
    int32_t path[SHARE_MAX_PATH];
    double weight[SHARE_MAX_PATH];
    double bytes;
    int first_check, n_check; /* cells: the units whose links it crosses unequally
                               * (net->checks) */
} PlanFlow;

/* Cells: a flow's unequal unit, and in net->check_counts from `first`
 * how many of its transfers cross each link of each part of the unit. */
typedef struct {
    int32_t unit, first;
} FlowCheck;

/* Cells: the running flows that cross a unit unequally (share ids). */
typedef struct {
    int32_t *id;
    int n, room;
} UnitFlows;

/* A cached route: what running it needs of its CollRoute, whose transfers
 * are dropped once its flows are made. */
typedef struct {
    CollAlgorithm algorithm;
    int n_phases;
    double latency_s[ALGO_MAX_PHASES]; /* per phase */
    double alone_s;
    gboolean latency_bound;              /* no transfer over a packet: alone, no flows */
    gint64 stream;                       /* its collectives' one stream (net_route_stream);
                                          * STREAM_NONE, or STREAM_MANY */
    gboolean apart;                      /* its flows meet no other (net_seal) */
    double *flow_s;                      /* apart: per phase from flow_s_first[phase], how
                                          * long its flows take, each time once */
    guint64 *ran;                        /* apart: per phase x tag, the times it ran, its
                                          * bytes not on the links yet (net_settle) */
    int flow_s_first[ALGO_MAX_PHASES + 1];
    GArray *flows;                       /* PlanFlow, phase after phase */
    int first_flow[ALGO_MAX_PHASES + 1]; /* per phase, its first flow; one more entry */
    const int *members;                  /* the group's GPUs, n of them */
    int n;
    double *sent;           /* per member: the bytes it sends */
    CollRoute *pending;     /* cells: its transfers, until net_seal makes its flows */
    SymmetryInstances inst; /* cells: the collectives it stands for */
    int *kinds;             /* cells: per phase from kind_first[phase], when the
                             * collectives' flows are not all alike: the kinds of
                             * collective, each as its flows' count, then their
                             * indices in the phase (end_phase) */
    int kind_first[ALGO_MAX_PHASES + 1];
} RouteEntry;

/* The end of a flow of a route apart, of activity `id`. */
typedef struct {
    double end_s;
    int32_t id;
} Deferred;

typedef struct {
    int32_t token;
    const RouteEntry *entry;
    int phase;
    int flows_left;
    int tag;
} Activity;

struct Net {
    Topology *topo;
    const Symmetry *sym; /* NULL: every link, every transfer */
    int *link_class;     /* with sym: per link, its class */
    double *class_size;  /* with sym: links per class */
    unsigned broken;     /* generators some route was not symmetric under */
    GArray *marks;       /* SymmetryMark: the members routes single out (net_marks) */
    gboolean slowed;     /* some link runs below its class's capacity (link_scale) */
    Share *share;
    gboolean contention;
    CollAlgorithm forced; /* AUTO: choose per collective */
    EventQueue *events;
    double now;
    Activity *activities;     /* the pool: n_activities made, room for activities_room */
    int32_t *free_activities; /* ids to reuse, n_free of them (room: the pool's) */
    int n_activities, activities_room, n_free;
    int32_t *done; /* tokens of the collectives ended at `now`, for net_step */
    int n_done, done_room;
    Deferred *deferred; /* the ends of the flows apart started at `now`, queued after its events */
    int n_deferred, deferred_room;
    guint64 flows_apart;          /* started so far (net_flows_apart) */
    GPtrArray *routes;            /* RouteEntry, by route index */
    GHashTable *route_of;         /* RouteKey -> its route index + 1 */
    double (*load)[LOAD_COLUMNS]; /* per link: scratch of alone_s, valid when stamped */
    uint32_t *stamp, epoch;       /* per link: the phase of alone_s that last loaded it */
    double *sent;                 /* per GPU: scratch of net_route, zero between uses */
    int *self;                    /* per GPU: its number, its copies' group (made with
                                   * the first copy's route) */
    int32_t *out;                 /* per GPU: scratch of phase_invariant, -1 between uses */
    /* cells (symmetry_has_cells): the flows are net_seal's, over link units
     * (link_class, class_size), and the replay checks what makes them exact */
    gboolean cells;
    int tags;
    GArray *checks;       /* FlowCheck */
    GArray *check_counts; /* int */
    int n_units;
    int *parts;         /* per unit: its parts, 1 when every flow crosses its links alike */
    UnitFlows *on_unit; /* per unit */
    int32_t *dirty;     /* units whose unequal flows changed since the last check */
    int n_dirty;
    guint8 *is_dirty;  /* per unit */
    double *part_load; /* scratch of check_unit: most parts x tags */
    int32_t *flow_at;  /* per share flow: its index in its route's flows */
    int flow_room;
    double *ended_s; /* per activity, most_flows each: when its phase's flows ended */
    int most_flows;
};

/* A double's bits folded, inline: routes' keys and flows hash it. */
static inline guint bits_hash(double x)
{
    guint64 bits;
    memcpy(&bits, &x, sizeof bits);
    return (guint)(bits ^ bits >> 32);
}

static guint key_hash(gconstpointer p)
{
    const RouteKey *k = p;
    guint h = g_direct_hash(k->members) ^ (guint)k->n * 2654435761u;
    h = h * 31 + (guint)k->op * 7 + (guint)k->forced + (guint)k->copy * 131;
    return h * 31 + bits_hash(k->bytes);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const RouteKey *x = a, *y = b;
    return x->members == y->members && x->n == y->n && x->op == y->op && x->forced == y->forced &&
           x->copy == y->copy && x->bytes == y->bytes;
}

static void entry_free(gpointer p)
{
    RouteEntry *e = p;
    g_array_free(e->flows, TRUE);
    g_free(e->sent);
    algo_route_free(e->pending);
    g_free(e->kinds);
    g_free(e->flow_s);
    g_free(e->ran);
    g_free(e);
}

/* ---- link classes ------------------------------------------------------------ */

/* The orbits of the links under the symmetry (symmetry_link_classes), the
 * links in each, and in `capacity` each one's (a class's links all have
 * its capacity); returns how many. */
static int link_classes(Net *net, double **capacity)
{
    int links = topology_links(net->topo);
    net->link_class = g_new(int, links);
    int classes = symmetry_link_classes(net->sym, net->topo, net->link_class);
    net->class_size = g_new0(double, classes);
    *capacity = g_new(double, classes);
    for (int l = 0; l < links; l++)
        if (net->class_size[net->link_class[l]]++ == 0)
            (*capacity)[net->link_class[l]] = topology_capacity(net->topo, l);
    return classes;
}

Net *net_new(const ClusterSpec *cluster, int gpus, const Symmetry *sym, CollAlgorithm algorithm,
             gboolean contention, int tags, const double *link_scale, gboolean copies)
{
    Net *net = g_new0(Net, 1);
    int nodes = (gpus + cluster->gpus_per_node - 1) / cluster->gpus_per_node;
    net->topo = topology_new(cluster, MAX(nodes, 1));
    net->sym = sym && symmetry_orbit(sym) != 1 ? sym : NULL;
    net->cells = net->sym && symmetry_has_cells(net->sym);
    for (int l = 0; link_scale && l < topology_links(net->topo); l++)
        if (link_scale[l] != 1) {
            topology_scale_link(net->topo, l, link_scale[l]);
            net->slowed = TRUE;
        }
    g_assert(!(net->sym && net->slowed && !net->cells)); /* a slowed link has no images */
    topology_trim_nic_paths(net->topo, copies);
    g_autofree double *capacity = NULL;
    int units = topology_links(net->topo);
    if (net->sym && !net->cells) {
        units = link_classes(net, &capacity);
    } else {
        capacity = g_new(double, units);
        for (int l = 0; l < units; l++)
            capacity[l] = topology_capacity(net->topo, l);
    }
    net->tags = tags;
    net->share = net->cells ? NULL : share_new(capacity, units, tags); /* cells: net_seal's */
    net->contention = contention;
    net->forced = algorithm != ALGORITHM_AUTO ? algorithm : cluster->algorithm;
    net->events = evq_new(64);
    net->routes = g_ptr_array_new_with_free_func(entry_free);
    net->route_of = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
    /* per link or GPU: over a million GPUs, big (bigmem.h) */
    gsize links = (gsize)topology_links(net->topo), gpu_count = (gsize)topology_gpus(net->topo);
    net->load = bigmem_alloc(sizeof *net->load * links);
    net->stamp = bigmem_alloc0(sizeof(uint32_t) * links);
    net->sent = bigmem_alloc0(sizeof(double) * gpu_count);
    net->out = memset(bigmem_alloc(sizeof(int32_t) * gpu_count), -1, sizeof(int32_t) * gpu_count);
    net->marks = g_array_new(FALSE, FALSE, sizeof(SymmetryMark));
    return net;
}

void net_free(Net *net)
{
    if (!net)
        return;
    topology_free(net->topo);
    share_free(net->share);
    evq_free(net->events);
    g_free(net->activities);
    g_free(net->free_activities);
    g_free(net->done);
    g_free(net->deferred);
    g_hash_table_destroy(net->route_of);
    g_ptr_array_free(net->routes, TRUE);
    bigmem_free(net->load);
    bigmem_free(net->stamp);
    bigmem_free(net->sent);
    bigmem_free(net->self);
    bigmem_free(net->out);
    g_array_free(net->marks, TRUE);
    g_free(net->link_class);
    g_free(net->class_size);
    for (int u = 0; net->parts && u < net->n_units; u++)
        g_free(net->on_unit[u].id);
    if (net->checks) {
        g_array_free(net->checks, TRUE);
        g_array_free(net->check_counts, TRUE);
    }
    g_free(net->parts);
    g_free(net->on_unit);
    g_free(net->dirty);
    g_free(net->is_dirty);
    g_free(net->part_load);
    g_free(net->flow_at);
    g_free(net->ended_s);
    g_free(net);
}

/* ---- time alone ------------------------------------------------------------ */

/* The time `route` takes on empty links with each protocol of `protocols`:
 * per phase its latency, then the most loaded link's bytes over its
 * capacity, the links loaded with every protocol's bytes in one pass (a
 * slowed link's weighted by its slowdown, topology.h). A
 * link's load only grows, so its largest value over the pass is its last
 * one, and the links of a class share a capacity, so the most loaded link
 * of each class is kept and divided once; a link's load counts from zero
 * in a phase that has not stamped it. LL's share of a link is exactly half
 * of Simple's, so its bytes, loads and times are exactly twice Simple's
 * (doubling a double is exact): with both, LL's come from Simple's.
 * For rings, trees and their phases every flow on that link moves the
 * same bytes, so this is the time the flows take sharing it fairly:
 * exactly the alpha-beta formulas. */
static void alone_s(const CollRoute *route, unsigned protocols, double cost[PROTOCOLS], void *ctx)
{
    Net *net = ctx;
    gboolean ll_of_simple = (protocols >> PROTOCOL_LL & 1) && (protocols >> PROTOCOL_SIMPLE & 1);
    int used[PROTOCOLS], n_used = 0; /* the protocols with loads of their own, and */
    double share[PROTOCOLS];         /* each one's share */
    for (int p = 0; p < PROTOCOLS; p++) {
        cost[p] = 0;
        if (protocols >> p & 1 && !(p == PROTOCOL_LL && ll_of_simple)) {
            share[n_used] = algo_protocol_share((CollProtocol)p);
            used[n_used++] = p;
        }
    }
    for (int ph_i = 0; ph_i < route->n_phases; ph_i++) {
        const CollPhase *ph = &route->phase[ph_i];
        if (++net->epoch == 0) { /* wrapped: every stamp is stale */
            memset(net->stamp, 0, sizeof(uint32_t) * (gsize)topology_links(net->topo));
            net->epoch = 1;
        }
        double most[LINK_CLASSES][LOAD_COLUMNS] = {{0}};
        for (int i = ph->first; i < ph->first + ph->count; i++) {
            const Transfer *tr = &route->transfers[i];
            double bytes[LOAD_COLUMNS];
            for (int u = 0; u < n_used; u++)
                bytes[u] = algo_transfer_bytes(route, i, share[u]);
            int path[TOPOLOGY_MAX_PATH], n;
            topology_path(net->topo, tr->src, tr->dst, path, &n);
            for (int k = 0; k < n; k++) {
                double *load = net->load[path[k]], *top = most[topology_class(net->topo, path[k])];
                if (net->stamp[path[k]] != net->epoch) {
                    net->stamp[path[k]] = net->epoch;
                    memset(load, 0, sizeof net->load[0]);
                }
                double slowdown = net->slowed ? topology_slowdown(net->topo, path[k]) : 1;
                for (int u = 0; u < n_used; u++) {
                    load[u] += bytes[u] * slowdown;
                    top[u] = MAX(top[u], load[u]);
                }
            }
        }
        for (int u = 0; u < n_used; u++) {
            double slowest = 0;
            for (int c = 0; c < LINK_CLASSES; c++) /* a class the cluster lacks loads nothing */
                if (most[c][u] > 0)
                    slowest = MAX(slowest, most[c][u] / topology_class_capacity(net->topo, c));
            cost[used[u]] += ph->latency_by[used[u]] + slowest;
            if (used[u] == PROTOCOL_SIMPLE && ll_of_simple)
                cost[PROTOCOL_LL] += ph->latency_by[PROTOCOL_LL] + 2 * slowest;
        }
    }
}

/* A transfer's flow: its path's links, weight 1 each. */
static PlanFlow flow_of(const Net *net, const Transfer *tr)
{
    PlanFlow f = {.bytes = tr->bytes};
    topology_path(net->topo, tr->src, tr->dst, f.path, &f.n);
    for (int k = 0; k < f.n; k++)
        f.weight[k] = 1;
    return f;
}

/* `count` transfers of a phase as one flow: with a symmetry, the route's
 * transfers with canonical form `canon`, in each of `images` groups, over
 * link classes; without, copies of transfer `canon` (NCCL's channels
 * repeat a ring's), over its links. */
static PlanFlow orbit_flow(const Net *net, const Transfer *canon, double count, double images)
{
    PlanFlow links = flow_of(net, canon), f = {.bytes = canon->bytes};
    if (!net->sym) {
        for (int k = 0; k < links.n; k++)
            links.weight[k] = count;
        return links;
    }
    for (int k = 0; k < links.n; k++) {
        int c = net->link_class[links.path[k]], at = 0;
        while (at < f.n && f.path[at] != c)
            at++;
        if (at == f.n) {
            f.path[f.n] = c;
            f.weight[f.n++] = 0;
        }
        f.weight[at] += images * count / net->class_size[c];
    }
    return f;
}

static gint compare_transfer(gconstpointer a, gconstpointer b)
{
    const Transfer *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* Sorts `n` transfers as compare_transfer orders them: by insertion when
 * there are few, as there are out of one GPU in a phase. */
static void sort_transfers(Transfer *t, int n)
{
    if (n > 16) {
        qsort(t, (gsize)n, sizeof(Transfer), compare_transfer);
        return;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && compare_transfer(&t[j - 1], &t[j]) > 0; j--) {
            Transfer x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
}

/* The transfers of a phase listed per source GPU: net->out[gpu] the
 * first, next[k] the one after transfer k (-1: none); and room for two
 * GPUs' lists. */
typedef struct {
    const CollRoute *route;
    const CollPhase *ph;
    int32_t *next;
    Transfer *list[2];
    int room;
} OutLists;

/* The transfers out of GPU `src`, their destinations shifted by generator
 * `g` (NULL: none), sorted into lists->list[which]. Returns how many. */
static int transfers_out(const Net *net, OutLists *lists, int src, const SymmetryGenerator *g,
                         int which)
{
    int n = 0;
    for (int32_t k = net->out[src]; k >= 0; k = lists->next[k]) {
        const Transfer *tr = &lists->route->transfers[lists->ph->first + k];
        if (n == lists->room) {
            lists->room *= 2;
            for (int w = 0; w < 2; w++)
                lists->list[w] = g_renew(Transfer, lists->list[w], lists->room);
        }
        lists->list[which][n++] = (Transfer){
            .src = 0, .dst = g ? symmetry_shift_by(g, tr->dst, 1) : tr->dst, .bytes = tr->bytes};
    }
    sort_transfers(lists->list[which], n);
    return n;
}

/* Whether generator `g`, which maps the route's group `members` onto
 * itself, maps phase `ph` of `route` onto itself: whether for every member
 * the transfers out of it, shifted, are (as a multiset) those out of its
 * image. Linear in the transfers: they are listed per GPU, not sorted, and
 * a member and its image with one transfer each are compared in place. */
static gboolean phase_invariant(Net *net, const CollRoute *route, const CollPhase *ph,
                                const SymmetryGenerator *g, const int *members, int n)
{
    OutLists lists = {.route = route,
                      .ph = ph,
                      .next = g_new(int32_t, MAX(ph->count, 1)),
                      .list = {g_new(Transfer, 16), g_new(Transfer, 16)},
                      .room = 16};
    for (int k = ph->count - 1; k >= 0; k--) {
        int src = route->transfers[ph->first + k].src;
        lists.next[k] = net->out[src];
        net->out[src] = k;
    }
    gboolean same = TRUE;
    for (int m = 0; m < n && same; m++) {
        int image = symmetry_shift_by(g, members[m], 1);
        int32_t a = net->out[members[m]], b = net->out[image];
        if (a >= 0 && b >= 0 && lists.next[a] < 0 && lists.next[b] < 0) { /* one each */
            const Transfer *x = &route->transfers[ph->first + a],
                           *y = &route->transfers[ph->first + b];
            same = symmetry_shift_by(g, x->dst, 1) == y->dst && x->bytes == y->bytes;
            continue;
        }
        int count = transfers_out(net, &lists, members[m], g, 0);
        same = transfers_out(net, &lists, image, NULL, 1) == count &&
               memcmp(lists.list[0], lists.list[1], sizeof(Transfer) * (gsize)count) == 0;
    }
    for (int k = 0; k < ph->count; k++)
        net->out[route->transfers[ph->first + k].src] = -1;
    g_free(lists.next);
    g_free(lists.list[0]);
    g_free(lists.list[1]);
    return same;
}

/* A member's part in a phase, for role_marks: its transfers out and in,
 * with their bytes, and its track (itself shifted to value 0 along the
 * generator: the members one generator's shifts move into each other). */
typedef struct {
    int track, member;
    int32_t out, in;
    double out_bytes, in_bytes;
} Role;

#define COMPARE(a, b) (((a) > (b)) - ((a) < (b)))

/* Orders parts: by transfers out, in, then their bytes. */
static int compare_part(const Role *x, const Role *y)
{
    int by[4] = {COMPARE(x->out, y->out), COMPARE(x->in, y->in),
                 COMPARE(x->out_bytes, y->out_bytes), COMPARE(x->in_bytes, y->in_bytes)};
    for (int k = 0; k < 4; k++)
        if (by[k])
            return by[k];
    return 0;
}

static int compare_role(const void *a, const void *b)
{
    const Role *x = a, *y = b;
    int part = compare_part(x, y);
    return x->track != y->track ? COMPARE(x->track, y->track)
           : part               ? part
                                : COMPARE(x->member, y->member);
}

/* The members phase `ph` of `route` singles out along generator i, which
 * maps the group onto itself but not the phase: in each track, the
 * members whose part (transfers out and in, and their bytes) is not the
 * most common one there (the first of those that tie), appended to
 * net->marks along the generator's bit; a double binary tree's roots and
 * the rank that is a leaf in both. With cells, only those whose value the
 * symmetry does not mark already: *added of them. Returns how many members
 * are odd: none when every member plays one part, so that no mark can
 * explain the break. */
static int role_marks(Net *net, const CollRoute *route, const CollPhase *ph, int i,
                      const int *members, int n, int *added)
{
    int n_gen;
    const SymmetryGenerator *g = &symmetry_generator_list(net->sym, &n_gen)[i];
    g_autofree Role *r = g_new0(Role, MAX(n, 1));
    for (int m = 0; m < n; m++) {
        r[m].member = m;
        r[m].track = symmetry_shift_by(g, members[m], -(symmetry_coord(g, members[m]) / g->step));
        net->out[members[m]] = m; /* scratch: a member's index */
    }
    for (int k = 0; k < ph->count; k++) {
        const Transfer *tr = &route->transfers[ph->first + k];
        int src = net->out[tr->src], dst = net->out[tr->dst];
        if (src >= 0 && members[src] == tr->src) {
            r[src].out++;
            r[src].out_bytes += tr->bytes;
        }
        if (dst >= 0 && members[dst] == tr->dst) {
            r[dst].in++;
            r[dst].in_bytes += tr->bytes;
        }
    }
    for (int m = 0; m < n; m++)
        net->out[members[m]] = -1;
    qsort(r, (gsize)n, sizeof(Role), compare_role);
    int odd = 0;
    *added = 0;
    for (int a = 0, b; a < n; a = b) {
        int best = a, best_n = 0; /* the most common part of the track [a, b) */
        for (b = a; b < n && r[b].track == r[a].track;) {
            int e = b;
            while (e < n && r[e].track == r[a].track && compare_part(&r[e], &r[b]) == 0)
                e++;
            if (e - b > best_n) {
                best = b;
                best_n = e - b;
            }
            b = e;
        }
        for (int k = a; k < b; k++) {
            int rank = members[r[k].member];
            if (compare_part(&r[k], &r[best]) == 0)
                continue;
            odd++;
            if (net->cells && symmetry_marked(net->sym, i, rank))
                continue;
            SymmetryMark mark = {.rank = rank, .dims = symmetry_generator_bit(net->sym, i)};
            g_array_append_val(net->marks, mark);
            (*added)++;
        }
    }
    return odd;
}

/* Generator i maps the group `members` of `route` onto itself: breaks it
 * when some phase is not mapped onto itself too, its odd members marked
 * (role_marks); with cells, only when some odd member is not in a cell
 * of its own already. */
static void check_invariant(Net *net, const CollRoute *route, int i, const int *members, int n)
{
    int n_gen;
    const SymmetryGenerator *gen = symmetry_generator_list(net->sym, &n_gen);
    for (int p = 0; p < route->n_phases; p++) {
        const CollPhase *ph = &route->phase[p];
        int added;
        if (!phase_invariant(net, route, ph, &gen[i], members, n) &&
            (role_marks(net, route, ph, i, members, n, &added) == 0 || added > 0))
            net->broken |= 1u << i;
    }
}

/* Distinct keys (transfers, or net_seal's flow types) in order of first
 * appearance, each with its count: an open-addressing hash of indices
 * into `keys`. A key is a whole number of 32-bit words, padding zeroed. */
typedef struct {
    GArray *keys;
    GArray *count; /* double */
    int32_t *slot; /* index into keys, -1 empty; a power of two of them */
    guint mask;
} Tally;

static Tally tally_new(gsize key_size)
{
    g_assert(key_size % sizeof(guint32) == 0);
    Tally t = {.keys = g_array_new(FALSE, FALSE, (guint)key_size),
               .count = g_array_new(FALSE, FALSE, sizeof(double)),
               .slot = g_new(int32_t, 16),
               .mask = 15};
    memset(t.slot, -1, sizeof(int32_t) * 16);
    return t;
}

static void tally_free(Tally *t)
{
    g_array_free(t->keys, TRUE);
    g_array_free(t->count, TRUE);
    g_free(t->slot);
}

static const void *tally_key(const Tally *t, int i)
{
    return t->keys->data + (gsize)i * g_array_get_element_size(t->keys);
}

static guint key_words_hash(const void *key, gsize size)
{
    const guint32 *w = key;
    guint h = 2166136261u;
    for (gsize i = 0; i < size / sizeof(guint32); i++)
        h = (h ^ w[i]) * 16777619u;
    return h ^ h >> 15;
}

/* The slot of `key` in t->slot: its index's, or the empty one it would take. */
static guint tally_find(const Tally *t, const void *key)
{
    gsize size = g_array_get_element_size(t->keys);
    for (guint h = key_words_hash(key, size) & t->mask;; h = (h + 1) & t->mask)
        if (t->slot[h] < 0 || memcmp(tally_key(t, t->slot[h]), key, size) == 0)
            return h;
}

/* Counts `key` once more; returns its index. */
static int tally_add(Tally *t, const void *key)
{
    guint h = tally_find(t, key);
    if (t->slot[h] >= 0) {
        g_array_index(t->count, double, t->slot[h])++;
        return t->slot[h];
    }
    double one = 1;
    int index = t->slot[h] = (int32_t)t->keys->len;
    g_array_append_vals(t->keys, key, 1);
    g_array_append_val(t->count, one);
    if (2 * t->keys->len > t->mask) { /* at most half full: rehash into twice the room */
        t->mask = 2 * t->mask + 1;
        t->slot = g_renew(int32_t, t->slot, t->mask + 1);
        memset(t->slot, -1, sizeof(int32_t) * (t->mask + 1));
        for (guint k = 0; k < t->keys->len; k++)
            t->slot[tally_find(t, tally_key(t, (int)k))] = (int32_t)k;
    }
    return index;
}

static guint flow_hash(gconstpointer p)
{
    const PlanFlow *f = p;
    guint h = bits_hash(f->bytes) ^ (guint)f->n;
    for (int k = 0; k < f->n; k++)
        h = h * 31 + (guint)f->path[k];
    return h;
}

static gboolean flow_equal(gconstpointer a, gconstpointer b)
{
    const PlanFlow *x = a, *y = b;
    return x->n == y->n && x->bytes == y->bytes &&
           memcmp(x->path, y->path, sizeof(int32_t) * (gsize)x->n) == 0;
}

/* Merges the flows of e->flows from `first` on that cross the same links
 * (or link classes) in the same order with the same bytes, their weights
 * summed, in order of first appearance: each weighs as the identical
 * flows it stands for, so together they stand for them all (with a
 * symmetry, an all-to-all's flows from one rank to every rank of another
 * node's orbit are one). */
static void merge_flows(GArray *flows, int first)
{
    GHashTable *at = g_hash_table_new(flow_hash, flow_equal); /* a flow -> its index + 1 */
    int kept = first;
    for (int i = first; i < (int)flows->len; i++) {
        PlanFlow *f = &g_array_index(flows, PlanFlow, i);
        int same = GPOINTER_TO_INT(g_hash_table_lookup(at, f)) - 1;
        if (same >= 0) {
            PlanFlow *into = &g_array_index(flows, PlanFlow, same);
            for (int k = 0; k < f->n; k++)
                into->weight[k] += f->weight[k];
            continue;
        }
        g_array_index(flows, PlanFlow, kept) = *f;
        g_hash_table_insert(at, &g_array_index(flows, PlanFlow, kept), GINT_TO_POINTER(kept + 1));
        kept++;
    }
    g_array_set_size(flows, (guint)kept);
    g_hash_table_destroy(at);
}

/* The flows of a route's phases: one per transfer, copies of it merged,
 * or with a symmetry one per orbit (canonical forms counted, kept in
 * order of first appearance), then flows over the same links merged
 * (merge_flows). A flow standing for k identical ones (the same path,
 * bytes and start) weighs k on each of its links: max-min fair rates are
 * unique, so identical flows get equal ones, which the weighted flow
 * gets. */
static void make_flows(Net *net, RouteEntry *e, const CollRoute *route, const int *members, int n)
{
    e->flows = g_array_new(FALSE, FALSE, sizeof(PlanFlow));
    double images = 1;
    unsigned invariant = 0;
    int n_gen = 0;
    const SymmetryGenerator *gen = net->sym ? symmetry_generator_list(net->sym, &n_gen) : NULL;
    if (net->sym)
        net->broken |= symmetry_group_images(net->sym, members, n, &images, &invariant);
    if (e->latency_bound || !net->contention)
        return; /* no flows (without contention, none is run): first_flow stays 0 */
    for (int i = 0; i < n_gen; i++)
        if (invariant & 1u << i)
            check_invariant(net, route, i, members, n);
    for (int p = 0; p < route->n_phases; p++) {
        const CollPhase *ph = &route->phase[p];
        e->first_flow[p] = (int)e->flows->len;
        Tally tally = tally_new(sizeof(Transfer));
        for (int k = 0; k < ph->count; k++) {
            const Transfer *tr = &route->transfers[ph->first + k];
            Transfer c = *tr;
            if (net->sym)
                symmetry_canon_by(gen, n_gen, tr->src, tr->dst, &c.src, &c.dst);
            tally_add(&tally, &c);
        }
        for (guint k = 0; k < tally.keys->len; k++) {
            PlanFlow f = orbit_flow(net, tally_key(&tally, (int)k),
                                    g_array_index(tally.count, double, k), images);
            g_array_append_val(e->flows, f);
        }
        tally_free(&tally);
        merge_flows(e->flows, e->first_flow[p]);
    }
    e->first_flow[route->n_phases] = (int)e->flows->len;
}

/* The bytes each member of a route's group sends: its transfers' bytes,
 * summed in route order (a host sends none: it is no member). */
static void count_sent(Net *net, RouteEntry *e, const CollRoute *route, const int *members, int n)
{
    int gpus = topology_gpus(net->topo);
    for (int i = 0; i < route->n_transfers; i++)
        if (route->transfers[i].src < gpus)
            net->sent[route->transfers[i].src] += route->payload[i]; /* not link time */
    e->members = members;
    e->n = n;
    e->sent = g_new(double, n);
    for (int i = 0; i < n; i++)
        e->sent[i] = net->sent[members[i]];
    for (int i = 0; i < route->n_transfers; i++)
        if (route->transfers[i].src < gpus)
            net->sent[route->transfers[i].src] = 0;
}

/* ---- cells ------------------------------------------------------------------ */

/* With cells (symmetry_new_cells) a route stands for its group's instances
 * (symmetry_instances), which are not the group's images under K but
 * shifts of it, so they are replayed transfer by transfer: net_seal, once
 * every route is made, lists each phase's transfers in every instance, with
 * their links, and types them by their path over the link units, a flow a
 * type (its transfers' count on each unit over the unit's links). The
 * units are the link classes cut by the cells (symmetry_link_units), the
 * slowed links alone, then cut again wherever a type crosses the links of
 * a unit unequally (links with the same counts of every such type stay
 * together): a ring's transfers into a marked rank's neighbour go over a
 * unit of their own. What that cut does not make equal the replay checks,
 * each instant (check_unit): the links of every part of a unit (its links
 * with equal counts of every type) carry the same load, tag by tag. Then
 * every link's flows get the fair rates their types get over the units:
 * a unit saturates exactly when each of its links does, so every flow has
 * a saturated link where no flow is faster, which makes the rates the
 * max-min fair ones (Bertsekas and Gallager, "Data Networks", 6.5.2). And
 * a group's instances, whose flows may differ in type, must end each phase
 * together (end_phase), since one collective stands for them all. When a
 * check fails the replay is broken (NET_BROKEN_CELLS). */

#define CELL_TOLERANCE 1e-12 /* relative: loads and ends alike but for rounding */

/* A type: a transfer's units in path order and its bytes. */
typedef struct {
    int32_t unit[TOPOLOGY_MAX_PATH];
    int32_t n, pad;
    double bytes;
} TypeKey;

/* A transfer of one instance in a phase, typed. */
typedef struct {
    int32_t link[TOPOLOGY_MAX_PATH];
    int32_t n, type;
} Member;

/* A type's count on one link of a unit it crosses unequally. */
typedef struct {
    int32_t link, type, count;
} Triple;

/* A phase's members (instance after instance, transfers in route order)
 * over the units `unit`, and in `types` its types with their counts. */
static Member *members_of(const Net *net, const RouteEntry *e, int p, const int *unit, Tally *types)
{
    const CollPhase *ph = &e->pending->phase[p];
    Member *m = g_new(Member, (gsize)e->inst.n * ph->count);
    for (int k = 0, at = 0; k < e->inst.n; k++)
        for (int i = 0; i < ph->count; i++, at++) {
            const Transfer *tr = &e->pending->transfers[ph->first + i];
            int src = symmetry_instance_gpu(net->sym, &e->inst, k, tr->src),
                dst = symmetry_instance_gpu(net->sym, &e->inst, k, tr->dst);
            topology_path(net->topo, src, dst, m[at].link, &m[at].n);
            TypeKey key = {.n = m[at].n, .bytes = tr->bytes};
            for (int j = 0; j < m[at].n; j++)
                key.unit[j] = unit[m[at].link[j]];
            m[at].type = tally_add(types, &key);
        }
    return m;
}

/* Scratch of unequal(), per link and per unit, zero between uses. */
typedef struct {
    int32_t *count;        /* per link */
    int32_t *seen, *first; /* per unit: links met, and the count of the first */
    guint8 *alike;         /* per unit */
    int32_t *touched;      /* the links met, n_touched of them (room for every link) */
    int n_touched;
} Counts;

/* Appends to `triples` the counts of type `type` (its `n` members
 * `m[order[..]]`) on the links of each unit it crosses unequally, and to
 * `units` those units. */
static void unequal(const int *unit, const double *unit_size, const Member *m, const int *order,
                    int n, int type, Counts *c, GArray *triples, GArray *units)
{
    c->n_touched = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m[order[i]].n; j++)
            if (c->count[m[order[i]].link[j]]++ == 0)
                c->touched[c->n_touched++] = m[order[i]].link[j];
    for (int i = 0; i < c->n_touched; i++) {
        int l = c->touched[i], u = unit[l];
        if (c->seen[u]++ == 0) {
            c->first[u] = c->count[l];
            c->alike[u] = 1;
        }
        c->alike[u] &= c->count[l] == c->first[u];
    }
    for (int i = 0; i < c->n_touched; i++) {
        int l = c->touched[i], u = unit[l];
        if (c->seen[u] == 0)
            continue; /* a unit done */
        if (c->alike[u] && c->seen[u] == unit_size[u]) {
            c->seen[u] = 0; /* alike over the whole unit */
            continue;
        }
        if (c->seen[u] > 0) {
            int32_t one = u;
            g_array_append_val(units, one);
            c->seen[u] = -1; /* appended: its links follow */
        }
    }
    for (int i = 0; i < c->n_touched; i++) {
        int l = c->touched[i];
        if (c->seen[unit[l]] < 0) {
            Triple t = {.link = l, .type = type, .count = c->count[l]};
            g_array_append_val(triples, t);
        }
    }
    for (int i = 0; i < c->n_touched; i++) {
        c->count[c->touched[i]] = 0;
        c->seen[unit[c->touched[i]]] = 0;
    }
}

/* Orders `triples`, made type after type in increasing order, by link
 * then type: a counting sort by link, which keeps each link's in their
 * types' order. */
static void sort_triples(GArray *triples, int links)
{
    if (triples->len == 0) /* no data to copy (memcpy of NULL is undefined) */
        return;
    g_autofree int *at = g_new0(int, links + 1);
    const Triple *t = (const Triple *)(void *)triples->data;
    for (guint i = 0; i < triples->len; i++)
        at[t[i].link + 1]++;
    for (int l = 0; l < links; l++)
        at[l + 1] += at[l];
    g_autofree Triple *sorted = g_new(Triple, MAX(triples->len, 1));
    for (guint i = 0; i < triples->len; i++)
        sorted[at[t[i].link]++] = t[i];
    memcpy(triples->data, sorted, sizeof(Triple) * triples->len);
}

/* A link's triples, for cut(): its unit and its (type, count) pairs. */
typedef struct {
    int unit;
    const Triple *t;
    int n;
} LinkCounts;

static guint link_counts_hash(gconstpointer p)
{
    const LinkCounts *k = p;
    guint h = (guint)k->unit * 2654435761u;
    for (int i = 0; i < k->n; i++)
        h = (h ^ (guint)k->t[i].type * 40503u ^ (guint)k->t[i].count) * 16777619u;
    return h;
}

static gboolean link_counts_equal(gconstpointer a, gconstpointer b)
{
    const LinkCounts *x = a, *y = b;
    if (x->unit != y->unit || x->n != y->n)
        return FALSE;
    for (int i = 0; i < x->n; i++)
        if (x->t[i].type != y->t[i].type || x->t[i].count != y->t[i].count)
            return FALSE;
    return TRUE;
}

/* Cuts the units `unit` (`units` of them) of `links` links: links of one
 * unit stay together when they have the same counts of every type in
 * `triples` (made type after type; sorted here). Writes each link's piece
 * in `piece`, numbered in order of their lowest link, and in `lowest`
 * (room for a piece per link) each piece's lowest link; returns how many.
 * Most links have no triples: their unit's piece of none is found without
 * a hash. */
static int cut(int links, int units, const int *unit, GArray *triples, int *piece, int *lowest)
{
    sort_triples(triples, links);
    g_autofree LinkCounts *key = g_new(LinkCounts, links);
    g_autofree int *none = g_new(int, units); /* per unit: its piece of no triples + 1 */
    memset(none, 0, sizeof(int) * (gsize)units);
    GHashTable *number = g_hash_table_new(link_counts_hash, link_counts_equal);
    int pieces = 0;
    for (int l = 0, at = 0; l < links; l++) {
        const Triple *t = at < (int)triples->len ? &g_array_index(triples, Triple, at) : NULL;
        int n = 0;
        while (at + n < (int)triples->len && t[n].link == l)
            n++;
        at += n;
        if (n == 0) {
            if (none[unit[l]] == 0) {
                lowest[pieces] = l;
                none[unit[l]] = ++pieces;
            }
            piece[l] = none[unit[l]] - 1;
            continue;
        }
        key[l] = (LinkCounts){.unit = unit[l], .t = t, .n = n};
        gpointer found = g_hash_table_lookup(number, &key[l]);
        if (!found) {
            lowest[pieces] = l;
            found = GINT_TO_POINTER(++pieces);
            g_hash_table_insert(number, &key[l], found);
        }
        piece[l] = GPOINTER_TO_INT(found) - 1;
    }
    g_hash_table_destroy(number);
    return pieces;
}

/* The members of `types` types ordered by type (counting sort): type t's
 * are order[start[t] .. start[t + 1]). */
static int *by_type(const Member *m, int n, int types, int **start)
{
    *start = g_new0(int, types + 1);
    for (int i = 0; i < n; i++)
        (*start)[m[i].type + 1]++;
    for (int t = 0; t < types; t++)
        (*start)[t + 1] += (*start)[t];
    int *order = g_new(int, MAX(n, 1)), *at = g_memdup2(*start, sizeof(int) * (gsize)types);
    for (int i = 0; i < n; i++)
        order[at[m[i].type]++] = i;
    g_free(at);
    return order;
}

/* What a pass over every pending phase yields: the unequal types' counts,
 * and per type (numbered over all phases) the units it crosses unequally. */
typedef struct {
    GArray *triples; /* Triple */
    GArray *unequal; /* int32: units, type after type */
    GArray *first;   /* int: per type, its first in unequal; one more entry */
} Pass;

/* The flow of type `k` of `types` (its units in path order) over the
 * units, weighted by its count on each link: count x occurrences / links
 * in the unit. */
static PlanFlow type_flow(const Net *net, const Tally *types, int k)
{
    const TypeKey *key = tally_key(types, k);
    double count = g_array_index(types->count, double, k);
    PlanFlow f = {.bytes = key->bytes};
    for (int j = 0; j < key->n; j++) {
        int u = key->unit[j], at = 0;
        while (at < f.n && f.path[at] != u)
            at++;
        if (at == f.n) {
            f.path[f.n] = u;
            f.weight[f.n++] = 0;
        }
        f.weight[at] += count / net->class_size[u];
    }
    return f;
}

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The kinds of instance of phase `p` of `e` whose members `m` are typed
 * (each instance's types, as a sorted list), appended to `kinds` when
 * there are more than one: each its count of distinct types, then those
 * types. */
static void add_kinds(const RouteEntry *e, int p, const Member *m, GArray *kinds)
{
    int per = e->pending->phase[p].count, n = e->inst.n;
    g_autofree int *sorted = g_new(int, (gsize)n *per + 1);
    for (int i = 0; i < n * per; i++)
        sorted[i] = m[i].type;
    Tally seen = tally_new(sizeof(int) * (gsize)per);
    for (int k = 0; k < n; k++) {
        int *list = &sorted[(gsize)k * per];
        qsort(list, (gsize)per, sizeof(int), compare_int);
        tally_add(&seen, list);
    }
    for (guint k = 0; seen.keys->len > 1 && k < seen.keys->len; k++) {
        const int *list = tally_key(&seen, (int)k);
        int count = 0;
        guint at = kinds->len;
        g_array_append_val(kinds, count);
        for (int i = 0; i < per; i++)
            if (i == 0 || list[i] != list[i - 1]) {
                g_array_append_val(kinds, list[i]);
                g_array_index(kinds, int, at)++;
            }
    }
    tally_free(&seen);
}

/* One pass over every pending phase, its transfers typed over `unit`:
 * the unequal counts in `pass`; with `flows`, each phase's flows (a type
 * each) and kinds of instance are made too. */
static void type_all(Net *net, const int *unit, gboolean flows, Pass *pass)
{
    int links = topology_links(net->topo), units = net->n_units;
    Counts c = {.count = g_new0(int32_t, links),
                .seen = g_new0(int32_t, units),
                .first = g_new(int32_t, units),
                .alike = g_new(guint8, units),
                .touched = g_new(int32_t, links)};
    *pass = (Pass){.triples = g_array_new(FALSE, FALSE, sizeof(Triple)),
                   .unequal = g_array_new(FALSE, FALSE, sizeof(int32_t)),
                   .first = g_array_new(FALSE, FALSE, sizeof(int))};
    int zero = 0, types_so_far = 0;
    g_array_append_val(pass->first, zero);
    for (guint i = 0; i < net->routes->len; i++) {
        RouteEntry *e = g_ptr_array_index(net->routes, i);
        GArray *kinds = flows && e->pending ? g_array_new(FALSE, FALSE, sizeof(int)) : NULL;
        for (int p = 0; e->pending && p < e->n_phases; p++) {
            Tally types = tally_new(sizeof(TypeKey));
            Member *m = members_of(net, e, p, unit, &types);
            int n = e->inst.n * e->pending->phase[p].count, *start;
            g_autofree int *order = by_type(m, n, (int)types.keys->len, &start);
            for (int k = 0; k < (int)types.keys->len; k++) {
                unequal(unit, net->class_size, m, &order[start[k]], start[k + 1] - start[k],
                        types_so_far + k, &c, pass->triples, pass->unequal);
                int end = (int)pass->unequal->len;
                g_array_append_val(pass->first, end);
            }
            if (kinds) {
                e->first_flow[p] = (int)e->flows->len;
                for (int k = 0; k < (int)types.keys->len; k++) {
                    PlanFlow f = type_flow(net, &types, k);
                    g_array_append_val(e->flows, f);
                }
                e->kind_first[p] = (int)kinds->len;
                add_kinds(e, p, m, kinds);
            }
            types_so_far += (int)types.keys->len;
            g_free(start);
            g_free(m);
            tally_free(&types);
        }
        if (flows && e->pending) {
            e->first_flow[e->n_phases] = (int)e->flows->len;
            e->kind_first[e->n_phases] = (int)kinds->len;
            e->kinds = (int *)(void *)g_array_free(kinds, FALSE);
        }
    }
    g_free(c.count);
    g_free(c.seen);
    g_free(c.first);
    g_free(c.alike);
    g_free(c.touched);
}

static void pass_free(Pass *pass)
{
    g_array_free(pass->triples, TRUE);
    g_array_free(pass->unequal, TRUE);
    g_array_free(pass->first, TRUE);
}

/* Sets the units, link_class and class_size, from `unit` (per link). */
static void set_units(Net *net, const int *unit, int units)
{
    int links = topology_links(net->topo);
    g_free(net->link_class);
    g_free(net->class_size);
    net->link_class = g_memdup2(unit, sizeof(int) * (gsize)links);
    net->class_size = g_new0(double, units);
    for (int l = 0; l < links; l++)
        net->class_size[unit[l]]++;
    net->n_units = units;
}

/* The checks of the final pass: each unit's parts (its links' pieces by
 * the counts of the types that cross it unequally), and each flow's
 * counts on the parts of every unit it crosses unequally. */
static void make_checks(Net *net, Pass *pass)
{
    int links = topology_links(net->topo);
    g_autofree int *piece = g_new(int, links), *lowest = g_new(int, links);
    int pieces = cut(links, net->n_units, net->link_class, pass->triples, piece, lowest);
    /* each unit's pieces, its parts: unit u's are of_unit[pieces_from[u] ..
     * pieces_from[u + 1]) */
    net->parts = g_new0(int, net->n_units);
    g_autofree int *pieces_from = g_new0(int, net->n_units + 1), *of_unit = g_new(int, pieces);
    for (int k = 0; k < pieces; k++)
        pieces_from[net->link_class[lowest[k]] + 1]++;
    for (int u = 0; u < net->n_units; u++) {
        net->parts[u] = pieces_from[u + 1];
        pieces_from[u + 1] += pieces_from[u];
    }
    g_autofree int *at = g_memdup2(pieces_from, sizeof(int) * (gsize)net->n_units);
    for (int k = 0; k < pieces; k++) /* in increasing order: a unit's lowest first */
        of_unit[at[net->link_class[lowest[k]]]++] = k;
    /* each piece's counts: its lowest link's triples (sorted by cut) */
    g_autofree int *from = g_new(int, links + 1);
    for (int l = 0, t = 0; l <= links; l++) {
        from[l] = t;
        while (l < links && t < (int)pass->triples->len &&
               g_array_index(pass->triples, Triple, t).link == l)
            t++;
    }
    net->checks = g_array_new(FALSE, FALSE, sizeof(FlowCheck));
    net->check_counts = g_array_new(FALSE, FALSE, sizeof(int));
    int type = 0, most = 1;
    for (int u = 0; u < net->n_units; u++)
        most = MAX(most, net->parts[u]);
    for (guint i = 0; i < net->routes->len; i++) {
        RouteEntry *e = g_ptr_array_index(net->routes, i);
        for (guint f = 0; e->pending && f < e->flows->len; f++, type++) {
            PlanFlow *flow = &g_array_index(e->flows, PlanFlow, f);
            int first = g_array_index(pass->first, int, type),
                end = g_array_index(pass->first, int, type + 1);
            flow->first_check = (int)net->checks->len;
            flow->n_check = end - first;
            for (int j = first; j < end; j++) {
                int u = g_array_index(pass->unequal, int32_t, j);
                FlowCheck check = {.unit = u, .first = (int32_t)net->check_counts->len};
                g_array_append_val(net->checks, check);
                g_array_set_size(net->check_counts, net->check_counts->len + net->parts[u]);
                int *count = &g_array_index(net->check_counts, int, check.first);
                memset(count, 0, sizeof(int) * (gsize)net->parts[u]);
                for (int part = 0; part < net->parts[u]; part++) {
                    int l = lowest[of_unit[pieces_from[u] + part]];
                    for (int t = from[l]; t < from[l + 1]; t++)
                        if (g_array_index(pass->triples, Triple, t).type == type)
                            count[part] = g_array_index(pass->triples, Triple, t).count;
                }
            }
        }
    }
    net->on_unit = g_new0(UnitFlows, net->n_units);
    net->is_dirty = g_new0(guint8, net->n_units);
    net->dirty = g_new(int32_t, net->n_units);
    net->part_load = g_new(double, (gsize)most * net->tags);
}

void net_route_stream(Net *net, int route, gint64 stream)
{
    RouteEntry *e = g_ptr_array_index(net->routes, route);
    e->stream = e->stream == STREAM_NONE || e->stream == stream ? stream : STREAM_MANY;
}

/* Whether the flows of each phase of `e` cross no link in common, and
 * each crosses one at least; `seen` (per link, zero) is left zero. */
static gboolean phases_apart(const RouteEntry *e, uint8_t *seen)
{
    gboolean apart = TRUE;
    for (int p = 0; p < e->n_phases; p++) {
        for (int i = e->first_flow[p]; i < e->first_flow[p + 1]; i++) {
            const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
            apart &= f->n > 0;
            for (int k = 0; k < f->n; k++)
                apart &= !seen[f->path[k]]++;
        }
        for (int i = e->first_flow[p]; i < e->first_flow[p + 1]; i++) {
            const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
            for (int k = 0; k < f->n; k++)
                seen[f->path[k]] = 0;
        }
    }
    return apart;
}

/* How long each flow of route `e`, apart, takes: bytes over its rate
 * alone (share_alone_rate), as the share times it; a phase's equal times
 * once, since its flows that end at one instant end at one step. */
static void time_apart(const Net *net, RouteEntry *e)
{
    e->flow_s = g_new(double, e->flows->len);
    e->ran = g_new0(guint64, (gsize)e->n_phases * net->tags);
    int n = 0;
    for (int p = 0; p < e->n_phases; p++) {
        e->flow_s_first[p] = n;
        for (int i = e->first_flow[p]; i < e->first_flow[p + 1]; i++) {
            const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
            double t = f->bytes / share_alone_rate(net->share, f->path, f->weight, f->n);
            int k = e->flow_s_first[p];
            while (k < n && e->flow_s[k] != t)
                k++;
            if (k == n)
                e->flow_s[n++] = t;
        }
    }
    e->flow_s_first[e->n_phases] = n;
}

/* Marks the routes apart (the file's comment): per link, the one stream
 * whose routes cross it, or STREAM_MANY; a route is apart when its
 * collectives run on one stream, only that stream's routes cross its
 * links, and its phases' flows stay apart. */
static void find_apart(Net *net)
{
    int links = share_links(net->share);
    g_autofree gint64 *user = g_new(gint64, links);
    g_autofree uint8_t *seen = g_new0(uint8_t, links);
    for (int l = 0; l < links; l++)
        user[l] = STREAM_NONE;
    for (guint r = 0; r < net->routes->len; r++) {
        const RouteEntry *e = g_ptr_array_index(net->routes, r);
        for (guint i = 0; i < e->flows->len; i++) {
            const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
            for (int k = 0; k < f->n; k++) {
                gint64 *u = &user[f->path[k]];
                *u = *u == STREAM_NONE || *u == e->stream ? e->stream : STREAM_MANY;
            }
        }
    }
    for (guint r = 0; r < net->routes->len; r++) {
        RouteEntry *e = g_ptr_array_index(net->routes, r);
        gboolean apart = e->stream >= 0 && e->flows->len > 0;
        for (guint i = 0; apart && i < e->flows->len; i++) {
            const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
            for (int k = 0; k < f->n; k++)
                apart &= user[f->path[k]] == e->stream;
        }
        e->apart = apart && phases_apart(e, seen);
        if (e->apart)
            time_apart(net, e);
    }
}

void net_seal(Net *net, gboolean apart)
{
    if (!net->cells) {
        if (net->contention && apart)
            find_apart(net);
        return;
    }
    int links = topology_links(net->topo);
    g_autofree int *unit = g_new(int, links), *lowest = g_new(int, links);
    int units = symmetry_link_units(net->sym, net->topo, unit);
    for (int l = 0; l < links; l++) /* a slowed link alone */
        if (topology_slowdown(net->topo, l) != 1)
            unit[l] = units++;
    set_units(net, unit, units);
    Pass first, last;
    type_all(net, unit, FALSE, &first); /* the links a type crosses unequally cut */
    units = cut(links, net->n_units, net->link_class, first.triples, unit, lowest);
    pass_free(&first);
    set_units(net, unit, units);
    type_all(net, unit, TRUE, &last);
    make_checks(net, &last);
    pass_free(&last);
    g_autofree double *capacity = g_new(double, units);
    for (int l = 0; l < links; l++)
        capacity[unit[l]] = topology_capacity(net->topo, l);
    net->share = share_new(capacity, units, net->tags);
    for (guint i = 0; i < net->routes->len; i++) {
        RouteEntry *e = g_ptr_array_index(net->routes, i);
        for (int p = 0; p < e->n_phases && e->pending; p++)
            net->most_flows = MAX(net->most_flows, e->first_flow[p + 1] - e->first_flow[p]);
        g_clear_pointer(&e->pending, algo_route_free);
    }
}

guint64 net_flows_apart(const Net *net)
{
    return net->flows_apart;
}

/* Marks unit `u` for check_units. */
static void dirty(Net *net, int u)
{
    if (!net->is_dirty[u]) {
        net->is_dirty[u] = 1;
        net->dirty[net->n_dirty++] = u;
    }
}

/* The route flow share flow `id` runs. */
static const PlanFlow *flow_of_share(const Net *net, int id)
{
    const Activity *a = &net->activities[share_token(net->share, id)];
    return &g_array_index(a->entry->flows, PlanFlow, net->flow_at[id]);
}

/* Cells: share flow `id` started as flow `index` of its route; it crosses
 * its checks' units unequally. */
static void flow_started(Net *net, int id, int index)
{
    if (id >= net->flow_room) {
        net->flow_room = MAX(2 * net->flow_room, id + 16);
        net->flow_at = g_renew(int32_t, net->flow_at, net->flow_room);
    }
    net->flow_at[id] = index;
    const PlanFlow *f = flow_of_share(net, id);
    for (int i = 0; i < f->n_check; i++) {
        int u = g_array_index(net->checks, FlowCheck, f->first_check + i).unit;
        UnitFlows *on = &net->on_unit[u];
        if (on->n == on->room) {
            on->room = MAX(2 * on->room, 4);
            on->id = g_renew(int32_t, on->id, on->room);
        }
        on->id[on->n++] = id;
        dirty(net, u);
    }
}

/* Cells: share flow `id` of activity `a` ends now. */
static void flow_ended(Net *net, int id, int32_t a)
{
    const Activity *act = &net->activities[a];
    net->ended_s[(gsize)a * net->most_flows + net->flow_at[id] -
                 act->entry->first_flow[act->phase]] = net->now;
    const PlanFlow *f = flow_of_share(net, id);
    for (int i = 0; i < f->n_check; i++) {
        int u = g_array_index(net->checks, FlowCheck, f->first_check + i).unit;
        UnitFlows *on = &net->on_unit[u];
        int k = 0;
        while (on->id[k] != id)
            k++;
        on->id[k] = on->id[--on->n];
        dirty(net, u);
    }
}

/* Whether `a` and `b` are equal but for rounding. */
static gboolean alike(double a, double b)
{
    return fabs(a - b) <= CELL_TOLERANCE * MAX(fabs(a), fabs(b));
}

/* Whether the links of unit `u`'s parts all carry the same load, tag by
 * tag: the unequal flows' counts on them times their rates (the others
 * load every link of the unit alike). */
static gboolean unit_alike(Net *net, int u)
{
    int parts = net->parts[u], tags = net->tags;
    double *load = net->part_load;
    memset(load, 0, sizeof(double) * (gsize)parts * tags);
    const UnitFlows *on = &net->on_unit[u];
    for (int i = 0; i < on->n; i++) {
        const Activity *a = &net->activities[share_token(net->share, on->id[i])];
        const PlanFlow *f = flow_of_share(net, on->id[i]);
        const FlowCheck *c = &g_array_index(net->checks, FlowCheck, f->first_check);
        while (c->unit != u)
            c++;
        const int *count = &g_array_index(net->check_counts, int, c->first);
        double rate = share_rate(net->share, on->id[i]);
        for (int p = 0; p < parts; p++)
            load[p * tags + a->tag] += count[p] * rate;
    }
    for (int p = 1; p < parts; p++)
        for (int tag = 0; tag < tags; tag++)
            if (!alike(load[p * tags + tag], load[tag]))
                return FALSE;
    return TRUE;
}

/* Checks the units marked dirty since the last call. */
static void check_units(Net *net)
{
    for (int i = 0; i < net->n_dirty; i++) {
        int u = net->dirty[i];
        net->is_dirty[u] = 0;
        if (!unit_alike(net, u))
            net->broken |= NET_BROKEN_CELLS;
    }
    net->n_dirty = 0;
}

/* Cells: whether every kind of instance of activity `a`'s phase ended it
 * now, its last flow with the phase's. */
static gboolean kinds_ended(const Net *net, int32_t a)
{
    const Activity *act = &net->activities[a];
    const RouteEntry *e = act->entry;
    const double *ended = &net->ended_s[(gsize)a * net->most_flows];
    for (int at = e->kind_first[act->phase]; at < e->kind_first[act->phase + 1];) {
        int n = e->kinds[at++];
        double last = 0;
        for (int i = 0; i < n; i++, at++)
            last = MAX(last, ended[e->kinds[at]]);
        if (!alike(last, net->now))
            return FALSE;
    }
    return TRUE;
}

/* Cells: keeps `route` of the group `members` for net_seal, with the
 * instances it stands for; none when it makes no flows. */
static void hold(Net *net, RouteEntry *e, CollRoute *route, const int *members, int n)
{
    double images;
    unsigned invariant;
    net->broken |= symmetry_group_images(net->sym, members, n, &images, &invariant);
    e->flows = g_array_new(FALSE, FALSE, sizeof(PlanFlow));
    int n_gen = e->latency_bound || !net->contention ? 0 : symmetry_generators(net->sym);
    for (int i = 0; i < n_gen; i++)
        if (invariant & 1u << i)
            check_invariant(net, route, i, members, n);
    if (e->latency_bound || !net->contention || net->broken) {
        algo_route_free(route);
        return;
    }
    symmetry_instances(net->sym, members, n, &e->inst);
    e->pending = route;
}

/* Caches `route`, which takes `alone_s` alone, under `key`, its group's
 * `members` (n of them); returns its index. */
static int add_route(Net *net, const RouteKey *key, CollRoute *route, double alone_s)
{
    RouteEntry *e = g_new0(RouteEntry, 1);
    e->alone_s = alone_s;
    e->stream = STREAM_NONE;
    e->algorithm = route->algorithm;
    e->n_phases = route->n_phases;
    for (int p = 0; p < route->n_phases; p++)
        e->latency_s[p] = route->phase[p].latency_s;
    e->latency_bound = TRUE;
    for (int i = 0; i < route->n_transfers; i++)
        e->latency_bound &= route->payload[i] <= NET_PACKET_BYTES;
    count_sent(net, e, route, key->members, key->n);
    if (net->cells) {
        hold(net, e, route, key->members, key->n);
    } else {
        make_flows(net, e, route, key->members, key->n);
        algo_route_free(route);
    }
    int id = (int)net->routes->len;
    g_ptr_array_add(net->routes, e);
    g_hash_table_insert(net->route_of, g_memdup2(key, sizeof *key), GINT_TO_POINTER(id + 1));
    return id;
}

int net_route(Net *net, CollOp op, const int *members, int n, double bytes)
{
    RouteKey key = {.members = members, .n = n, .op = op, .forced = net->forced, .bytes = bytes};
    gpointer found = g_hash_table_lookup(net->route_of, &key);
    if (found)
        return GPOINTER_TO_INT(found) - 1;
    CollRoute *route = algo_route_new();
    g_autoptr(CollRanks) ranks = algo_ranks_new(net->topo, members, n);
    double alone = algo_choose(route, ranks, op, net->forced, bytes, alone_s, net);
    return add_route(net, &key, route, alone);
}

/* Whether the shifts move GPU `gpu`'s host as they move `gpu`
 * (topology_host: true when every generator's stride times its size
 * divides the GPUs, as the layout's dimensions do). */
static gboolean hosts_shift(const Net *net, int gpu)
{
    int n_gen = 0, host = topology_host(net->topo, gpu);
    const SymmetryGenerator *gen = net->sym ? symmetry_generator_list(net->sym, &n_gen) : NULL;
    for (int i = 0; i < n_gen; i++)
        if (symmetry_shift_by(&gen[i], host, 1) !=
            topology_host(net->topo, symmetry_shift_by(&gen[i], gpu, 1)))
            return FALSE;
    return TRUE;
}

int net_copy_route(Net *net, int gpu, gboolean up, double bytes)
{
    if (!net->self) {
        gsize gpus = (gsize)topology_gpus(net->topo);
        net->self = bigmem_alloc(sizeof(int) * gpus);
        for (gsize i = 0; i < gpus; i++)
            net->self[i] = (int)i;
    }
    RouteKey key = {.members = &net->self[gpu], .n = 1, .copy = 1 + (up != 0), .bytes = bytes};
    gpointer found = g_hash_table_lookup(net->route_of, &key);
    if (found)
        return GPOINTER_TO_INT(found) - 1;
    g_assert(hosts_shift(net, gpu));
    CollRoute *route = algo_route_new();
    int host = topology_host(net->topo, gpu);
    algo_copy_route(route, up ? host : gpu, up ? gpu : host, bytes);
    double cost[PROTOCOLS];
    alone_s(route, 1u << PROTOCOL_SIMPLE, cost, net);
    return add_route(net, &key, route, cost[PROTOCOL_SIMPLE]);
}

unsigned net_broken(const Net *net)
{
    return net->broken;
}

const SymmetryMark *net_marks(const Net *net, int *n)
{
    *n = (int)net->marks->len;
    return (const SymmetryMark *)(void *)net->marks->data;
}

/* ---- running --------------------------------------------------------------- */

static void push(Net *net, double time, int32_t id, unsigned kind, uint32_t version)
{
    evq_push(net->events, time, id, (uint32_t)kind << KIND_SHIFT | (version & VERSION_MASK));
}

static void flow_changed(void *ctx, int id, double end_s, uint32_t version)
{
    Net *net = ctx;
    push(net, end_s, id, EV_FLOW, version);
    if (!net->cells)
        return;
    const PlanFlow *f = flow_of_share(net, id);
    for (int i = 0; i < f->n_check; i++)
        dirty(net, g_array_index(net->checks, FlowCheck, f->first_check + i).unit);
}

CollAlgorithm net_start(Net *net, double now, int32_t token, int route, int tag)
{
    const RouteEntry *e = g_ptr_array_index(net->routes, route);
    if (net->n_free == 0 && net->n_activities == net->activities_room) {
        net->activities_room = MAX(2 * net->activities_room, 16);
        net->activities = g_renew(Activity, net->activities, net->activities_room);
        net->free_activities = g_renew(int32_t, net->free_activities, net->activities_room);
        if (net->cells)
            net->ended_s =
                g_renew(double, net->ended_s, (gsize)net->activities_room * net->most_flows);
    }
    int32_t id = net->n_free > 0 ? net->free_activities[--net->n_free] : net->n_activities++;
    net->activities[id] = (Activity){.token = token, .entry = e, .phase = 0, .tag = tag};
    if (net->contention && !e->latency_bound)
        push(net, now + e->latency_s[0], id, EV_LATENCY, 0);
    else
        push(net, now + e->alone_s, id, EV_ALONE, 0);
    return e->algorithm;
}

double net_next_s(const Net *net)
{
    return evq_next_s(net->events);
}

/* Only net_step grows `done`: the engine starts collectives while it reads
 * the list. */
static void finish(Net *net, int32_t id)
{
    if (net->n_done == net->done_room) {
        net->done_room = MAX(2 * net->done_room, 16);
        net->done = g_renew(int32_t, net->done, net->done_room);
    }
    net->done[net->n_done++] = net->activities[id].token;
    net->free_activities[net->n_free++] = id;
}

/* Queues the end of a flow apart of activity `id` once `now`'s events are
 * done, as the share queues its flows' (share_update): an end at `now`
 * comes at a later step. */
static void defer(Net *net, double end_s, int32_t id)
{
    if (net->n_deferred == net->deferred_room) {
        net->deferred_room = MAX(2 * net->deferred_room, 16);
        net->deferred = g_renew(Deferred, net->deferred, net->deferred_room);
    }
    net->deferred[net->n_deferred++] = (Deferred){.end_s = end_s, .id = id};
}

/* Starts the flows of activity `id`'s current phase. */
static void start_phase(Net *net, int32_t id)
{
    Activity *a = &net->activities[id];
    const RouteEntry *e = a->entry;
    int first = e->first_flow[a->phase], end = e->first_flow[a->phase + 1];
    if (e->apart) { /* an end a distinct time */
        net->flows_apart += (guint64)(end - first);
        a->flows_left = e->flow_s_first[a->phase + 1] - e->flow_s_first[a->phase];
        for (int k = e->flow_s_first[a->phase]; k < e->flow_s_first[a->phase + 1]; k++)
            defer(net, net->now + e->flow_s[k], id);
    } else {
        a->flows_left = end - first;
        for (int i = first; i < end; i++) {
            const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
            int flow = share_start_weighted(net->share, net->now, f->path, f->weight, f->n,
                                            f->bytes, a->tag, id);
            if (net->cells)
                flow_started(net, flow, i);
        }
    }
    if (end == first)
        finish(net, id);
}

/* A phase's last flow ended: the next phase after its latency, or done. */
static void end_phase(Net *net, int32_t id)
{
    Activity *a = &net->activities[id];
    if (net->cells && !kinds_ended(net, id))
        net->broken |= NET_BROKEN_CELLS;
    if (++a->phase < a->entry->n_phases)
        push(net, net->now + a->entry->latency_s[a->phase], id, EV_LATENCY, 0);
    else
        finish(net, id);
}

/* Flows of a route apart ended (those of one of its phase's times): its
 * activity's phase with the last, counted for net_settle. */
static void end_apart(Net *net, int32_t id)
{
    Activity *a = &net->activities[id];
    if (--a->flows_left > 0)
        return;
    a->entry->ran[a->phase * net->tags + a->tag]++;
    end_phase(net, id);
}

void net_settle(Net *net)
{
    for (guint r = 0; r < net->routes->len; r++) {
        const RouteEntry *e = g_ptr_array_index(net->routes, r);
        for (int p = 0; e->apart && p < e->n_phases; p++)
            for (int tag = 0; tag < net->tags; tag++) {
                double times = (double)e->ran[p * net->tags + tag];
                for (int i = e->first_flow[p]; times > 0 && i < e->first_flow[p + 1]; i++) {
                    const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
                    share_carry(net->share, f->path, f->weight, f->n, tag, times * f->bytes);
                }
                e->ran[p * net->tags + tag] = 0;
            }
    }
}

const int32_t *net_step(Net *net, int *n)
{
    net->n_done = 0;
    *n = 0;
    double now = evq_next_s(net->events);
    if (now == INFINITY)
        return net->done;
    net->now = now;
    Event ev;
    while (evq_pop_until(net->events, now, &ev)) { /* nothing is earlier than now */
        unsigned kind = ev.aux >> KIND_SHIFT;
        if (kind == EV_ALONE) {
            finish(net, ev.payload);
        } else if (kind == EV_APART) {
            end_apart(net, ev.payload);
        } else if (kind == EV_LATENCY) {
            start_phase(net, ev.payload);
        } else if ((share_version(net->share, ev.payload) & VERSION_MASK) ==
                   (ev.aux & VERSION_MASK)) {
            int32_t id = share_token(net->share, ev.payload);
            if (net->cells)
                flow_ended(net, ev.payload, id);
            share_end(net->share, net->now, ev.payload);
            if (--net->activities[id].flows_left == 0)
                end_phase(net, id);
        }
    }
    for (int i = 0; i < net->n_deferred; i++) /* where the share queues its ends */
        push(net, net->deferred[i].end_s, net->deferred[i].id, EV_APART, 0);
    net->n_deferred = 0;
    share_update(net->share, net->now, flow_changed, net);
    if (net->cells)
        check_units(net);
    *n = net->n_done;
    return net->done;
}

/* Without contention, or latency-bound, a route makes no flows and loads
 * no link: nothing to count (start_phase). */
void net_repeat(Net *net, int route, int tag, double times)
{
    const RouteEntry *e = g_ptr_array_index(net->routes, route);
    if (!net->contention || e->latency_bound)
        return;
    for (guint i = 0; i < e->flows->len; i++) {
        const PlanFlow *f = &g_array_index(e->flows, PlanFlow, i);
        for (int k = 0; k < f->n; k++)
            share_add_link_bytes(net->share, f->path[k], tag, times * f->weight[k] * f->bytes);
    }
}

double net_sent_bytes(const Net *net, int route, int gpu)
{
    const RouteEntry *e = g_ptr_array_index(net->routes, route);
    int i = 0;
    while (i < e->n && e->members[i] != gpu)
        i++;
    g_assert(i < e->n); /* a member */
    return e->sent[i];
}

const Topology *net_topology(const Net *net)
{
    return net->topo;
}

double net_link_bytes(const Net *net, int link)
{
    return share_link_bytes(net->share, net->sym ? net->link_class[link] : link);
}

double net_link_tag_bytes(const Net *net, int link, int tag)
{
    return share_link_tag_bytes(net->share, net->sym ? net->link_class[link] : link, tag);
}
