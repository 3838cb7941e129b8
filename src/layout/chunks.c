/* chunks.c: the model chunks of a plan's pipeline (chunks.h). */
#include "layout/chunks.h"

int chunks_count(const PlanSpec *plan)
{
    return plan->layers_per_stage.n;
}

int chunks_of_stage(const PlanSpec *plan, int stage, int c)
{
    if (schedule_v_shaped[plan->schedule])
        return c == 0 ? stage : 2 * plan->pp - 1 - stage;
    return c * plan->pp + stage;
}

int chunks_stage(const PlanSpec *plan, int g)
{
    if (schedule_v_shaped[plan->schedule])
        return g < plan->pp ? g : 2 * plan->pp - 1 - g;
    return g % plan->pp;
}

int chunks_toward(const PlanSpec *plan, int g)
{
    if (schedule_v_shaped[plan->schedule])
        return g < plan->pp - 1 ? 1 : g == plan->pp - 1 ? 0 : -1;
    return 1;
}

int chunks_layers(const PlanSpec *plan, int g)
{
    return plan->layers_per_stage.v[g];
}

int chunks_first_layer(const PlanSpec *plan, int g)
{
    int first = 0;
    for (int k = 0; k < g; k++)
        first += chunks_layers(plan, k);
    return first;
}

int *chunks_firsts(const PlanSpec *plan)
{
    int n = chunks_count(plan), *first = g_new(int, n + 1);
    first[0] = 0;
    for (int g = 0; g < n; g++)
        first[g + 1] = first[g] + chunks_layers(plan, g);
    return first;
}

int chunks_of_layer(const PlanSpec *plan, int layer)
{
    int g = 0;
    for (int from = 0; layer >= from + chunks_layers(plan, g); g++)
        from += chunks_layers(plan, g);
    return g;
}

int chunks_stage_layers(const PlanSpec *plan, int stage)
{
    int layers = 0;
    for (int c = 0; c < plan->virtual_stages; c++)
        layers += chunks_layers(plan, chunks_of_stage(plan, stage, c));
    return layers;
}
