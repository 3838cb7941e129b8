/* whatif.h: what-ifs, a step replayed on a cluster that misbehaves.
 *
 * Three kinds, given on the command line (docs/cli.md): a GPU computing
 * FACTOR times slower (--slow-gpu RANK:FACTOR, every compute task of that
 * rank, as thermal throttling does), a link FACTOR times slower, at 1 /
 * FACTOR of its bandwidth (--slow-link LINK:FACTOR, LINK as the report
 * names links, "node 0 nic 2
 * out", or without the direction for both), and log-normal noise on every
 * compute task (--jitter SIGMA --seed S, emit.h's EmitSlowdown: mean 1,
 * deterministic for a seed). A slowed GPU and a slowed link only slow the
 * step, so a sweep's bounds stay admissible; noise does not. */
#ifndef PLANSIM_APP_WHATIF_H
#define PLANSIM_APP_WHATIF_H

#include <glib.h>

#include "net/topology.h"
#include "spec/cluster.h"

typedef struct {
    GArray *gpus;  /* WhatIfGpu, in the order given */
    GArray *links; /* WhatIfLink, in the order given */
    double jitter; /* sigma; 0: none */
    guint64 seed;
    char *text; /* a summary for reports: "slow gpu 3 x2, jitter 0.1 seed 7" */
} WhatIf;

/* The factors, how many times slower (both read alike, from 1): a GPU up
 * to 1000 times, a link down to a millionth of its bandwidth (with the
 * smallest bandwidth and efficiency a cluster file takes, 10 bytes/s:
 * times stay finite). */
#define WHATIF_MAX_GPU_FACTOR  1000
#define WHATIF_MAX_LINK_FACTOR 1e6

typedef struct {
    int rank;
    double factor; /* in [1, WHATIF_MAX_GPU_FACTOR] */
} WhatIfGpu;

typedef struct {
    char *link;    /* as given, "node 0 nic 2 out" */
    double factor; /* times slower, in [1, WHATIF_MAX_LINK_FACTOR] */
} WhatIfLink;

WhatIf *whatif_new(void);
void whatif_free(WhatIf *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhatIf, whatif_free)

/* Adds the what-ifs of the flags' texts, each NULL or NULL-terminated:
 * --slow-gpu "RANK:FACTOR" (FACTOR in [1, WHATIF_MAX_GPU_FACTOR]),
 * --slow-link "LINK:FACTOR" (FACTOR in [1, WHATIF_MAX_LINK_FACTOR]), both how many times slower,
 * with an optional "x" ("2x"), --jitter SIGMA (in [0, 4];
 * NULL: 0) and --seed S (an integer; NULL: 1; only with --jitter). Fails (PS_ERROR_INPUT) naming
 * the flag and the value. The rank and the link are checked against a plan by whatif_gpu_factors
 * and whatif_link_scales. */
gboolean whatif_parse(WhatIf *w, char **slow_gpus, char **slow_links, const char *jitter,
                      const char *seed, GError **error);

/* Whether any what-if is set. */
gboolean whatif_active(const WhatIf *w);

/* The compute factor of each of `gpus` ranks (1 where none is set; the
 * last given for a rank wins), newly allocated in *out, NULL when no GPU is
 * slowed; fails (PS_ERROR_INPUT) for a rank the plan does not have. */
gboolean whatif_gpu_factors(const WhatIf *w, int gpus, double **out, GError **error);

/* The capacity fraction of each link of `t` (1 where none is set), newly
 * allocated in *out, NULL when no link is slowed; fails (PS_ERROR_INPUT)
 * for a name that is no link of `t`. */
gboolean whatif_link_scales(const WhatIf *w, const Topology *t, double **out, GError **error);

/* Checks the ranks and links of `w` against `gpus` GPUs of `cluster`, as
 * the two functions above would for any plan on them (a sweep's plans all
 * run on the same GPUs): fails (PS_ERROR_INPUT) naming the flag. */
gboolean whatif_check(const WhatIf *w, const ClusterSpec *cluster, int gpus, GError **error);

#endif
