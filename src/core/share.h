/* share.h: links whose bandwidth concurrent flows share, max-min fairly.
 *
 * A flow moves bytes over a path of links (with a weight on each, 1 unless
 * given). At any time every active flow has a rate, and the rates are
 * max-min fair (the "water-filling" of fluid
 * network models, as in SimGrid's): no flow's rate can grow without
 * shrinking that of a flow with a smaller or equal rate, and every link's
 * flows together use at most its capacity. Rates change only when a flow
 * starts or ends, and then only for the flows connected to it through
 * shared links. Between changes a flow progresses at its rate; the caller
 * asks when it would end and is told whenever that changes.
 *
 * Storage is flat and reused: flows live in a pool of slots, links keep
 * arrays of the flows crossing them; starting or ending a flow allocates
 * nothing once the pool has grown to the most flows active at once. */
#ifndef PLANSIM_CORE_SHARE_H
#define PLANSIM_CORE_SHARE_H

#include <glib.h>
#include <stdint.h>

#define SHARE_MAX_PATH 6

typedef struct Share Share;

/* Links 0 .. n_links - 1 with the given capacities (bytes/s, > 0); copied.
 * `tags` is the number of kinds a flow may be labelled with, for the bytes
 * each link carries by kind. */
Share *share_new(const double *capacity_Bps, int n_links, int tags);
void share_free(Share *s);

/* Starts a flow of `bytes` over `path` (n links, at most SHARE_MAX_PATH, n
 * may be 0: it then ends at once) at time `now`, labelled `tag`, carrying
 * the caller's `token`. Returns the flow's id. Rates are not recomputed
 * until share_update. */
int share_start(Share *s, double now, const int *path, int n, double bytes, int tag, int32_t token);

/* The same, with a weight (> 0) on each link of the path: the flow counts
 * `weight[i]` times its rate against link path[i]'s capacity, and moves
 * `weight[i]` times its bytes over it (for the link's byte counts). */
int share_start_weighted(Share *s, double now, const int *path, const double *weight, int n,
                         double bytes, int tag, int32_t token);

/* Ends flow `id` at `now` (its bytes are all moved). */
void share_end(Share *s, double now, int id);

/* Recomputes the rates of every flow connected to the flows started or
 * ended since the last update, at `now`. For each flow whose expected end
 * changed it calls `changed(ctx, id, end_s, version)`; a later change gives
 * the flow a new version, so a caller that queued the old end can tell. */
void share_update(Share *s, double now,
                  void (*changed)(void *ctx, int id, double end_s, uint32_t version), void *ctx);

/* The flow's current version and token. */
uint32_t share_version(const Share *s, int id);
int32_t share_token(const Share *s, int id);

/* The flow's rate (bytes/s; INFINITY for an empty path). */
double share_rate(const Share *s, int id);

/* Bytes link `l` has carried so far, in all and of one tag (moved bytes are
 * counted when a flow's rate changes or it ends). */
double share_link_bytes(const Share *s, int l);
double share_link_tag_bytes(const Share *s, int l, int tag);

/* Counts `bytes` more as carried by link `l`, labelled `tag`: what flows
 * not replayed carried (a steady state's periods, engine.h). */
void share_add_link_bytes(Share *s, int l, int tag, double bytes);

/* The links: n_links of share_new. */
int share_links(const Share *s);

/* What a flow over `path` (n > 0 links, weights `weight`) alone on every
 * link of it would get, to the bit: its rate (bytes/s), as share_update
 * gives it; and the `bytes` it moves counted on its links, as share_end
 * counts them (share_carry). A flow no other ever meets need not be
 * started (net.c's routes apart). */
double share_alone_rate(const Share *s, const int32_t *path, const double *weight, int n);
void share_carry(Share *s, const int32_t *path, const double *weight, int n, int tag, double bytes);

#endif
