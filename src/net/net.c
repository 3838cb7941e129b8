/* net.c: running collectives as phases of flows over shared links.
 *
 * State: a pool of running collectives (activities), each at one phase of
 * its cached plan, with the count of that phase's flows still running; the
 * flows themselves live in a Share. The network's own event queue holds
 * "latency elapsed" events per activity and "flow may end" events per flow
 * (stamped with the flow's version: a flow whose rate changed since is
 * skipped, a newer event is queued). Without contention an activity has one
 * event, at its end alone. */
#include "net/net.h"

#include <math.h>

#include "core/evq.h"
#include "core/share.h"

enum { EV_LATENCY, EV_FLOW, EV_ALONE }; /* event kinds, in aux's top bits */
#define KIND_SHIFT   30
#define VERSION_MASK ((1u << KIND_SHIFT) - 1)

typedef struct {
    const int *members;
    int n;
    CollOp op;
    CollAlgorithm forced;
    double bytes;
} PlanKey;

typedef struct {
    CollPlan *plan;
    double alone_s;
} PlanEntry;

typedef struct {
    int32_t token;
    const CollPlan *plan;
    int phase;
    int flows_left;
    int tag;
} Activity;

struct Net {
    Topology *topo;
    Share *share;
    gboolean contention;
    CollAlgorithm forced; /* AUTO: choose per collective */
    EventQueue *events;
    double now;
    GArray *activities; /* Activity pool */
    GArray *free_activities;
    GHashTable *plans; /* PlanKey -> PlanEntry */
    double *load;      /* per link: scratch of alone_s, zero between uses */
};

static guint key_hash(gconstpointer p)
{
    const PlanKey *k = p;
    guint h = g_direct_hash(k->members) ^ (guint)k->n * 2654435761u;
    h = h * 31 + (guint)k->op * 7 + (guint)k->forced;
    return h * 31 + g_double_hash(&k->bytes);
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
    algo_plan_free(e->plan);
    g_free(e);
}

Net *net_new(const ClusterSpec *cluster, int gpus, CollAlgorithm algorithm, gboolean contention,
             int tags)
{
    Net *net = g_new0(Net, 1);
    int nodes = (gpus + cluster->gpus_per_node - 1) / cluster->gpus_per_node;
    net->topo = topology_new(cluster, MAX(nodes, 1));
    net->share = share_new(topology_capacities(net->topo), topology_links(net->topo), tags);
    net->contention = contention;
    net->forced = algorithm != ALGORITHM_AUTO ? algorithm : cluster->algorithm;
    net->events = evq_new(64);
    net->activities = g_array_new(FALSE, FALSE, sizeof(Activity));
    net->free_activities = g_array_new(FALSE, FALSE, sizeof(int32_t));
    net->plans = g_hash_table_new_full(key_hash, key_equal, g_free, entry_free);
    net->load = g_new0(double, topology_links(net->topo));
    return net;
}

void net_free(Net *net)
{
    if (!net)
        return;
    topology_free(net->topo);
    share_free(net->share);
    evq_free(net->events);
    g_array_free(net->activities, TRUE);
    g_array_free(net->free_activities, TRUE);
    g_hash_table_destroy(net->plans);
    g_free(net->load);
    g_free(net);
}

/* ---- time alone ------------------------------------------------------------ */

/* The time `plan` takes on empty links: per phase its latency, then the
 * most loaded link's bytes over its capacity. For rings, trees and their
 * phases every flow on that link moves the same bytes, so this is the time
 * the flows take sharing it fairly: exactly the alpha-beta formulas. */
static double alone_s(const CollPlan *plan, void *ctx)
{
    Net *net = ctx;
    const double *capacity = topology_capacities(net->topo);
    double total = 0;
    for (int p = 0; p < plan->n_phases; p++) {
        const CollPhase *ph = &plan->phase[p];
        double slowest = 0;
        for (int i = 0; i < ph->count; i++) { /* load the links */
            const Transfer *tr = &g_array_index(plan->transfers, Transfer, ph->first + i);
            int path[TOPOLOGY_MAX_PATH], n;
            topology_path(net->topo, tr->src, tr->dst, path, &n);
            for (int k = 0; k < n; k++)
                net->load[path[k]] += tr->bytes;
        }
        for (int i = 0; i < ph->count; i++) { /* read and clear them */
            const Transfer *tr = &g_array_index(plan->transfers, Transfer, ph->first + i);
            int path[TOPOLOGY_MAX_PATH], n;
            topology_path(net->topo, tr->src, tr->dst, path, &n);
            for (int k = 0; k < n; k++) {
                slowest = MAX(slowest, net->load[path[k]] / capacity[path[k]]);
                net->load[path[k]] = 0;
            }
        }
        total += ph->latency_s + slowest;
    }
    return total;
}

/* The cached plan of a collective, choosing its algorithm if need be. */
static const PlanEntry *plan_for(Net *net, CollOp op, CollAlgorithm forced, const int *members,
                                 int n, double bytes)
{
    PlanKey key = {members, n, op, forced, bytes};
    PlanEntry *e = g_hash_table_lookup(net->plans, &key);
    if (e)
        return e;
    e = g_new0(PlanEntry, 1);
    e->plan = algo_plan_new();
    g_autoptr(CollRanks) ranks = algo_ranks_new(net->topo, members, n);
    e->alone_s = algo_choose(e->plan, ranks, op, forced, bytes, alone_s, net);
    PlanKey *stored = g_new(PlanKey, 1);
    *stored = key;
    g_hash_table_insert(net->plans, stored, e);
    return e;
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

CollAlgorithm net_start(Net *net, double now, int32_t token, CollOp op, const int *members, int n,
                        double bytes, int tag)
{
    const PlanEntry *e = plan_for(net, op, net->forced, members, n, bytes);
    int32_t id;
    if (net->free_activities->len > 0) {
        id = g_array_index(net->free_activities, int32_t, net->free_activities->len - 1);
        g_array_set_size(net->free_activities, net->free_activities->len - 1);
    } else {
        id = (int32_t)net->activities->len;
        g_array_set_size(net->activities, net->activities->len + 1);
    }
    g_array_index(net->activities, Activity, id) = (Activity){token, e->plan, 0, 0, tag};
    if (net->contention)
        push(net, now + e->plan->phase[0].latency_s, id, EV_LATENCY, 0);
    else
        push(net, now + e->alone_s, id, EV_ALONE, 0);
    return e->plan->algorithm;
}

double net_next_s(const Net *net)
{
    Event ev;
    return evq_peek(net->events, &ev) ? ev.time_s : INFINITY;
}

static void finish(Net *net, int32_t id, GArray *done)
{
    Activity *a = &g_array_index(net->activities, Activity, id);
    g_array_append_val(done, a->token);
    g_array_append_val(net->free_activities, id);
}

/* Starts the flows of activity `id`'s current phase. */
static void start_phase(Net *net, int32_t id, GArray *done)
{
    Activity *a = &g_array_index(net->activities, Activity, id);
    const CollPhase *ph = &a->plan->phase[a->phase];
    a->flows_left = ph->count;
    for (int i = 0; i < ph->count; i++) {
        const Transfer *tr = &g_array_index(a->plan->transfers, Transfer, ph->first + i);
        int path[TOPOLOGY_MAX_PATH], n;
        topology_path(net->topo, tr->src, tr->dst, path, &n);
        share_start(net->share, net->now, path, n, tr->bytes, a->tag, id);
    }
    if (ph->count == 0)
        finish(net, id, done);
}

/* A phase's last flow ended: the next phase after its latency, or done. */
static void end_phase(Net *net, int32_t id, GArray *done)
{
    Activity *a = &g_array_index(net->activities, Activity, id);
    if (++a->phase < a->plan->n_phases)
        push(net, net->now + a->plan->phase[a->phase].latency_s, id, EV_LATENCY, 0);
    else
        finish(net, id, done);
}

void net_step(Net *net, GArray *done)
{
    Event ev;
    if (!evq_peek(net->events, &ev))
        return;
    net->now = ev.time_s;
    while (evq_peek(net->events, &ev) && ev.time_s == net->now) {
        evq_pop(net->events, &ev);
        unsigned kind = ev.aux >> KIND_SHIFT;
        if (kind == EV_ALONE) {
            finish(net, ev.payload, done);
        } else if (kind == EV_LATENCY) {
            start_phase(net, ev.payload, done);
        } else if ((share_version(net->share, ev.payload) & VERSION_MASK) ==
                   (ev.aux & VERSION_MASK)) {
            int32_t id = share_token(net->share, ev.payload);
            share_end(net->share, net->now, ev.payload);
            if (--g_array_index(net->activities, Activity, id).flows_left == 0)
                end_phase(net, id, done);
        }
    }
    share_update(net->share, net->now, flow_changed, net);
}

double net_sent_bytes(const Net *net, CollOp op, const int *members, int n, double bytes, int gpu)
{
    PlanKey key = {members, n, op, net->forced, bytes};
    const PlanEntry *e = g_hash_table_lookup(net->plans, &key);
    g_assert(e); /* it ran */
    double sent = 0;
    for (guint i = 0; i < e->plan->transfers->len; i++) {
        const Transfer *tr = &g_array_index(e->plan->transfers, Transfer, i);
        if (tr->src == gpu)
            sent += tr->bytes;
    }
    return sent;
}

const Topology *net_topology(const Net *net)
{
    return net->topo;
}

double net_link_bytes(const Net *net, int link)
{
    return share_link_bytes(net->share, link);
}

double net_link_tag_bytes(const Net *net, int link, int tag)
{
    return share_link_tag_bytes(net->share, link, tag);
}
