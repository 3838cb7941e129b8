/* algorithm.c: the table of collective algorithms, each a row of whether
 * it applies and how it builds its phases (SimGrid-style: a new algorithm
 * is a row and its plan function), and the choice among them.
 *
 * Members are grouped by node in the order they are given; a group whose
 * nodes hold different numbers of members runs rings, not the
 * hierarchical algorithm. */
#include "net/algorithm.h"

#include <math.h>

CollPlan *algo_plan_new(void)
{
    CollPlan *plan = g_new0(CollPlan, 1);
    plan->transfers = g_array_new(FALSE, FALSE, sizeof(Transfer));
    return plan;
}

void algo_plan_free(CollPlan *plan)
{
    if (!plan)
        return;
    g_array_free(plan->transfers, TRUE);
    g_free(plan);
}

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
    Spread s = {0, 0, TRUE, g_new(int, n), g_new(int, n), g_new0(int, n)};
    GHashTable *row = g_hash_table_new(g_direct_hash, g_direct_equal);
    int *row_of = g_new(int, n);
    for (int i = 0; i < n; i++) {
        gpointer node = GINT_TO_POINTER(topology_node(t, members[i]) + 1), r;
        if (!g_hash_table_lookup_extended(row, node, NULL, &r)) {
            r = GINT_TO_POINTER(s.nodes++);
            g_hash_table_insert(row, node, r);
        }
        row_of[i] = GPOINTER_TO_INT(r);
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
    g_hash_table_destroy(row);
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
    *r = (CollRanks){t, members, n, spread_new(t, members, n)};
    return r;
}

void algo_ranks_free(CollRanks *r)
{
    if (!r)
        return;
    spread_free(&r->s);
    g_free(r);
}

static void add(CollPlan *plan, int src, int dst, double bytes)
{
    Transfer tr = {src, dst, bytes};
    g_array_append_val(plan->transfers, tr);
    plan->phase[plan->n_phases - 1].count++;
}

static void open_phase(CollPlan *plan, double latency_s)
{
    g_assert(plan->n_phases < ALGO_MAX_PHASES);
    plan->phase[plan->n_phases++] = (CollPhase){latency_s, (int)plan->transfers->len, 0};
}

/* Messages each rank sends one after the other in a ring of n. */
static int ring_steps(CollOp op, int n)
{
    return op == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
}

/* Rings over the members of `s`: `channels` of them, each visiting the
 * nodes in order and a node's members rotated by the channel's number, so
 * that each channel leaves every node through a different member; `bytes`
 * from every rank to the next, split over the channels. */
static void rings(CollPlan *plan, const Spread *s, int n, int channels, double bytes)
{
    g_autofree int *ring = g_new(int, n);
    for (int c = 0; c < channels; c++) {
        int len = 0;
        for (int r = 0; r < s->nodes; r++) {
            /* node r starts where node r - 1 ended, one member back, so the
             * hop between them stays on a rail; channels start `stride`
             * apart, so that with fewer NICs than GPUs they leave through
             * different NICs */
            int count = s->count[r], stride = MAX(1, count / channels);
            int start = ((c * stride - r) % count + count) % count;
            for (int k = 0; k < count; k++)
                ring[len++] = s->by_node[s->first[r] + (start + k) % count];
        }
        for (int i = 0; i < n; i++)
            add(plan, ring[i], ring[(i + 1) % n], bytes / channels);
    }
}

/* One ring over `n` given GPUs (a node's members, or a rail's). */
static void ring_over(CollPlan *plan, const Topology *t, const int *gpus, int n, double bytes)
{
    Spread s = spread_new(t, gpus, n);
    rings(plan, &s, n, 1, bytes);
    spread_free(&s);
}

/* ---- the algorithms: whether each applies, and its plan ------------------ */

static gboolean ring_applies(const CollRanks *r, CollOp op)
{
    (void)r;
    return op == COLL_ALL_REDUCE || op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER;
}

static void ring_plan(CollPlan *plan, const CollRanks *r, CollOp op, double bytes)
{
    const Spread *s = &r->s;
    int n = r->n, channels = s->nodes > 1 ? MAX(1, MIN(s->per_node, topology_nics(r->t))) : 1;
    open_phase(plan, ring_steps(op, n) * topology_alpha(r->t, s->nodes > 1));
    rings(plan, s, n, channels, collective_sent_bytes(op, n, bytes));
}

static gboolean tree_applies(const CollRanks *r, CollOp op)
{
    return op == COLL_ALL_REDUCE && r->n > 2;
}

/* NCCL's double binary tree: two trees, each carrying half the data, the
 * second over the members in reverse so that the first's inner ranks are
 * its leaves; every rank then sends and receives about 2 S. */
static void tree_plan(CollPlan *plan, const CollRanks *r, CollOp op, double bytes)
{
    (void)op;
    const int *members = r->members;
    int n = r->n;
    open_phase(plan, 2 * ceil(log2(n)) * topology_alpha(r->t, r->s.nodes > 1));
    for (int tree = 0; tree < 2; tree++) {
        for (int i = 1; i < n; i++) {
            int child = tree ? members[n - 1 - i] : members[i];
            int parent = tree ? members[n - 1 - (i - 1) / 2] : members[(i - 1) / 2];
            add(plan, child, parent, bytes / 2); /* reduce up */
            add(plan, parent, child, bytes / 2); /* broadcast down */
        }
    }
}

static gboolean hierarchical_applies(const CollRanks *r, CollOp op)
{
    return op == COLL_ALL_REDUCE && r->s.nodes > 1 && r->s.per_node > 1 && r->s.uniform;
}

static void hierarchical_plan(CollPlan *plan, const CollRanks *ranks, CollOp op, double bytes)
{
    (void)op;
    const Topology *t = ranks->t;
    const Spread *s = &ranks->s;
    int g = s->per_node, k = s->nodes;
    double intra = (g - 1) * topology_alpha(t, FALSE);
    open_phase(plan, intra); /* reduce-scatter inside each node */
    for (int r = 0; r < k; r++)
        ring_over(plan, t, s->by_node + s->first[r], g,
                  collective_sent_bytes(COLL_REDUCE_SCATTER, g, bytes));
    open_phase(plan, 2 * (k - 1) * topology_alpha(t, TRUE)); /* all-reduce on each rail */
    g_autofree int *rail = g_new(int, k);
    for (int c = 0; c < g; c++) {
        for (int r = 0; r < k; r++)
            rail[r] = s->by_node[s->first[r] + c];
        ring_over(plan, t, rail, k, collective_sent_bytes(COLL_ALL_REDUCE, k, bytes / g));
    }
    open_phase(plan, intra); /* all-gather inside each node */
    for (int r = 0; r < k; r++)
        ring_over(plan, t, s->by_node + s->first[r], g,
                  collective_sent_bytes(COLL_ALL_GATHER, g, bytes));
}

static gboolean direct_applies(const CollRanks *r, CollOp op)
{
    (void)r;
    return op == COLL_ALL_TO_ALL || op == COLL_SEND_RECV;
}

/* Send/recv: one message; all-to-all: S/n between every ordered pair. */
static void direct_plan(CollPlan *plan, const CollRanks *r, CollOp op, double bytes)
{
    const int *members = r->members;
    int n = r->n;
    gboolean across = r->s.nodes > 1;
    if (op == COLL_SEND_RECV) {
        open_phase(plan, topology_alpha(r->t, across));
        add(plan, members[0], members[1], bytes);
        return;
    }
    open_phase(plan, (n - 1) * topology_alpha(r->t, across));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                add(plan, members[i], members[j], bytes / n);
}

/* ---- the table, and the choice ------------------------------------------- */

const CollAlgorithmRow algo_table[ALGORITHMS] = {
    [ALGORITHM_AUTO] = {"auto", NULL, NULL},
#define ALGORITHM(ID, name, forcible) [ALGORITHM_##ID] = {#name, name##_applies, name##_plan},
#include "base/algorithms.def"
#undef ALGORITHM
};

static gboolean applies(CollAlgorithm a, const CollRanks *r, CollOp op)
{
    return algo_table[a].plan && algo_table[a].applies(r, op);
}

static void fill(CollPlan *plan, CollAlgorithm a, const CollRanks *r, CollOp op, double bytes)
{
    g_array_set_size(plan->transfers, 0);
    plan->n_phases = 0;
    plan->algorithm = a;
    algo_table[a].plan(plan, r, op, bytes);
}

double algo_choose(CollPlan *plan, const CollRanks *r, CollOp op, CollAlgorithm forced,
                   double bytes, double (*cost)(const CollPlan *plan, void *ctx), void *ctx)
{
    /* a forced algorithm that does not apply falls back to the choice */
    gboolean only_forced = applies(forced, r, op);
    double best = INFINITY;
    CollPlan *trial = algo_plan_new();
    for (int a = 0; a < ALGORITHMS; a++) {
        if (!applies((CollAlgorithm)a, r, op) || (only_forced && a != (int)forced))
            continue;
        fill(trial, (CollAlgorithm)a, r, op, bytes);
        double c = cost(trial, ctx);
        if (c < best) {
            best = c;
            CollPlan kept = *plan;
            *plan = *trial;
            *trial = kept;
        }
    }
    algo_plan_free(trial);
    g_assert(best < INFINITY); /* ring or direct applies to every op */
    return best;
}
