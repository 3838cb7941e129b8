/* space.h: the plans of a sweep, enumerated directly.
 *
 * A sweep's space is its cluster sizes (one, or a --nodes list) times its
 * grid's axes (spec/grid.h's PlanGrid): combination c is cluster c / G and grid
 * combination c % G, for G the grid's size, the last axis fastest. Most of
 * a real space is invalid: tp x cp x pp must divide the GPUs, the
 * micro-batches the batch, the chunks the layers, each schedule has its
 * rules. space_walk visits the axes in order, one value at a time, and
 * holds each rule (space.c's table) as soon as the fields it reads are
 * set: a combination a rule refuses is refused with all the combinations
 * that share its values so far, counted under the rule's reason, at no
 * cost per combination. Each rule is a check the plan's resolution or a
 * strategy makes anyway (the same error), so every combination the walk
 * skips is invalid (tests/check_sweep.c holds it against checking every
 * combination), and the combinations it visits are checked in full by
 * whoever runs them. */
#ifndef PLANSIM_APP_SPACE_H
#define PLANSIM_APP_SPACE_H

#include <glib.h>

#include "spec/model.h"
#include "spec/cluster.h"
#include "spec/plan.h"
#include "spec/grid.h"

typedef struct {
    const ModelSpec *model;
    const ClusterSpec *const *clusters; /* the cluster sizes, the outermost axis */
    int n_clusters;
    int gpus;             /* GPUs a plan uses; 0: all of its cluster's */
    const PlanSpec *base; /* the fixed fields; its dp, if 0, is derived per plan */
    const PlanGrid *grid;
} Space;

/* Combinations: clusters x the grid's product; -1 beyond
 * GRID_MAX_COMBINATIONS. */
gint64 space_size(const Space *s);

/* The cluster of combination `combo`, and the GPUs its plan uses. */
const ClusterSpec *space_cluster(const Space *s, gint64 combo, int *gpus);

/* Sets `plan`'s grid fields to those of combination `combo`. */
void space_apply(const Space *s, gint64 combo, PlanSpec *plan);

/* The plan of combination `combo` (newly allocated), its dp derived from
 * the GPUs (plan_spec_derive_dp), resolved and checked (strategy_resolve)
 * on its cluster; on an invalid one FALSE, the plan as far as it went. */
gboolean space_plan(const Space *s, gint64 combo, PlanSpec **plan, GError **error);

/* The most values the walk sets, so that no space takes long to walk. */
#define SPACE_MAX_STEPS (G_GINT64_CONSTANT(1) << 25)

/* Calls `leaf` for every combination no rule refuses, in increasing
 * order, and `refused` once per refusal: `count` combinations refused for
 * `reason` (the error's reason, ps_error_reason). `leaf` returns FALSE to
 * stop the walk. Fails (PS_ERROR_INPUT) when `leaf` stopped it or the
 * walk would set more than SPACE_MAX_STEPS values. */
typedef gboolean (*SpaceLeaf)(gint64 combo, gpointer user);
typedef void (*SpaceRefused)(const char *reason, gint64 count, gpointer user);
gboolean space_walk(const Space *s, SpaceLeaf leaf, SpaceRefused refused, gpointer user,
                    GError **error);

#endif
