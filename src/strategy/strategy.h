/* strategy.h: the plug-in interface of parallelism strategies.
 *
 * A strategy is a const table of hooks, registered once in registry.c. The
 * emitter calls every active strategy's hooks, in registry order, at fixed
 * points of each rank's step; a hook adds tasks through emit.h only. A
 * hook left NULL does nothing. Per-rank state lives in a zeroed block of
 * `state_size` bytes the emitter provides (cleared for each rank). */
#ifndef PLANSIM_STRATEGY_STRATEGY_H
#define PLANSIM_STRATEGY_STRATEGY_H

#include "strategy/emit.h"

/* The most strategies the registry may hold. */
#define STRATEGY_MAX 16

typedef struct {
    const char *name;
    /* Whether the plan uses this strategy. */
    gboolean (*active)(const PlanSpec *plan);
    gsize state_size;
    /* Before anything of the step: adjust the rank's persistent memory. */
    void (*step_begin)(Emit *e, void *state);
    /* The order of the rank's units (appends Unit to `units`). The first
     * active strategy that has this hook decides the order. */
    void (*schedule)(Emit *e, GArray *units);
    /* A backward piece (`producer`) of micro-batch `u` has finished the
     * gradients of `params` parameters. */
    void (*grads_ready)(Emit *e, void *state, const Unit *u, TaskId producer, double params);
    /* After the last unit, before the optimizer step (which waits for the
     * rank's communication stream). */
    void (*step_end)(Emit *e, void *state);
} Strategy;

/* The registered strategies, NULL-terminated. */
extern const Strategy *const strategy_registry[];

/* Fails (PS_ERROR_UNSUPPORTED) when the plan needs a strategy that is not
 * simulated yet, naming the field. */
gboolean strategy_check(const PlanSpec *plan, GError **error);

/* The data-parallel strategy (dp.c). */
extern const Strategy strategy_data_parallel;

#endif
