/* registry.c: the one table of strategies.
 *
 * Registry order is hook order: the pipeline receives a unit's input
 * before anything of the unit runs, ZeRO gathers a layer's parameters
 * before recomputation replays its forward. */
#include "strategy/strategy.h"

const Strategy *const strategy_registry[] = {
    &strategy_pipeline, &strategy_tensor_parallel, &strategy_data_parallel,
    &strategy_zero,     &strategy_recompute,       NULL,
};

gboolean strategy_check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    for (int i = 0; strategy_registry[i]; i++) {
        const Strategy *s = strategy_registry[i];
        if (s->active(plan) && s->check && !s->check(plan, model, error))
            return FALSE;
    }
    return TRUE;
}
