/* grid.h: the plans of a sweep, a grid of plan fields' values (grid.c): the
 * default one from plan_fields.def's axes, or a grid file's. */
#ifndef PLANSIM_SPEC_GRID_H
#define PLANSIM_SPEC_GRID_H

#include <glib.h>

#include "spec/cluster.h"
#include "spec/model.h"
#include "spec/plan.h"

/* Values to try for one scalar plan field (as plan_field_get gives them). */
typedef struct {
    PlanField field;
    GArray *values; /* int */
} GridAxis;

/* The plans of a sweep: every combination of one value per axis. */
typedef struct {
    GArray *axes; /* GridAxis */
} PlanGrid;

PlanGrid *plan_grid_new(void);
void plan_grid_free(PlanGrid *grid);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlanGrid, plan_grid_free)

/* The fewest tokens of a sequence the default space leaves each GPU of a
 * context-parallel group: Llama 3 trained 131,072-token sequences over
 * cp 16, 8,192 tokens each (Dubey et al. 2024, section 3.3.2). */
#define CP_MIN_TOKENS 8192

/* The default space of a sweep: the fields' axes of plan_fields.def, for
 * this model on this cluster (many combinations are invalid: the sweep
 * enumerates the valid ones directly, app/space.h). */
PlanGrid *plan_grid_default(const ModelSpec *model, const ClusterSpec *cluster);

/* Removes the axis of `field`, if any (the field then keeps the base
 * plan's value). */
void plan_grid_remove(PlanGrid *grid, PlanField field);

/* Overrides `grid`'s axes with a grid file's: a JSON object whose keys are
 * plan fields and values non-empty lists of values. */
gboolean plan_grid_load(PlanGrid *grid, const char *path, GError **error);

/* Sets each axis of `from` in `into`, replacing the one of its field. */
void plan_grid_merge(PlanGrid *into, const PlanGrid *from);

/* Sets the axis of `field` (a scalar one: not plan_field_is_list) to the
 * comma-separated values of `text`, each as a flag gives it ("bf16,fp8"),
 * `origin` (the flag) naming them in an error. */
gboolean plan_grid_parse_axis(PlanGrid *grid, PlanField field, const char *text,
                              const char *origin, GError **error);

/* The most combinations a grid may have, so that their numbers (times a
 * sweep's cluster sizes) fit. */
#define GRID_MAX_COMBINATIONS (G_GINT64_CONSTANT(1) << 62)

/* Combinations in the grid (the product of the axes' sizes), or -1 when
 * more than GRID_MAX_COMBINATIONS. */
gint64 plan_grid_size(const PlanGrid *grid);

/* Sets `plan`'s grid fields to combination `combo` (the last axis varies
 * fastest; any multiple of the grid's size added to combo is ignored). */
void plan_grid_apply(const PlanGrid *grid, gint64 combo, PlanSpec *plan);

/* The index, in axis `axis`'s values, of combination `combo`'s value; and
 * the combination that differs from `combo` in that axis only, its value
 * index `index` (as plan_grid_apply numbers them). */
guint plan_grid_index(const PlanGrid *grid, gint64 combo, guint axis);
gint64 plan_grid_with(const PlanGrid *grid, gint64 combo, guint axis, guint index);

#endif
