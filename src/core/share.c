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
 * rates elsewhere cannot change. Ties go to the link met first, so a
 * replay is deterministic.
 *
 * Invariants: a flow's `remaining` is its bytes still to move as of
 * `since`; on every link the active flows' weighted rates sum to at most
 * its capacity; `carried` counts each flow's weighted bytes once they are
 * settled. */
#include "core/share.h"

#include <math.h>
#include <string.h>

#include "core/evq.h"

typedef struct {
    int32_t path[SHARE_MAX_PATH];
    int32_t slot[SHARE_MAX_PATH]; /* its index in each link's flow list */
    double weight[SHARE_MAX_PATH];
    int n;
    double remaining; /* bytes still to move, as of `since` */
    double since;
    double rate;     /* < 0 until the first update */
    double old_rate; /* the rate before an update, to tell a change */
    uint32_t version;
    int32_t token;
    int tag;
    unsigned stamp; /* the last component search that met it */
    gboolean fixed; /* solver scratch */
} Flow;

struct Share {
    int n_links, tags;
    double *capacity;
    GArray **on_link;    /* per link: int32 ids of the flows crossing it */
    GArray **weights_on; /* per link: double, their weights on it (same order) */
    double *carried;     /* per link: bytes */
    double *carried_by;  /* per link x tag */
    GArray *flows;       /* Flow, the pool */
    GArray *free_ids;    /* int32: pool slots to reuse */
    GArray *touched;     /* int32: links touched since the last update */
    GArray *instant;     /* int32: flows with an empty path, to report */
    /* scratch of the component search and the solver */
    unsigned stamp;
    unsigned *link_stamp;
    double *left;    /* capacity not yet given out */
    double *unfixed; /* summed weights of the unfixed flows crossing the link */
    GArray *comp_links, *comp_flows;
    EventQueue *heap; /* links by fair share, for fill */
};

#define FLOW(s, id) (&g_array_index((s)->flows, Flow, (id)))

Share *share_new(const double *capacity_Bps, int n_links, int tags)
{
    Share *s = g_new0(Share, 1);
    s->n_links = n_links;
    s->tags = tags;
    s->capacity = g_new(double, MAX(n_links, 1));
    memcpy(s->capacity, capacity_Bps, sizeof(double) * (gsize)n_links);
    s->on_link = g_new(GArray *, MAX(n_links, 1));
    s->weights_on = g_new(GArray *, MAX(n_links, 1));
    for (int l = 0; l < n_links; l++) {
        s->on_link[l] = g_array_new(FALSE, FALSE, sizeof(int32_t));
        s->weights_on[l] = g_array_new(FALSE, FALSE, sizeof(double));
    }
    s->carried = g_new0(double, MAX(n_links, 1));
    s->carried_by = g_new0(double, (gsize)MAX(n_links, 1) * tags);
    s->flows = g_array_new(FALSE, FALSE, sizeof(Flow));
    s->free_ids = g_array_new(FALSE, FALSE, sizeof(int32_t));
    s->touched = g_array_new(FALSE, FALSE, sizeof(int32_t));
    s->instant = g_array_new(FALSE, FALSE, sizeof(int32_t));
    s->link_stamp = g_new0(unsigned, MAX(n_links, 1));
    s->left = g_new(double, MAX(n_links, 1));
    s->unfixed = g_new(double, MAX(n_links, 1));
    s->comp_links = g_array_new(FALSE, FALSE, sizeof(int32_t));
    s->comp_flows = g_array_new(FALSE, FALSE, sizeof(int32_t));
    s->heap = evq_new(64);
    return s;
}

void share_free(Share *s)
{
    if (!s)
        return;
    for (int l = 0; l < s->n_links; l++) {
        g_array_free(s->on_link[l], TRUE);
        g_array_free(s->weights_on[l], TRUE);
    }
    g_free(s->on_link);
    g_free(s->weights_on);
    g_free(s->capacity);
    g_free(s->carried);
    g_free(s->carried_by);
    g_array_free(s->flows, TRUE);
    g_array_free(s->free_ids, TRUE);
    g_array_free(s->touched, TRUE);
    g_array_free(s->instant, TRUE);
    g_free(s->link_stamp);
    g_free(s->left);
    g_free(s->unfixed);
    g_array_free(s->comp_links, TRUE);
    g_array_free(s->comp_flows, TRUE);
    evq_free(s->heap);
    g_free(s);
}

int share_start(Share *s, double now, const int *path, int n, double bytes, int tag, int32_t token)
{
    return share_start_weighted(s, now, path, NULL, n, bytes, tag, token);
}

int share_start_weighted(Share *s, double now, const int *path, const double *weight, int n,
                         double bytes, int tag, int32_t token)
{
    g_assert(n >= 0 && n <= SHARE_MAX_PATH && bytes >= 0 && tag >= 0 && tag < s->tags);
    int32_t id;
    if (s->free_ids->len > 0) {
        id = g_array_index(s->free_ids, int32_t, s->free_ids->len - 1);
        g_array_set_size(s->free_ids, s->free_ids->len - 1);
    } else {
        id = (int32_t)s->flows->len;
        g_array_set_size(s->flows, s->flows->len + 1);
        FLOW(s, id)->version = 0;
    }
    Flow *f = FLOW(s, id);
    uint32_t version = f->version;
    *f = (Flow){.n = n,
                .remaining = bytes,
                .since = now,
                .rate = -1,
                .version = version,
                .token = token,
                .tag = tag};
    for (int i = 0; i < n; i++) {
        g_assert(path[i] >= 0 && path[i] < s->n_links);
        f->path[i] = path[i];
        f->weight[i] = weight ? weight[i] : 1;
        g_assert(f->weight[i] > 0);
        f->slot[i] = (int32_t)s->on_link[path[i]]->len;
        g_array_append_val(s->on_link[path[i]], id);
        g_array_append_val(s->weights_on[path[i]], f->weight[i]);
        g_array_append_val(s->touched, f->path[i]);
    }
    if (n == 0)
        g_array_append_val(s->instant, id);
    return id;
}

/* Moves the flow's bytes up to `now` onto its links' counters. */
static void settle(Share *s, Flow *f, double now, gboolean ending)
{
    double moved = ending ? f->remaining : MIN(f->remaining, f->rate * (now - f->since));
    if (f->rate < 0 || !isfinite(moved))
        moved = ending ? f->remaining : 0;
    for (int i = 0; i < f->n; i++) {
        s->carried[f->path[i]] += f->weight[i] * moved;
        s->carried_by[(gsize)f->path[i] * s->tags + f->tag] += f->weight[i] * moved;
    }
    f->remaining = MAX(0.0, f->remaining - moved);
    f->since = now;
}

void share_end(Share *s, double now, int id)
{
    Flow *f = FLOW(s, id);
    settle(s, f, now, TRUE);
    for (int i = 0; i < f->n; i++) {
        GArray *list = s->on_link[f->path[i]], *weights = s->weights_on[f->path[i]];
        int32_t last = g_array_index(list, int32_t, list->len - 1);
        g_array_index(list, int32_t, f->slot[i]) = last; /* swap-remove */
        g_array_index(weights, double, f->slot[i]) =
            g_array_index(weights, double, weights->len - 1);
        g_array_set_size(weights, weights->len - 1);
        Flow *moved = FLOW(s, last);
        for (int j = 0; j < moved->n; j++)
            if (moved->path[j] == f->path[i] && last != id)
                moved->slot[j] = f->slot[i];
        g_array_set_size(list, list->len - 1);
        g_array_append_val(s->touched, f->path[i]);
    }
    f->version++;
    f->n = 0;
    int32_t free_id = id;
    g_array_append_val(s->free_ids, free_id);
}

/* The links and flows connected to the touched links. */
static void find_component(Share *s)
{
    s->stamp++;
    g_array_set_size(s->comp_links, 0);
    g_array_set_size(s->comp_flows, 0);
    for (guint i = 0; i < s->touched->len; i++) {
        int32_t l = g_array_index(s->touched, int32_t, i);
        if (s->link_stamp[l] != s->stamp) {
            s->link_stamp[l] = s->stamp;
            g_array_append_val(s->comp_links, l);
        }
    }
    for (guint i = 0; i < s->comp_links->len; i++) { /* the list grows as we go */
        int32_t l = g_array_index(s->comp_links, int32_t, i);
        const GArray *list = s->on_link[l];
        for (guint j = 0; j < list->len; j++) {
            int32_t id = g_array_index(list, int32_t, j);
            Flow *f = FLOW(s, id);
            if (f->stamp == s->stamp)
                continue;
            f->stamp = s->stamp;
            g_array_append_val(s->comp_flows, id);
            for (int k = 0; k < f->n; k++) {
                if (s->link_stamp[f->path[k]] != s->stamp) {
                    s->link_stamp[f->path[k]] = s->stamp;
                    g_array_append_val(s->comp_links, f->path[k]);
                }
            }
        }
    }
    g_array_set_size(s->touched, 0);
}

/* Progressive filling over the component; sets each flow's rate. The
 * links wait in a min-heap by their fair share (capacity left over unfixed
 * flows); fixing flows only raises the shares of the other links they
 * cross, so a link's stale entries are skipped and its current one pushed
 * again. */
static void fill(Share *s)
{
    evq_clear(s->heap);
    for (guint i = 0; i < s->comp_links->len; i++) {
        int32_t l = g_array_index(s->comp_links, int32_t, i);
        s->left[l] = s->capacity[l];
        s->unfixed[l] = 0;
        const GArray *weights = s->weights_on[l];
        for (guint j = 0; j < weights->len; j++)
            s->unfixed[l] += g_array_index(weights, double, j);
        if (s->unfixed[l] > 0)
            evq_push(s->heap, s->left[l] / s->unfixed[l], l, 0);
    }
    for (guint i = 0; i < s->comp_flows->len; i++)
        FLOW(s, g_array_index(s->comp_flows, int32_t, i))->fixed = FALSE;
    Event top;
    while (evq_pop(s->heap, &top)) {
        int32_t bottleneck = top.payload;
        if (s->unfixed[bottleneck] <= 0 ||
            top.time_s != s->left[bottleneck] / s->unfixed[bottleneck])
            continue; /* stale: the link's share has grown since */
        double share = top.time_s;
        const GArray *list = s->on_link[bottleneck];
        for (guint j = 0; j < list->len; j++) {
            Flow *f = FLOW(s, g_array_index(list, int32_t, j));
            if (f->fixed)
                continue;
            f->fixed = TRUE;
            f->rate = share;
            for (int k = 0; k < f->n; k++) {
                int32_t l = f->path[k];
                s->left[l] = MAX(0.0, s->left[l] - f->weight[k] * share);
                s->unfixed[l] -= f->weight[k];
                if (s->unfixed[l] > 0 && l != bottleneck)
                    evq_push(s->heap, s->left[l] / s->unfixed[l], l, 0);
            }
        }
    }
}

void share_update(Share *s, double now,
                  void (*changed)(void *ctx, int id, double end_s, uint32_t version), void *ctx)
{
    for (guint i = 0; i < s->instant->len; i++) {
        int32_t id = g_array_index(s->instant, int32_t, i);
        Flow *f = FLOW(s, id);
        f->rate = INFINITY;
        changed(ctx, id, now, f->version);
    }
    g_array_set_size(s->instant, 0);
    if (s->touched->len == 0)
        return;
    find_component(s);
    for (guint i = 0; i < s->comp_flows->len; i++) {
        Flow *f = FLOW(s, g_array_index(s->comp_flows, int32_t, i));
        settle(s, f, now, FALSE);
        f->old_rate = f->rate;
    }
    fill(s);
    for (guint i = 0; i < s->comp_flows->len; i++) {
        int32_t id = g_array_index(s->comp_flows, int32_t, i);
        Flow *f = FLOW(s, id);
        if (f->rate == f->old_rate)
            continue; /* the same rate: the same end */
        f->version++;
        changed(ctx, id, now + f->remaining / f->rate, f->version);
    }
}

uint32_t share_version(const Share *s, int id)
{
    return g_array_index(s->flows, Flow, id).version;
}

int32_t share_token(const Share *s, int id)
{
    return g_array_index(s->flows, Flow, id).token;
}

double share_rate(const Share *s, int id)
{
    return g_array_index(s->flows, Flow, id).rate;
}

double share_link_bytes(const Share *s, int l)
{
    return s->carried[l];
}

double share_link_tag_bytes(const Share *s, int l, int tag)
{
    return s->carried_by[(gsize)l * s->tags + tag];
}
