/* registry.c: the one table of strategies, and what is not simulated yet.
 *
 * A plan field that asks for a strategy missing from the table fails with
 * PS_ERROR_UNSUPPORTED rather than being silently ignored. */
#include "strategy/strategy.h"
#include "util/error.h"

const Strategy *const strategy_registry[] = {
    &strategy_data_parallel,
    NULL,
};

static gboolean wants_tp(const PlanSpec *p) { return p->tp > 1; }
static gboolean wants_pp(const PlanSpec *p) { return p->pp > 1; }
static gboolean wants_zero(const PlanSpec *p) { return p->zero_stage > 0; }
static gboolean wants_sp(const PlanSpec *p) { return p->sequence_parallel; }
static gboolean wants_recompute(const PlanSpec *p) { return p->recompute != RECOMPUTE_NONE; }

static const struct {
    PlanField field;
    gboolean (*wanted)(const PlanSpec *plan);
    const char *what;
} not_yet[] = {
    {PLAN_TP, wants_tp, "tensor parallelism"},
    {PLAN_PP, wants_pp, "pipeline parallelism"},
    {PLAN_ZERO_STAGE, wants_zero, "ZeRO sharding"},
    {PLAN_SEQUENCE_PARALLEL, wants_sp, "sequence parallelism"},
    {PLAN_RECOMPUTE, wants_recompute, "activation recomputation"},
};

gboolean strategy_check(const PlanSpec *plan, GError **error)
{
    for (gsize i = 0; i < G_N_ELEMENTS(not_yet); i++) {
        if (!not_yet[i].wanted(plan))
            continue;
        g_autofree char *value = plan_field_text(plan, not_yet[i].field);
        g_set_error(error, PS_ERROR, PS_ERROR_UNSUPPORTED,
                    "%s: %s = %s: %s is not simulated yet", plan_field_origin(plan, not_yet[i].field),
                    plan_field_name(not_yet[i].field), value, not_yet[i].what);
        return FALSE;
    }
    return TRUE;
}
