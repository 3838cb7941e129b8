/* step.c: a resolved step (step.h). */
#include "strategy/step.h"

Step step_of(const ModelSpec *model, const ClusterSpec *cluster, const PlanSpec *plan)
{
    return (Step){.model = model,
                  .cluster = cluster,
                  .plan = plan,
                  .gpu = plan_spec_run_gpu(plan, &cluster->gpu),
                  .shard = transformer_shard(plan),
                  .micro_batches = plan_spec_micro_batches(plan)};
}
