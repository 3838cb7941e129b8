/* net.c: running collectives as phases of flows over shared links.
 *
 * State: a pool of running collectives (activities), each at one phase of
 * its cached plan, with the count of that phase's flows still running; the
 * flows themselves live in a Share. The network's own event queue holds
 * "latency elapsed" events per activity and "flow may end" events per flow
 * (stamped with the flow's version: a flow whose rate changed since is
 * skipped, a newer event is queued). Without contention an activity has one
 * event, at its end alone.
 *
 * Plans are numbered in the order they are made, a hash from their key to
 * the number finding them again. A plan's flows are made once, when it is
 * cached (each transfer's path), and so are the bytes each member sends;
 * then its transfers are dropped.
 * With a symmetry (symmetry.h) the share's links are the link classes (the
 * orbits of the links under the shifts, symmetry_link_classes) and the
 * flows of a phase are merged by orbit: transfers with one canonical form
 * are one flow, weighted on each class by the number of the orbit's
 * transfers that cross any one link of it, images x count x
 * links-of-the-class-on-the-path / links-in-the-class. A cached plan whose
 * group some shift maps onto itself must be mapped onto itself by that
 * shift too (a tree rooted at one member is not; checked in time linear in
 * its transfers): otherwise the symmetry is broken and the replay says so
 * (net_broken).
 * A collective whose every transfer carries at most one packet's data
 * (NET_PACKET_BYTES) is latency-bound: the fluid model of shared links is for
 * streams of packets, and such a collective takes its time alone, makes
 * no flows and loads no links (its few bytes would change others' times
 * by nanoseconds). Its plan need not be symmetric: a tree of amaxes
 * rooted at one replica leaves the replay's symmetry whole. */
#include "net/net.h"

#include <math.h>

#include "base/bigmem.h"
#include "core/evq.h"
#include "core/share.h"

#include <string.h>

enum { EV_LATENCY, EV_FLOW, EV_ALONE }; /* event kinds, in aux's top bits */
#define KIND_SHIFT   30
#define VERSION_MASK ((1u << KIND_SHIFT) - 1)
#define LOAD_COLUMNS (PROTOCOLS - 1) /* alone_s's loads: LL's come from Simple's */

typedef struct {
    const int *members;
    int n;
    CollOp op;
    CollAlgorithm forced;
    double bytes;
} PlanKey;

/* A flow of a plan: a transfer (or, with a symmetry, an orbit of them). */
typedef struct {
    int n; /* links (or link classes) on its path */
    int32_t path[SHARE_MAX_PATH];
    double weight[SHARE_MAX_PATH];
    double bytes;
} PlanFlow;

/* A cached plan: what running it needs of its CollPlan, whose transfers
 * are dropped once its flows are made. */
typedef struct {
    CollAlgorithm algorithm;
    int n_phases;
    double latency_s[ALGO_MAX_PHASES]; /* per phase */
    double alone_s;
    gboolean latency_bound;              /* no transfer over a packet: alone, no flows */
    GArray *flows;                       /* PlanFlow, phase after phase */
    int first_flow[ALGO_MAX_PHASES + 1]; /* per phase, its first flow; one more entry */
    const int *members;                  /* the group's GPUs, n of them */
    int n;
    double *sent; /* per member: the bytes it sends */
} PlanEntry;

typedef struct {
    int32_t token;
    const PlanEntry *entry;
    int phase;
    int flows_left;
    int tag;
} Activity;

struct Net {
    Topology *topo;
    const Symmetry *sym; /* NULL: every link, every transfer */
    int *link_class;     /* with sym: per link, its class */
    double *class_size;  /* with sym: links per class */
    unsigned broken;     /* generators some plan was not symmetric under */
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
    GPtrArray *plans;             /* PlanEntry, by plan index */
    GHashTable *plan_of;          /* PlanKey -> its plan index + 1 */
    double (*load)[LOAD_COLUMNS]; /* per link: scratch of alone_s, valid when stamped */
    uint32_t *stamp, epoch;       /* per link: the phase of alone_s that last loaded it */
    double *sent;                 /* per GPU: scratch of net_plan, zero between uses */
    int32_t *out;                 /* per GPU: scratch of phase_invariant, -1 between uses */
};

/* A double's bits folded, inline: the tally hashes every transfer. */
static inline guint bits_hash(double x)
{
    guint64 bits;
    memcpy(&bits, &x, sizeof bits);
    return (guint)(bits ^ bits >> 32);
}

static guint transfer_hash(const Transfer *t)
{
    return ((guint)t->src * 2654435761u) ^ ((guint)t->dst * 40503u) ^ bits_hash(t->bytes);
}

static guint key_hash(gconstpointer p)
{
    const PlanKey *k = p;
    guint h = g_direct_hash(k->members) ^ (guint)k->n * 2654435761u;
    h = h * 31 + (guint)k->op * 7 + (guint)k->forced;
    return h * 31 + bits_hash(k->bytes);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const PlanKey *x = a, *y = b;
    return x->members == y->members && x->n == y->n && x->op == y->op && x->forced == y->forced &&
           x->bytes == y->bytes;
}

static void entry_free(gpointer p)
{
    PlanEntry *e = p;
    g_array_free(e->flows, TRUE);
    g_free(e->sent);
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
             gboolean contention, int tags, const double *link_scale)
{
    Net *net = g_new0(Net, 1);
    int nodes = (gpus + cluster->gpus_per_node - 1) / cluster->gpus_per_node;
    net->topo = topology_new(cluster, MAX(nodes, 1));
    net->sym = sym && symmetry_orbit(sym) > 1 ? sym : NULL;
    g_assert(!(net->sym && link_scale)); /* a slowed link has no images */
    for (int l = 0; link_scale && l < topology_links(net->topo); l++)
        if (link_scale[l] != 1) {
            topology_scale_link(net->topo, l, link_scale[l]);
            net->slowed = TRUE;
        }
    g_autofree double *capacity = NULL;
    int units = topology_links(net->topo);
    if (net->sym) {
        units = link_classes(net, &capacity);
    } else {
        capacity = g_new(double, units);
        for (int l = 0; l < units; l++)
            capacity[l] = topology_capacity(net->topo, l);
    }
    net->share = share_new(capacity, units, tags);
    net->contention = contention;
    net->forced = algorithm != ALGORITHM_AUTO ? algorithm : cluster->algorithm;
    net->events = evq_new(64);
    net->plans = g_ptr_array_new_with_free_func(entry_free);
    net->plan_of = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
    /* per link or GPU: over a million GPUs, big (bigmem.h) */
    gsize links = (gsize)topology_links(net->topo), gpu_count = (gsize)topology_gpus(net->topo);
    net->load = bigmem_alloc(sizeof *net->load * links);
    net->stamp = bigmem_alloc0(sizeof(uint32_t) * links);
    net->sent = bigmem_alloc0(sizeof(double) * gpu_count);
    net->out = memset(bigmem_alloc(sizeof(int32_t) * gpu_count), -1, sizeof(int32_t) * gpu_count);
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
    g_hash_table_destroy(net->plan_of);
    g_ptr_array_free(net->plans, TRUE);
    bigmem_free(net->load);
    bigmem_free(net->stamp);
    bigmem_free(net->sent);
    bigmem_free(net->out);
    g_free(net->link_class);
    g_free(net->class_size);
    g_free(net);
}

/* ---- time alone ------------------------------------------------------------ */

/* The time `plan` takes on empty links with each protocol of `protocols`:
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
static void alone_s(const CollPlan *plan, unsigned protocols, double cost[PROTOCOLS], void *ctx)
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
    for (int ph_i = 0; ph_i < plan->n_phases; ph_i++) {
        const CollPhase *ph = &plan->phase[ph_i];
        if (++net->epoch == 0) { /* wrapped: every stamp is stale */
            memset(net->stamp, 0, sizeof(uint32_t) * (gsize)topology_links(net->topo));
            net->epoch = 1;
        }
        double most[LINK_CLASSES][LOAD_COLUMNS] = {{0}};
        for (int i = ph->first; i < ph->first + ph->count; i++) {
            const Transfer *tr = &plan->transfers[i];
            double bytes[LOAD_COLUMNS];
            for (int u = 0; u < n_used; u++)
                bytes[u] = algo_transfer_bytes(plan, i, share[u]);
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
            for (int c = 0; c < LINK_CLASSES; c++)
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

/* `count` transfers of a phase as one flow: with a symmetry, the plan's
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
    const CollPlan *plan;
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
        const Transfer *tr = &lists->plan->transfers[lists->ph->first + k];
        if (n == lists->room) {
            lists->room *= 2;
            for (int w = 0; w < 2; w++)
                lists->list[w] = g_renew(Transfer, lists->list[w], lists->room);
        }
        lists->list[which][n++] =
            (Transfer){0, g ? symmetry_shift_by(g, tr->dst, 1) : tr->dst, tr->bytes};
    }
    sort_transfers(lists->list[which], n);
    return n;
}

/* Whether generator `g`, which maps the plan's group `members` onto
 * itself, maps phase `ph` of `plan` onto itself: whether for every member
 * the transfers out of it, shifted, are (as a multiset) those out of its
 * image. Linear in the transfers: they are listed per GPU, not sorted, and
 * a member and its image with one transfer each are compared in place. */
static gboolean phase_invariant(Net *net, const CollPlan *plan, const CollPhase *ph,
                                const SymmetryGenerator *g, const int *members, int n)
{
    OutLists lists = {plan, ph, g_new(int32_t, MAX(ph->count, 1)),
                      {g_new(Transfer, 16), g_new(Transfer, 16)}, 16};
    for (int k = ph->count - 1; k >= 0; k--) {
        int src = plan->transfers[ph->first + k].src;
        lists.next[k] = net->out[src];
        net->out[src] = k;
    }
    gboolean same = TRUE;
    for (int m = 0; m < n && same; m++) {
        int image = symmetry_shift_by(g, members[m], 1);
        int32_t a = net->out[members[m]], b = net->out[image];
        if (a >= 0 && b >= 0 && lists.next[a] < 0 && lists.next[b] < 0) { /* one each */
            const Transfer *x = &plan->transfers[ph->first + a],
                           *y = &plan->transfers[ph->first + b];
            same = symmetry_shift_by(g, x->dst, 1) == y->dst && x->bytes == y->bytes;
            continue;
        }
        int count = transfers_out(net, &lists, members[m], g, 0);
        same = transfers_out(net, &lists, image, NULL, 1) == count &&
               memcmp(lists.list[0], lists.list[1], sizeof(Transfer) * (gsize)count) == 0;
    }
    for (int k = 0; k < ph->count; k++)
        net->out[plan->transfers[ph->first + k].src] = -1;
    g_free(lists.next);
    g_free(lists.list[0]);
    g_free(lists.list[1]);
    return same;
}

/* Distinct transfers in order of first appearance, each with its count:
 * an open-addressing hash of indices into `canon`. */
typedef struct {
    GArray *canon; /* Transfer */
    GArray *count; /* double */
    int32_t *slot; /* index into canon, -1 empty; a power of two of them */
    guint mask;
} Tally;

static Tally tally_new(void)
{
    Tally t = {g_array_new(FALSE, FALSE, sizeof(Transfer)), g_array_new(FALSE, FALSE, sizeof(double)),
               g_new(int32_t, 16), 15};
    memset(t.slot, -1, sizeof(int32_t) * 16);
    return t;
}

static void tally_free(Tally *t)
{
    g_array_free(t->canon, TRUE);
    g_array_free(t->count, TRUE);
    g_free(t->slot);
}

/* The slot of `tr` in t->slot: its index's, or the empty one it would take. */
static guint tally_find(const Tally *t, const Transfer *tr)
{
    guint h = transfer_hash(tr) & t->mask;
    for (;; h = (h + 1) & t->mask) {
        int32_t at = t->slot[h];
        const Transfer *c = at >= 0 ? &g_array_index(t->canon, Transfer, at) : NULL;
        if (!c || (c->src == tr->src && c->dst == tr->dst && c->bytes == tr->bytes))
            return h;
    }
}

static void tally_add(Tally *t, const Transfer *tr)
{
    guint h = tally_find(t, tr);
    if (t->slot[h] >= 0) {
        g_array_index(t->count, double, t->slot[h])++;
        return;
    }
    double one = 1;
    t->slot[h] = (int32_t)t->canon->len;
    g_array_append_val(t->canon, *tr);
    g_array_append_val(t->count, one);
    if (2 * t->canon->len > t->mask) { /* at most half full: rehash into twice the room */
        t->mask = 2 * t->mask + 1;
        t->slot = g_renew(int32_t, t->slot, t->mask + 1);
        memset(t->slot, -1, sizeof(int32_t) * (t->mask + 1));
        for (guint k = 0; k < t->canon->len; k++)
            t->slot[tally_find(t, &g_array_index(t->canon, Transfer, k))] = (int32_t)k;
    }
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

/* The flows of a plan's phases: one per transfer, copies of it merged,
 * or with a symmetry one per orbit (canonical forms counted, kept in
 * order of first appearance), then flows over the same links merged
 * (merge_flows). A flow standing for k identical ones (the same path,
 * bytes and start) weighs k on each of its links: max-min fair rates are
 * unique, so identical flows get equal ones, which the weighted flow
 * gets. */
static void make_flows(Net *net, PlanEntry *e, const CollPlan *plan, const int *members, int n)
{
    e->flows = g_array_new(FALSE, FALSE, sizeof(PlanFlow));
    double images = 1;
    unsigned invariant = 0;
    int n_gen = 0;
    const SymmetryGenerator *gen = net->sym ? symmetry_generator_list(net->sym, &n_gen) : NULL;
    if (net->sym)
        net->broken |= symmetry_group_images(net->sym, members, n, &images, &invariant);
    if (e->latency_bound)
        return; /* no flows: first_flow stays 0 */
    for (int p = 0; p < plan->n_phases; p++) {
        const CollPhase *ph = &plan->phase[p];
        e->first_flow[p] = (int)e->flows->len;
        for (int i = 0; i < n_gen; i++)
            if (invariant & 1u << i && !phase_invariant(net, plan, ph, &gen[i], members, n))
                net->broken |= 1u << i;
        Tally tally = tally_new();
        for (int k = 0; k < ph->count; k++) {
            const Transfer *tr = &plan->transfers[ph->first + k];
            Transfer c = *tr;
            if (net->sym)
                symmetry_canon_by(gen, n_gen, tr->src, tr->dst, &c.src, &c.dst);
            tally_add(&tally, &c);
        }
        for (guint k = 0; k < tally.canon->len; k++) {
            PlanFlow f = orbit_flow(net, &g_array_index(tally.canon, Transfer, k),
                                    g_array_index(tally.count, double, k), images);
            g_array_append_val(e->flows, f);
        }
        tally_free(&tally);
        merge_flows(e->flows, e->first_flow[p]);
    }
    e->first_flow[plan->n_phases] = (int)e->flows->len;
}

/* The bytes each member of a plan's group sends: its transfers' bytes,
 * summed in plan order. */
static void count_sent(Net *net, PlanEntry *e, const CollPlan *plan, const int *members, int n)
{
    for (int i = 0; i < plan->n_transfers; i++)
        net->sent[plan->transfers[i].src] += plan->payload[i]; /* not link time */
    e->members = members;
    e->n = n;
    e->sent = g_new(double, n);
    for (int i = 0; i < n; i++)
        e->sent[i] = net->sent[members[i]];
    for (int i = 0; i < plan->n_transfers; i++)
        net->sent[plan->transfers[i].src] = 0;
}

int net_plan(Net *net, CollOp op, const int *members, int n, double bytes)
{
    PlanKey key = {members, n, op, net->forced, bytes};
    gpointer found = g_hash_table_lookup(net->plan_of, &key);
    if (found)
        return GPOINTER_TO_INT(found) - 1;
    PlanEntry *e = g_new0(PlanEntry, 1);
    CollPlan *plan = algo_plan_new();
    g_autoptr(CollRanks) ranks = algo_ranks_new(net->topo, members, n);
    e->alone_s = algo_choose(plan, ranks, op, net->forced, bytes, alone_s, net);
    e->algorithm = plan->algorithm;
    e->n_phases = plan->n_phases;
    for (int p = 0; p < plan->n_phases; p++)
        e->latency_s[p] = plan->phase[p].latency_s;
    e->latency_bound = TRUE;
    for (int i = 0; i < plan->n_transfers; i++)
        e->latency_bound &= plan->payload[i] <= NET_PACKET_BYTES;
    make_flows(net, e, plan, members, n);
    count_sent(net, e, plan, members, n);
    algo_plan_free(plan);
    int id = (int)net->plans->len;
    g_ptr_array_add(net->plans, e);
    g_hash_table_insert(net->plan_of, g_memdup2(&key, sizeof key), GINT_TO_POINTER(id + 1));
    return id;
}

unsigned net_broken(const Net *net)
{
    return net->broken;
}

/* ---- running --------------------------------------------------------------- */

static void push(Net *net, double time, int32_t id, unsigned kind, uint32_t version)
{
    evq_push(net->events, time, id, (uint32_t)kind << KIND_SHIFT | (version & VERSION_MASK));
}

static void flow_changed(void *ctx, int id, double end_s, uint32_t version)
{
    push(ctx, end_s, id, EV_FLOW, version);
}

CollAlgorithm net_start(Net *net, double now, int32_t token, int plan, int tag)
{
    const PlanEntry *e = g_ptr_array_index(net->plans, plan);
    if (net->n_free == 0 && net->n_activities == net->activities_room) {
        net->activities_room = MAX(2 * net->activities_room, 16);
        net->activities = g_renew(Activity, net->activities, net->activities_room);
        net->free_activities = g_renew(int32_t, net->free_activities, net->activities_room);
    }
    int32_t id = net->n_free > 0 ? net->free_activities[--net->n_free] : net->n_activities++;
    net->activities[id] = (Activity){token, e, 0, 0, tag};
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

/* Starts the flows of activity `id`'s current phase. */
static void start_phase(Net *net, int32_t id)
{
    Activity *a = &net->activities[id];
    int first = a->entry->first_flow[a->phase], end = a->entry->first_flow[a->phase + 1];
    a->flows_left = end - first;
    for (int i = first; i < end; i++) {
        const PlanFlow *f = &g_array_index(a->entry->flows, PlanFlow, i);
        share_start_weighted(net->share, net->now, f->path, f->weight, f->n, f->bytes, a->tag, id);
    }
    if (end == first)
        finish(net, id);
}

/* A phase's last flow ended: the next phase after its latency, or done. */
static void end_phase(Net *net, int32_t id)
{
    Activity *a = &net->activities[id];
    if (++a->phase < a->entry->n_phases)
        push(net, net->now + a->entry->latency_s[a->phase], id, EV_LATENCY, 0);
    else
        finish(net, id);
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
        } else if (kind == EV_LATENCY) {
            start_phase(net, ev.payload);
        } else if ((share_version(net->share, ev.payload) & VERSION_MASK) ==
                   (ev.aux & VERSION_MASK)) {
            int32_t id = share_token(net->share, ev.payload);
            share_end(net->share, net->now, ev.payload);
            if (--net->activities[id].flows_left == 0)
                end_phase(net, id);
        }
    }
    share_update(net->share, net->now, flow_changed, net);
    *n = net->n_done;
    return net->done;
}

double net_sent_bytes(const Net *net, int plan, int gpu)
{
    const PlanEntry *e = g_ptr_array_index(net->plans, plan);
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
