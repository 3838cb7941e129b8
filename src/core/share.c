/* share.c: max-min fair rates by progressive filling (water-filling).
 *
 * Formulation: links l with capacity c_l, flows f with paths P_f, and a
 * weight a_fl >= 0 of flow f on each link of its path (1 unless given):
 * the flows' rates x_f must keep sum_f a_fl x_f <= c_l on every link, as in
 * SimGrid's LMM systems. The max-min fair rates are found by raising every
 * unfixed flow's rate together: the link whose remaining capacity divided
 * by the summed weights of its unfixed flows is smallest saturates first;
 * its unfixed flows are fixed at that share and their weighted rates taken
 * from the other links on their paths; repeat until every flow is fixed (a
 * heap of links by share keeps this near-linear). With weights that count
 * how many flows of a symmetric orbit cross one link of a link class, the
 * fair rates of one flow per orbit over one link per class are those of the
 * whole network (net/symmetry.h).
 * Only the connected component of the links touched
 * since the last update is solved (breadth-first over links and flows):
 * rates elsewhere cannot change, nor on a link an ended flow left empty,
 * which is not touched. Ties go to the link met first, so a replay is
 * deterministic.
 *
 * Invariants: a flow's `remaining` is its bytes still to move as of
 * `since`; on every link the active flows' weighted rates sum to at most
 * its capacity; `carried` counts each flow's weighted bytes once they are
 * settled. */
#include "core/share.h"

#include <math.h>
#include <string.h>

/* A flow. The members an update reads of every flow it meets come first,
 * so that meeting a flow costs one or two cache lines; what the solver
 * reads each time it meets the flow again, from another of its links, is
 * apart (FlowSolve), so that those meetings stay in the caches. */
typedef struct {
    int32_t path[SHARE_MAX_PATH];
    int n;
    uint32_t version;
    double remaining; /* bytes still to move, as of `since` */
    double weight[SHARE_MAX_PATH];
    double since;
    int tag;
    int32_t token;
    int32_t slot[SHARE_MAX_PATH]; /* its index in each link's flow list */
} Flow;

/* A flow's rate, and the solver's marks on it (share.c's flows[id] and
 * solve[id] are one flow). */
typedef struct {
    double rate;     /* < 0 until the first update */
    double old_rate; /* the rate before an update, to tell a change */
    unsigned stamp;  /* the last component search that met it */
    uint32_t fixed;  /* solver scratch */
} FlowSolve;

/* The flows crossing a link, and their weights on it (same order). */
typedef struct {
    int32_t *id;
    double *weight;
    int n, room;
} LinkFlows;

/* A link queued at a fair share; entries order by (share, seq). */
typedef struct {
    double share;
    uint64_t seq;
    int32_t link;
} Queued;

/* fill's min-heap of queued links: for every i > 0, v[(i - 1) / 2] orders
 * no later than v[i]. */
typedef struct {
    Queued *v;
    gsize n, room;
} LinkHeap;

/* A list of ids that grows by doubling. */
typedef struct {
    int32_t *v;
    gsize n, room;
} Ids;

struct Share {
    int n_links, tags;
    double *capacity;
    LinkFlows *on_link; /* per link */
    double *carried;    /* per link: bytes */
    double *carried_by; /* per link x tag */
    Flow *flows;        /* the pool */
    FlowSolve *solve;   /* per flow of the pool */
    gsize n_flows, flows_room;
    Ids free_ids; /* pool slots to reuse */
    Ids touched;  /* links touched since the last update */
    Ids instant;  /* flows with an empty path, to report */
    /* scratch of the component search and the solver */
    unsigned stamp;
    unsigned *link_stamp;
    double *left;    /* capacity not yet given out */
    double *unfixed; /* summed weights of the unfixed flows crossing the link */
    double *queued;  /* the fair share the link was last queued at */
    uint64_t *queued_seq; /* ... and that queuing's place in the order */
    uint64_t seq;         /* queuings so far */
    Ids comp_links, comp_flows;
    LinkHeap heap; /* links by fair share, for fill */
};

static void grow_ids(Ids *ids)
{
    ids->room = MAX(2 * ids->room, 16);
    ids->v = g_renew(int32_t, ids->v, ids->room);
}

static inline void push_id(Ids *ids, int32_t id)
{
    if (G_UNLIKELY(ids->n == ids->room))
        grow_ids(ids);
    ids->v[ids->n++] = id;
}

Share *share_new(const double *capacity_Bps, int n_links, int tags)
{
    Share *s = g_new0(Share, 1);
    s->n_links = n_links;
    s->tags = tags;
    s->capacity = g_new(double, MAX(n_links, 1));
    memcpy(s->capacity, capacity_Bps, sizeof(double) * (gsize)n_links);
    s->on_link = g_new0(LinkFlows, MAX(n_links, 1));
    s->carried = g_new0(double, MAX(n_links, 1));
    s->carried_by = g_new0(double, (gsize)MAX(n_links, 1) * tags);
    s->link_stamp = g_new0(unsigned, MAX(n_links, 1));
    s->left = g_new(double, MAX(n_links, 1));
    s->unfixed = g_new(double, MAX(n_links, 1));
    s->queued = g_new(double, MAX(n_links, 1));
    s->queued_seq = g_new(uint64_t, MAX(n_links, 1));
    return s;
}

void share_free(Share *s)
{
    if (!s)
        return;
    for (int l = 0; l < s->n_links; l++) {
        g_free(s->on_link[l].id);
        g_free(s->on_link[l].weight);
    }
    g_free(s->on_link);
    g_free(s->capacity);
    g_free(s->carried);
    g_free(s->carried_by);
    g_free(s->flows);
    g_free(s->solve);
    g_free(s->free_ids.v);
    g_free(s->touched.v);
    g_free(s->instant.v);
    g_free(s->link_stamp);
    g_free(s->left);
    g_free(s->unfixed);
    g_free(s->queued);
    g_free(s->queued_seq);
    g_free(s->comp_links.v);
    g_free(s->comp_flows.v);
    g_free(s->heap.v);
    g_free(s);
}

int share_start(Share *s, double now, const int *path, int n, double bytes, int tag, int32_t token)
{
    return share_start_weighted(s, now, path, NULL, n, bytes, tag, token);
}

/* Appends flow `id` of weight `weight` to link `l`'s list; returns its slot. */
static int32_t link_add(LinkFlows *lf, int32_t id, double weight)
{
    if (lf->n == lf->room) {
        lf->room = MAX(2 * lf->room, 8);
        lf->id = g_renew(int32_t, lf->id, lf->room);
        lf->weight = g_renew(double, lf->weight, lf->room);
    }
    lf->id[lf->n] = id;
    lf->weight[lf->n] = weight;
    return lf->n++;
}

int share_start_weighted(Share *s, double now, const int *path, const double *weight, int n,
                         double bytes, int tag, int32_t token)
{
    g_assert(n >= 0 && n <= SHARE_MAX_PATH && bytes >= 0 && tag >= 0 && tag < s->tags);
    int32_t id;
    if (s->free_ids.n > 0) {
        id = s->free_ids.v[--s->free_ids.n];
        if (s->free_ids.n > 0) /* the next flow to start, most often at once */
            __builtin_prefetch(&s->flows[s->free_ids.v[s->free_ids.n - 1]], 1);
    } else {
        if (s->n_flows == s->flows_room) {
            s->flows_room = MAX(2 * s->flows_room, 16);
            s->flows = g_renew(Flow, s->flows, s->flows_room);
            s->solve = g_renew(FlowSolve, s->solve, s->flows_room);
        }
        id = (int32_t)s->n_flows++;
        s->flows[id].version = 0;
    }
    Flow *f = &s->flows[id];
    uint32_t version = f->version;
    *f = (Flow){
        .n = n, .remaining = bytes, .since = now, .version = version, .token = token, .tag = tag};
    s->solve[id] = (FlowSolve){.rate = -1};
    for (int i = 0; i < n; i++) {
        g_assert(path[i] >= 0 && path[i] < s->n_links);
        f->path[i] = path[i];
        f->weight[i] = weight ? weight[i] : 1;
        g_assert(f->weight[i] > 0);
        f->slot[i] = link_add(&s->on_link[path[i]], id, f->weight[i]);
        push_id(&s->touched, f->path[i]);
    }
    if (n == 0)
        push_id(&s->instant, id);
    return id;
}

double share_alone_rate(const Share *s, const int32_t *path, const double *weight, int n)
{
    double rate = s->capacity[path[0]] / weight[0];
    for (int k = 1; k < n; k++)
        rate = MIN(rate, s->capacity[path[k]] / weight[k]);
    return rate;
}

void share_carry(Share *s, const int32_t *path, const double *weight, int n, int tag, double bytes)
{
    for (int i = 0; i < n; i++) {
        s->carried[path[i]] += weight[i] * bytes;
        s->carried_by[(gsize)path[i] * s->tags + tag] += weight[i] * bytes;
    }
}

int share_links(const Share *s)
{
    return s->n_links;
}

/* Moves flow id's bytes up to `now` onto its links' counters. */
static void settle(Share *s, int32_t id, double now, gboolean ending)
{
    Flow *f = &s->flows[id];
    double rate = s->solve[id].rate;
    double moved = ending ? f->remaining : MIN(f->remaining, rate * (now - f->since));
    if (rate < 0 || !isfinite(moved))
        moved = ending ? f->remaining : 0;
    if (moved > 0)
        share_carry(s, f->path, f->weight, f->n, f->tag, moved);
    f->remaining = MAX(0.0, f->remaining - moved);
    f->since = now;
}

void share_end(Share *s, double now, int id)
{
    Flow *f = &s->flows[id];
    settle(s, id, now, TRUE);
    for (int i = 0; i < f->n; i++) {
        LinkFlows *lf = &s->on_link[f->path[i]];
        int32_t last = lf->id[--lf->n]; /* swap-remove */
        lf->id[f->slot[i]] = last;
        lf->weight[f->slot[i]] = lf->weight[lf->n];
        Flow *moved = &s->flows[last];
        for (int j = 0; j < moved->n; j++)
            if (moved->path[j] == f->path[i] && last != id)
                moved->slot[j] = f->slot[i];
        if (lf->n > 0) /* the rates of the flows left on it may grow */
            push_id(&s->touched, f->path[i]);
    }
    f->version++;
    f->n = 0;
    push_id(&s->free_ids, id);
}

/* Whether flow `f` is alone on every link of its path. */
static gboolean alone(const Share *s, const Flow *f)
{
    for (int k = 0; k < f->n; k++)
        if (s->on_link[f->path[k]].n != 1)
            return FALSE;
    return TRUE;
}

/* Adds link `l` to the component unless the search met it already. */
static void meet_link(Share *s, int32_t l)
{
    if (s->link_stamp[l] != s->stamp) {
        s->link_stamp[l] = s->stamp;
        push_id(&s->comp_links, l);
    }
}

/* Flow `id`, met by the component search at `now`: its bytes so far
 * settled at its old rate, kept to tell a change; and, alone on its links,
 * its new rate, its slowest link's capacity, which is what the filling
 * would give it (fill leaves it be). The flow is read once, here. */
static void meet_flow(Share *s, int32_t id, double now)
{
    const Flow *f = &s->flows[id];
    FlowSolve *x = &s->solve[id];
    push_id(&s->comp_flows, id);
    settle(s, id, now, FALSE);
    x->old_rate = x->rate;
    x->fixed = alone(s, f);
    if (x->fixed && f->n > 0)
        x->rate = share_alone_rate(s, f->path, f->weight, f->n);
    for (int k = 0; k < f->n; k++)
        meet_link(s, f->path[k]);
}

/* The links and flows connected to the touched links (meet_flow). */
static void find_component(Share *s, double now)
{
    s->stamp++;
    s->comp_links.n = 0;
    s->comp_flows.n = 0;
    for (gsize i = 0; i < s->touched.n; i++)
        meet_link(s, s->touched.v[i]);
    for (gsize i = 0; i < s->comp_links.n; i++) { /* the list grows as we go */
        const LinkFlows *lf = &s->on_link[s->comp_links.v[i]];
        for (int j = 0; j < lf->n; j++) {
            if (j + 4 < lf->n)
                __builtin_prefetch(&s->flows[lf->id[j + 4]]);
            FlowSolve *mark = &s->solve[lf->id[j]];
            if (mark->stamp == s->stamp)
                continue;
            mark->stamp = s->stamp;
            meet_flow(s, lf->id[j], now);
        }
    }
    s->touched.n = 0;
}

static gboolean queued_before(const Queued *a, const Queued *b)
{
    return a->share < b->share || (a->share == b->share && a->seq < b->seq);
}

/* Moves entry `e` down from slot `i` to where it belongs. */
static void heap_sift_down(LinkHeap *h, gsize i, Queued e)
{
    for (gsize child; (child = 2 * i + 1) < h->n; i = child) {
        if (child + 1 < h->n && queued_before(&h->v[child + 1], &h->v[child]))
            child++;
        if (!queued_before(&h->v[child], &e))
            break;
        h->v[i] = h->v[child];
    }
    h->v[i] = e;
}

static void heap_push(LinkHeap *h, Queued e)
{
    if (h->n == h->room) {
        h->room = MAX(2 * h->room, 64);
        h->v = g_renew(Queued, h->v, h->room);
    }
    gsize i = h->n++;
    for (; i > 0 && queued_before(&e, &h->v[(i - 1) / 2]); i = (i - 1) / 2)
        h->v[i] = h->v[(i - 1) / 2];
    h->v[i] = e;
}

/* Replaces the first entry by `e` (or removes it when `e` is NULL). */
static void heap_replace_top(LinkHeap *h, const Queued *e)
{
    if (!e)
        e = &h->v[--h->n];
    if (h->n > 0)
        heap_sift_down(h, 0, *e);
}

/* Queues link `l` at its fair share, unless it was last queued at that
 * very share: that queuing, earlier, comes first and is the one used. In
 * the lazy order (fill) the queuing is only noted, and FALSE says that the
 * share fell, which the lazy order cannot follow. */
static gboolean queue_link(Share *s, int32_t l, gboolean lazy)
{
    double share = s->left[l] / s->unfixed[l];
    if (share == s->queued[l])
        return TRUE;
    if (lazy && share < s->queued[l])
        return FALSE;
    s->queued[l] = share;
    s->queued_seq[l] = s->seq++;
    if (!lazy)
        heap_push(&s->heap, (Queued){.share = share, .seq = s->queued_seq[l], .link = l});
    return TRUE;
}

/* Progressive filling over the component; sets the rate of each flow not
 * fixed yet (meet_flow fixed those alone on their links). The links wait
 * in a min-heap by their fair share (capacity left over unfixed flows),
 * ties to the earlier queued; fixing flows only raises the shares of the
 * other links they cross, so a link is queued again at its new share and
 * its earlier entries, stale, are skipped when they come first.
 *
 * `lazy` heaps each link once: its new shares are only noted, and when
 * its entry comes first but is stale, the entry is replaced by the latest
 * share, in place. While every link's share only grows, the entry a link
 * has in the heap orders no later than its latest queuing, so the two
 * orders fix the same bottlenecks in the same order, and the same rates to
 * the last bit; and an earlier share of a link, never equal to its current
 * one, is stale in both. Rounding can make a share fall by an ulp (or to 0,
 * when the capacity left is clamped): then the lazy fill gives up (FALSE)
 * and the caller fills again with every queuing in the heap. */
static gboolean fill(Share *s, gboolean lazy)
{
    s->heap.n = 0;
    for (gsize i = 0; i < s->comp_links.n; i++) {
        int32_t l = s->comp_links.v[i];
        const LinkFlows *lf = &s->on_link[l];
        if (lf->n == 1 && s->solve[lf->id[0]].fixed)
            continue; /* a lone flow's */
        s->left[l] = s->capacity[l];
        s->unfixed[l] = 0;
        s->queued[l] = NAN; /* not queued yet */
        for (int j = 0; j < lf->n; j++)
            s->unfixed[l] += lf->weight[j];
        if (s->unfixed[l] > 0)
            queue_link(s, l, FALSE);
    }
    while (s->heap.n > 0) {
        Queued top = s->heap.v[0];
        int32_t bottleneck = top.link;
        if (s->unfixed[bottleneck] <= 0) {
            heap_replace_top(&s->heap, NULL);
            continue;
        }
        if (lazy && top.seq != s->queued_seq[bottleneck]) {
            heap_replace_top(&s->heap, &(Queued){.share = s->queued[bottleneck],
                                                 .seq = s->queued_seq[bottleneck],
                                                 .link = bottleneck});
            continue;
        }
        heap_replace_top(&s->heap, NULL);
        if (top.share != s->left[bottleneck] / s->unfixed[bottleneck])
            continue; /* stale: the link's share has grown since */
        double share = top.share;
        const LinkFlows *lf = &s->on_link[bottleneck];
        for (int j = 0; j < lf->n; j++) {
            FlowSolve *x = &s->solve[lf->id[j]];
            if (x->fixed)
                continue;
            x->fixed = TRUE;
            x->rate = share;
            const Flow *f = &s->flows[lf->id[j]];
            for (int k = 0; k < f->n; k++) {
                int32_t l = f->path[k];
                s->left[l] = MAX(0.0, s->left[l] - f->weight[k] * share);
                s->unfixed[l] -= f->weight[k];
                if (s->unfixed[l] > 0 && l != bottleneck && !queue_link(s, l, lazy))
                    return FALSE;
            }
        }
    }
    return TRUE;
}

void share_update(Share *s, double now,
                  void (*changed)(void *ctx, int id, double end_s, uint32_t version), void *ctx)
{
    for (gsize i = 0; i < s->instant.n; i++) {
        s->solve[s->instant.v[i]].rate = INFINITY;
        changed(ctx, s->instant.v[i], now, s->flows[s->instant.v[i]].version);
    }
    s->instant.n = 0;
    if (s->touched.n == 0)
        return;
    find_component(s, now);
    if (!fill(s, TRUE)) {
        for (gsize i = 0; i < s->comp_flows.n; i++) /* unfix what the lazy fill fixed */
            s->solve[s->comp_flows.v[i]].fixed = alone(s, &s->flows[s->comp_flows.v[i]]);
        fill(s, FALSE);
    }
    for (gsize i = 0; i < s->comp_flows.n; i++) {
        if (i + 4 < s->comp_flows.n)
            __builtin_prefetch(&s->flows[s->comp_flows.v[i + 4]], 1);
        int32_t id = s->comp_flows.v[i];
        const FlowSolve *x = &s->solve[id];
        if (x->rate == x->old_rate)
            continue; /* the same rate: the same end */
        Flow *f = &s->flows[id];
        f->version++;
        changed(ctx, id, now + f->remaining / x->rate, f->version);
    }
}

uint32_t share_version(const Share *s, int id)
{
    return s->flows[id].version;
}

int32_t share_token(const Share *s, int id)
{
    return s->flows[id].token;
}

double share_rate(const Share *s, int id)
{
    return s->solve[id].rate;
}

double share_link_bytes(const Share *s, int l)
{
    return s->carried[l];
}

double share_link_tag_bytes(const Share *s, int l, int tag)
{
    return s->carried_by[(gsize)l * s->tags + tag];
}

void share_add_link_bytes(Share *s, int l, int tag, double bytes)
{
    s->carried[l] += bytes;
    s->carried_by[(gsize)l * s->tags + tag] += bytes;
}
