/* registry.c: the one table of strategies, and what is not simulated yet.
 *
 * Registry order is hook order: ZeRO gathers a layer's parameters before
 * recomputation replays its forward. A plan field that asks for a strategy
 * missing from the table fails with PS_ERROR_UNSUPPORTED rather than being
 * silently ignored. */
#include "strategy/strategy.h"
#include "util/error.h"

const Strategy *const strategy_registry[] = {
    &strategy_tensor_parallel, &strategy_data_parallel, &strategy_zero, &strategy_recompute, NULL,
};

static gboolean wants_pp(const PlanSpec *p)
{
    return p->pp > 1;
}

static const struct {
    PlanField field;
    gboolean (*wanted)(const PlanSpec *plan);
    const char *what;
} not_yet[] = {
    {PLAN_PP, wants_pp, "pipeline parallelism"},
};

gboolean strategy_check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    for (gsize i = 0; i < G_N_ELEMENTS(not_yet); i++) {
        if (!not_yet[i].wanted(plan))
            continue;
        g_autofree char *value = plan_field_text(plan, not_yet[i].field);
        g_set_error(error, PS_ERROR, PS_ERROR_UNSUPPORTED, "%s: %s = %s: %s is not simulated yet",
                    plan_field_origin(plan, not_yet[i].field), plan_field_name(not_yet[i].field),
                    value, not_yet[i].what);
        return FALSE;
    }
    for (int i = 0; strategy_registry[i]; i++) {
        const Strategy *s = strategy_registry[i];
        if (s->active(plan) && s->check && !s->check(plan, model, error))
            return FALSE;
    }
    return TRUE;
}
