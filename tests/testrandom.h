/* testrandom.h: random steps for the tests that replay one step two ways
 * and compare their reports (check_symmetry.c: reduced against full
 * fidelity; check_fold.c: its steady state built short against whole),
 * and that comparison. The generators are seeded by the caller, so every
 * run draws the same steps. */
#ifndef PLANSIM_TESTS_TESTRANDOM_H
#define PLANSIM_TESTS_TESTRANDOM_H

#include <cjson/cJSON.h>

#include "testutil.h"

/* One of the values, drawn. */
int random_pick(GRand *rng, const int *values, int n);
#define PICK(rng, ...)                                                                             \
    random_pick(rng, (const int[]){__VA_ARGS__}, G_N_ELEMENTS(((int[]){__VA_ARGS__})))

/* A small random model, dense or a mixture of experts. */
ModelSpec *random_model(GRand *rng);

/* A random cluster: latencies, NICs, spine and interference included. */
ClusterSpec *random_cluster(GRand *rng);

/* A random plan for `m` on `c`, valid or not (the caller resolves it):
 * every schedule, ZeRO stage, recomputation, rank order, forced
 * algorithm, contention on and off, precision and offload, experts' plans
 * for a mixture of experts; 1, 2 or 4 micro-batches a step (pp or 2 pp
 * interleaved), or with `many` 12 to 40 (6 pp to 12 pp): a steady state. */
void random_plan(GRand *rng, const ModelSpec *m, const ClusterSpec *c, PlanSpec *p, gboolean many);

/* A random step that resolves and passes the strategies' checks: a
 * random model, cluster and plan drawn until they do (the draws of the
 * ones refused count in *tried, fewer than `most_tries` in all), freed
 * with random_step_clear. */
typedef struct {
    ModelSpec *m;
    ClusterSpec *c;
    PlanSpec *plan;
} RandomStep;

RandomStep random_step(GRand *rng, gboolean many, int *tried, int most_tries);
void random_step_clear(RandomStep *s);

/* The first difference between two parsed reports, numbers within `rel`
 * of each other, the keys `skipped` (NULL-terminated) left out; NULL when
 * none. Newly allocated. */
char *random_difference(const cJSON *a, const cJSON *b, const char *path,
                        const char *const *skipped, double rel);

#endif
