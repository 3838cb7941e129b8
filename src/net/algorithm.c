/* algorithm.c: the table of collective algorithms, each a row of whether
 * it applies and how it builds its phases (SimGrid-style: a new algorithm
 * is a row and its route function), and the choice among them.
 *
 * Members are grouped by node in the order they are given; a group whose
 * nodes hold different numbers of members runs rings, not the
 * hierarchical algorithm. */
#include "net/algorithm.h"

#include <math.h>

#include "base/bigmem.h"

/* Freed routes, kept for the thread's next algo_route_new with their arrays
 * already grown: a collective over thousands of GPUs otherwise grows them
 * from nothing, copying and faulting in fresh pages, at every route (half
 * of a calibration's time). At most SPARE_ROUTES a thread. */
#define SPARE_ROUTES 4

typedef struct {
    CollRoute *route[SPARE_ROUTES];
    int n;
} Spares;

static void route_destroy(CollRoute *route)
{
    bigmem_free(route->transfers);
    bigmem_free(route->payload);
    bigmem_free(route->efficiency);
    g_free(route);
}

static void spares_free(gpointer data)
{
    Spares *s = data;
    for (int i = 0; i < s->n; i++)
        route_destroy(s->route[i]);
    g_free(s);
}

static GPrivate spares_key = G_PRIVATE_INIT(spares_free);

static Spares *spares(void)
{
    Spares *s = g_private_get(&spares_key);
    if (!s) {
        s = g_new0(Spares, 1);
        g_private_set(&spares_key, s);
    }
    return s;
}

CollRoute *algo_route_new(void)
{
    Spares *s = spares();
    if (s->n == 0)
        return g_new0(CollRoute, 1);
    CollRoute *route = s->route[--s->n];
    *route = (CollRoute){.room = route->room,
                         .transfers = route->transfers,
                         .payload = route->payload,
                         .efficiency = route->efficiency};
    return route;
}

void algo_route_free(CollRoute *route)
{
    if (!route)
        return;
    Spares *s = spares();
    if (s->n == SPARE_ROUTES)
        route_destroy(route);
    else
        s->route[s->n++] = route;
}

/* ---- protocols ------------------------------------------------------------ */

/* NCCL's LL writes 8-byte words of 4 bytes of data and a 4-byte flag; LL128
 * 128-byte lines of 120 bytes of data and an 8-byte flag; Simple moves the
 * data alone (NCCL's src/include/device.h: union ncclLLFifoLine,
 * NCCL_LL128_LINEELEMS and NCCL_LL128_DATAELEMS). */
static const char *const protocol_names[PROTOCOLS] = {"LL", "LL128", "Simple"};
static const double protocol_share[PROTOCOLS] = {0.5, 120.0 / 128.0, 1.0};

const char *algo_protocol_name(CollProtocol p)
{
    return protocol_names[p];
}

double algo_protocol_share(CollProtocol p)
{
    return protocol_share[p];
}

#define ALL_PROTOCOLS (1u << PROTOCOL_LL | 1u << PROTOCOL_LL128 | 1u << PROTOCOL_SIMPLE)

/* The members grouped by node, nodes in order of first appearance and
 * members in their given order within a node: node r's members are
 * by_node[first[r] .. first[r] + count[r]). */
typedef struct {
    int nodes, per_node; /* distinct nodes; the most members on one */
    gboolean uniform;    /* every node holds per_node */
    int *by_node, *first, *count;
} Spread;

static Spread spread_new(const Topology *t, const int *members, int n)
{
    Spread s = {.nodes = 0,
                .per_node = 0,
                .uniform = TRUE,
                .by_node = g_new(int, n),
                .first = g_new(int, n),
                .count = g_new0(int, n)};
    int lo = G_MAXINT, hi = -1; /* the members' nodes, a row + 1 per node between */
    for (int i = 0; i < n; i++) {
        lo = MIN(lo, topology_node(t, members[i]));
        hi = MAX(hi, topology_node(t, members[i]));
    }
    g_autofree int *row = g_new0(int, MAX(hi - lo + 1, 1));
    int *row_of = g_new(int, n);
    for (int i = 0; i < n; i++) {
        int *r = &row[topology_node(t, members[i]) - lo];
        if (*r == 0)
            *r = ++s.nodes;
        row_of[i] = *r - 1;
        s.count[row_of[i]]++;
    }
    for (int r = 0, at = 0; r < s.nodes; r++) {
        s.first[r] = at;
        at += s.count[r];
        s.per_node = MAX(s.per_node, s.count[r]);
        s.uniform = s.uniform && s.count[r] == s.count[0];
    }
    g_autofree int *fill = g_new0(int, s.nodes);
    for (int i = 0; i < n; i++)
        s.by_node[s.first[row_of[i]] + fill[row_of[i]]++] = members[i];
    g_free(row_of);
    return s;
}

static void spread_free(Spread *s)
{
    g_free(s->by_node);
    g_free(s->first);
    g_free(s->count);
}

struct CollRanks {
    const Topology *t;
    const int *members;
    int n;
    Spread s;
};

CollRanks *algo_ranks_new(const Topology *t, const int *members, int n)
{
    CollRanks *r = g_new(CollRanks, 1);
    *r = (CollRanks){.t = t, .members = members, .n = n, .s = spread_new(t, members, n)};
    return r;
}

void algo_ranks_free(CollRanks *r)
{
    if (!r)
        return;
    spread_free(&r->s);
    g_free(r);
}

/* A transfer of `payload` bytes that holds its links, with Simple, as
 * `payload / efficiency` bytes would (its bytes: once the protocol is
 * chosen). */
static void add_at(CollRoute *route, int src, int dst, double payload, double efficiency)
{
    if (route->n_transfers == route->room) { /* a route over a million GPUs: bigmem.h */
        gsize old = (gsize)route->room;
        route->room = MAX(2 * route->room, 64);
        gsize room = (gsize)route->room;
        route->transfers =
            bigmem_grow(route->transfers, sizeof(Transfer) * old, sizeof(Transfer) * room);
        route->payload = bigmem_grow(route->payload, sizeof(double) * old, sizeof(double) * room);
        route->efficiency =
            bigmem_grow(route->efficiency, sizeof(double) * old, sizeof(double) * room);
    }
    route->transfers[route->n_transfers] = (Transfer){.src = src, .dst = dst};
    route->payload[route->n_transfers] = payload;
    route->efficiency[route->n_transfers++] = efficiency;
    route->phase[route->n_phases - 1].count++;
}

/* A transfer of `payload` bytes at the efficiency of the link class it
 * crosses, times `across_efficiency` between nodes. */
static void add_eff(CollRoute *route, const Topology *t, int src, int dst, double payload,
                    double across_efficiency)
{
    gboolean across = topology_node(t, src) != topology_node(t, dst);
    add_at(route, src, dst, payload,
           topology_efficiency(t, across) * (across ? across_efficiency : 1));
}

static void add(CollRoute *route, const Topology *t, int src, int dst, double payload)
{
    add_eff(route, t, src, dst, payload, 1);
}

/* A phase whose latency is that of `intra` messages inside nodes and
 * `inter` across them, one after the other, with each protocol. */
static void open_phase(CollRoute *route, const Topology *t, double intra, double inter)
{
    g_assert(route->n_phases < ALGO_MAX_PHASES);
    CollPhase *ph = &route->phase[route->n_phases++];
    *ph = (CollPhase){.first = route->n_transfers};
    for (int p = 0; p < PROTOCOLS; p++)
        ph->latency_by[p] = intra * topology_alpha(t, FALSE, (CollProtocol)p) +
                            inter * topology_alpha(t, TRUE, (CollProtocol)p);
}

/* Messages each rank sends one after the other in a ring of n. */
static int ring_steps(CollOp op, int n)
{
    return op == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
}

/* Rings over the members of `s`: `channels` of them, each visiting the
 * nodes in order and every node's members alike (as NCCL's rings, whose
 * topology search finds the same pattern on identical nodes), from the
 * member at the channel's start, `stride` apart between channels so that
 * they leave through different NICs, round to the one before it. That
 * last member sends to the next node over its own rail, to the next
 * node's last member, which hands it on to the first over NVLink (NCCL's
 * PXN; the hand-over is left out: NVLink has room for it). `bytes` from
 * every rank to the next, split over the channels. Every node alike, a
 * shift of whole nodes, and a turn of the members of every node when
 * there is a channel from each, maps the rings onto themselves. */
static void rings(CollRoute *route, const Topology *t, const Spread *s, int n, int channels,
                  double bytes)
{
    g_autofree int *ring = g_new(int, n);
    double efficiency[2] = {topology_efficiency(t, FALSE), topology_efficiency(t, TRUE)};
    for (int c = 0; c < channels; c++) {
        int len = 0;
        for (int r = 0; r < s->nodes; r++) {
            int count = s->count[r], start = c * MAX(1, count / channels) % count;
            for (int k = 0; k < count; k++)
                ring[len++] = s->by_node[s->first[r] + (start + k) % count];
        }
        /* inside a node, each member to the next; the last to the next
         * node's last, or inside one node to the first */
        for (int r = 0, i = 0; r < s->nodes; r++)
            for (int end = i + s->count[r]; i < end; i++) {
                gboolean last = i + 1 == end, across = last && s->nodes > 1;
                int to = !last    ? i + 1
                         : across ? (end + s->count[(r + 1) % s->nodes] - 1) % n
                                  : end - s->count[r];
                add_at(route, ring[i], ring[to], bytes / channels, efficiency[across]);
            }
    }
}

/* One ring over `n` GPUs that lie `per_node` to a node, node after node
 * (a node's members, or a rail's): their spread without looking it up. */
static void ring_over(CollRoute *route, const Topology *t, int *gpus, int n, int per_node,
                      double bytes)
{
    int nodes = n / per_node, one[2];
    int *first = nodes == 1 ? one : g_new(int, 2 * nodes), *count = first + nodes;
    for (int r = 0; r < nodes; r++) {
        first[r] = r * per_node;
        count[r] = per_node;
    }
    Spread s = {.nodes = nodes,
                .per_node = per_node,
                .uniform = TRUE,
                .by_node = gpus,
                .first = first,
                .count = count};
    rings(route, t, &s, n, 1, bytes);
    if (first != one)
        g_free(first);
}

/* NCCL's double binary tree over `n` GPUs: two trees, each carrying half
 * of `bytes` up (reduce) and down (broadcast) every edge, the second over
 * the GPUs in reverse so that the first's inner ranks are its leaves; its
 * edges between nodes at the cluster's tree efficiency. */
static void binary_trees(CollRoute *route, const Topology *t, const int *gpus, int n, double bytes)
{
    double across = topology_tree_efficiency(t);
    for (int tree = 0; tree < 2; tree++) {
        for (int i = 1; i < n; i++) {
            int child = tree ? gpus[n - 1 - i] : gpus[i];
            int parent = tree ? gpus[n - 1 - (i - 1) / 2] : gpus[(i - 1) / 2];
            add_eff(route, t, child, parent, bytes / 2, across); /* reduce up */
            add_eff(route, t, parent, child, bytes / 2, across); /* broadcast down */
        }
    }
}

/* ---- the algorithms: whether each applies, its route, its protocols ------- */

static gboolean ring_applies(const CollRanks *r, CollOp op)
{
    (void)r;
    return op == COLL_ALL_REDUCE || op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER;
}

static void ring_route(CollRoute *route, const CollRanks *r, CollOp op, double bytes)
{
    const Spread *s = &r->s;
    int n = r->n, channels = s->nodes > 1 ? MAX(1, MIN(s->per_node, topology_nics(r->t))) : 1;
    int steps = ring_steps(op, n), across = s->nodes > 1 ? ring_steps(op, s->nodes) : 0;
    open_phase(route, r->t, steps - across, across);
    rings(route, r->t, s, n, channels, collective_sent_bytes(op, n, bytes));
}

static const unsigned ring_protocols = ALL_PROTOCOLS;

static gboolean tree_applies(const CollRanks *r, CollOp op)
{
    return op == COLL_ALL_REDUCE && r->n > 2;
}

/* Inside a node, or over nodes holding different numbers of members: one
 * double binary tree over the members, every rank sending and receiving
 * about 2 S. Over k nodes of g members each: NCCL's channels, one per NIC
 * a node's members can use (C = min(g, NICs)), each with S/C: a chain
 * through every node's members from its head, up and down, and the double
 * binary tree over the nodes' heads, the heads of channel c at the same
 * position in every node (the same rail), channels g/C positions apart. */
static void tree_route(CollRoute *route, const CollRanks *r, CollOp op, double bytes)
{
    (void)op;
    const Topology *t = r->t;
    const Spread *s = &r->s;
    if (s->nodes == 1 || !s->uniform) {
        double depth = 2 * ceil(log2(r->n));
        open_phase(route, t, s->nodes > 1 ? 0 : depth, s->nodes > 1 ? depth : 0);
        binary_trees(route, t, r->members, r->n, bytes);
        return;
    }
    int g = s->per_node, k = s->nodes;
    int channels = MAX(1, MIN(g, topology_nics(t))), stride = MAX(1, g / channels);
    open_phase(route, t, 2.0 * (g - 1), 2 * ceil(log2(k)));
    g_autofree int *heads = g_new(int, k);
    double share = bytes / channels;
    for (int c = 0; c < channels; c++) {
        int head = c * stride % g;
        for (int node = 0; node < k; node++) {
            const int *m = s->by_node + s->first[node];
            heads[node] = m[head];
            for (int i = 0; i + 1 < g; i++) {
                int up = m[(head + i) % g], down = m[(head + i + 1) % g];
                add(route, t, down, up, share); /* reduce towards the head */
                add(route, t, up, down, share); /* broadcast from it */
            }
        }
        binary_trees(route, t, heads, k, share);
    }
}

static const unsigned tree_protocols = ALL_PROTOCOLS;

static gboolean hierarchical_applies(const CollRanks *r, CollOp op)
{
    return op == COLL_ALL_REDUCE && r->s.nodes > 1 && r->s.per_node > 1 && r->s.uniform;
}

static void hierarchical_route(CollRoute *route, const CollRanks *ranks, CollOp op, double bytes)
{
    (void)op;
    const Topology *t = ranks->t;
    const Spread *s = &ranks->s;
    int g = s->per_node, k = s->nodes;
    open_phase(route, t, g - 1, 0); /* reduce-scatter inside each node */
    for (int r = 0; r < k; r++)
        ring_over(route, t, s->by_node + s->first[r], g, g,
                  collective_sent_bytes(COLL_REDUCE_SCATTER, g, bytes));
    open_phase(route, t, 0, 2 * (k - 1)); /* all-reduce on each rail */
    g_autofree int *rail = g_new(int, k);
    for (int c = 0; c < g; c++) {
        for (int r = 0; r < k; r++)
            rail[r] = s->by_node[s->first[r] + c];
        ring_over(route, t, rail, k, 1, collective_sent_bytes(COLL_ALL_REDUCE, k, bytes / g));
    }
    open_phase(route, t, g - 1, 0); /* all-gather inside each node */
    for (int r = 0; r < k; r++)
        ring_over(route, t, s->by_node + s->first[r], g, g,
                  collective_sent_bytes(COLL_ALL_GATHER, g, bytes));
}

static const unsigned hierarchical_protocols = ALL_PROTOCOLS;

/* NVLink SHARP (NCCL's NVLS): all-reduce inside one node of a cluster that
 * has it, 2 GPUs or more. */
static gboolean nvls_applies(const CollRanks *r, CollOp op)
{
    double efficiency, latency_s;
    return op == COLL_ALL_REDUCE && r->s.nodes == 1 && r->n >= 2 &&
           topology_nvls(r->t, &efficiency, &latency_s);
}

/* The GPUs push their buffers into the switch, which reduces them, and
 * pull the result back, multicast: S out of and S into every GPU's port,
 * drawn as S from each member to the next, at the cluster's NVLS
 * efficiency, after its NVLS latency. */
static void nvls_route(CollRoute *route, const CollRanks *r, CollOp op, double bytes)
{
    (void)op;
    double efficiency, latency_s;
    topology_nvls(r->t, &efficiency, &latency_s);
    open_phase(route, r->t, 0, 0);
    for (int p = 0; p < PROTOCOLS; p++)
        route->phase[0].latency_by[p] += latency_s;
    for (int i = 0; i < r->n; i++)
        add_at(route, r->members[i], r->members[(i + 1) % r->n], bytes, efficiency);
}

static const unsigned nvls_protocols = 1u << PROTOCOL_SIMPLE; /* as NCCL's */

static gboolean direct_applies(const CollRanks *r, CollOp op)
{
    (void)r;
    return op == COLL_ALL_TO_ALL || op == COLL_SEND_RECV || op == COLL_RING_EXCHANGE;
}

/* Send/recv: one message; ring exchange: S from every member to the next,
 * the last to the first, all at once (nccl-tests' sendrecv); all-to-all:
 * S/n between every ordered pair, NCCL's pairwise send/recv exchange. */
static void direct_route(CollRoute *route, const CollRanks *r, CollOp op, double bytes)
{
    const int *members = r->members;
    int n = r->n;
    gboolean across = r->s.nodes > 1;
    if (op == COLL_SEND_RECV || op == COLL_RING_EXCHANGE) {
        open_phase(route, r->t, !across, across);
        int senders = op == COLL_SEND_RECV ? 1 : n;
        for (int i = 0; i < senders; i++)
            add(route, r->t, members[i], members[(i + 1) % n], bytes);
        return;
    }
    open_phase(route, r->t, across ? 0 : n - 1, across ? n - 1 : 0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                add(route, r->t, members[i], members[j], bytes / n);
}

static const unsigned direct_protocols = ALL_PROTOCOLS;

/* ---- the table, and the choice ------------------------------------------- */

const CollAlgorithmRow algo_table[ALGORITHMS] = {
    [ALGORITHM_AUTO] = {.name = "auto"},
#define ALGORITHM(ID, algo, forcible)                                                              \
    [ALGORITHM_##ID] = {.name = #algo,                                                             \
                        .applies = algo##_applies,                                                 \
                        .route = algo##_route,                                                     \
                        .protocols = algo##_protocols},
#include "base/algorithms.def"
#undef ALGORITHM
};

static gboolean applies(CollAlgorithm a, const CollRanks *r, CollOp op)
{
    return algo_table[a].route && algo_table[a].applies(r, op);
}

/* `route` as algorithm `a`, its protocol unset; the first phase also waits
 * the cluster's base latency. */
static void fill(CollRoute *route, CollAlgorithm a, const CollRanks *r, CollOp op, double bytes)
{
    route->n_transfers = 0;
    route->n_phases = 0;
    route->algorithm = a;
    algo_table[a].route(route, r, op, bytes);
    for (int p = 0; route->n_phases > 0 && p < PROTOCOLS; p++)
        route->phase[0].latency_by[p] += topology_base_latency(r->t);
}

/* Sets the route's protocol: its phases' latencies, its transfers' bytes. */
static void set_protocol(CollRoute *route, CollProtocol p)
{
    route->protocol = p;
    for (int i = 0; i < route->n_phases; i++)
        route->phase[i].latency_s = route->phase[i].latency_by[p];
    for (int i = 0; i < route->n_transfers; i++)
        route->transfers[i].bytes = algo_transfer_bytes(route, i, protocol_share[p]);
}

double algo_choose(CollRoute *route, const CollRanks *r, CollOp op, CollAlgorithm forced,
                   double bytes, AlgoCost cost, void *ctx)
{
    /* a forced algorithm that does not apply falls back to the choice */
    gboolean only_forced = applies(forced, r, op);
    double best = INFINITY;
    CollProtocol best_protocol = PROTOCOL_SIMPLE;
    CollRoute *trial = algo_route_new();
    for (int a = 0; a < ALGORITHMS; a++) {
        if (!applies((CollAlgorithm)a, r, op) || (only_forced && a != (int)forced))
            continue;
        unsigned protocols = 0;
        for (int p = 0; p < PROTOCOLS; p++)
            if (algo_table[a].protocols >> p & 1 && topology_has_protocol(r->t, (CollProtocol)p))
                protocols |= 1u << p;
        fill(trial, (CollAlgorithm)a, r, op, bytes);
        double c[PROTOCOLS];
        cost(trial, protocols, c, ctx);
        int mine = -1; /* its protocol of least cost, the first on ties */
        for (int p = 0; p < PROTOCOLS; p++)
            if (protocols >> p & 1 && (mine < 0 || c[p] < c[mine]))
                mine = p;
        if (mine >= 0 && c[mine] < best) {
            best = c[mine];
            best_protocol = (CollProtocol)mine;
            CollRoute kept = *route;
            *route = *trial;
            *trial = kept;
        }
    }
    algo_route_free(trial);
    g_assert(best < INFINITY); /* ring or direct applies to every op, with Simple */
    set_protocol(route, best_protocol);
    return best;
}

void algo_copy_route(CollRoute *route, int src, int dst, double bytes)
{
    route->algorithm = ALGORITHM_DIRECT;
    route->n_phases = 1;
    route->phase[0] = (CollPhase){.first = route->n_transfers};
    add_at(route, src, dst, bytes, 1);
    set_protocol(route, PROTOCOL_SIMPLE);
}
