/* registry.c: the table of strategies, made from strategies.def, and
 * what is made by going over it: checks, normal forms, advice, a step's
 * rule of its states and the step. */
#include "strategy/strategy.h"

#include "strategy/states.h"

const Strategy *const strategy_registry[] = {
#define STRATEGY(name) &strategy_##name,
#include "strategy/strategies.def"
#undef STRATEGY
    NULL,
};

/* Every strategy's check_model of the plan's fields as given. */
static gboolean check_model(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    for (int i = 0; strategy_registry[i]; i++) {
        const Strategy *s = strategy_registry[i];
        if (s->check_model && !s->check_model(plan, model, error))
            return FALSE;
    }
    return TRUE;
}

gboolean strategy_check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    if (!check_model(plan, model, error))
        return FALSE;
    for (int i = 0; strategy_registry[i]; i++) {
        const Strategy *s = strategy_registry[i];
        if (s->check && !s->check(plan, model, error))
            return FALSE;
    }
    /* a step too big to build is refused here, where every use of a plan
     * looks first, before the estimates walk its micro-batches */
    return emit_check_size(model, plan, plan->pp, 0, EMIT_MAX_TASKS, error);
}

void strategy_normalize(PlanSpec *plan, const ModelSpec *model)
{
    for (int i = 0; strategy_registry[i]; i++)
        if (strategy_registry[i]->normalize)
            strategy_registry[i]->normalize(plan, model);
}

char *strategy_normal_form(const PlanSpec *plan, const ModelSpec *model)
{
    g_autoptr(PlanSpec) normal = plan_spec_copy(plan);
    strategy_normalize(normal, model);
    return plan_spec_key(normal);
}

gboolean strategy_resolve(PlanSpec *plan, const ModelSpec *model, const ClusterSpec *cluster,
                          GError **error)
{
    return check_model(plan, model, error) && plan_spec_resolve(plan, model, cluster, error) &&
           strategy_check(plan, model, error);
}

StatesRule strategy_states_rule(const PlanSpec *plan)
{
    StatesRule rule = states_rule(plan);
    for (int i = 0; strategy_registry[i]; i++)
        if (strategy_registry[i]->states && strategy_registry[i]->active(plan))
            strategy_registry[i]->states(plan, &rule);
    return rule;
}

Step step_of(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan)
{
    return (Step){.model = model,
                  .cluster = cluster,
                  .plan = plan,
                  .gpu = plan_spec_run_gpu(plan, &cluster->gpu),
                  .shard = transformer_shard_on(plan, &cluster->gpu),
                  .micro_batches = plan_spec_micro_batches(plan),
                  .states = strategy_states_rule(plan)};
}

char *strategy_comm_advice(TaskTag tag, const PlanSpec *plan, const ClusterSpec *cluster)
{
    char *advice = NULL;
    for (int i = 0; strategy_registry[i] && !advice; i++)
        if (strategy_registry[i]->comm_advice)
            advice = strategy_registry[i]->comm_advice(tag, plan, cluster);
    return advice;
}
