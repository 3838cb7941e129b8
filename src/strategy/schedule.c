/* schedule.c: the table of pipeline schedules, and what they share. */
#include "strategy/schedule.h"

const PipeSchedule *const pipeline_schedules[SCHEDULES] = {
#define SCHEDULE(ID, name, row) [SCHEDULE_##ID] = &row,
#include "base/schedules.def"
#undef SCHEDULE
};

void schedule_add(GArray *units, int micro_batch, gboolean forward, int chunk)
{
    Unit u = {micro_batch, forward, chunk, BACKWARD_WHOLE};
    g_array_append_val(units, u);
}

void schedule_add_part(GArray *units, int micro_batch, BackwardPart part)
{
    Unit u = {micro_batch, FALSE, 0, part};
    g_array_append_val(units, u);
}

gboolean schedule_splits_backward(const PlanSpec *plan)
{
    return pipeline_schedules[plan->schedule]->split_backward;
}

unsigned schedule_passes(Phase phase)
{
    static const unsigned passes[PHASES] = {
        [PHASE_FORWARD] = PASS_FORWARD,
        [PHASE_RECOMPUTE] = PASS_FORWARD,
        [PHASE_BACKWARD] = PASS_INPUT_GRAD | PASS_WEIGHT_GRAD,
        [PHASE_INPUT_GRAD] = PASS_INPUT_GRAD,
        [PHASE_WEIGHT_GRAD] = PASS_WEIGHT_GRAD,
    };
    return passes[phase];
}

PassWork schedule_work(unsigned passes, const OpsWork *w, double share)
{
    PassWork p = {0};
    if (passes & PASS_FORWARD) {
        p.seconds += w->seconds;
        p.flops += w->flops;
    }
    if (passes & PASS_INPUT_GRAD) {
        p.seconds += 2 * w->seconds - w->wgrad_seconds;
        p.flops += 2 * w->flops - w->wgrad_flops;
    }
    if (passes & PASS_WEIGHT_GRAD) {
        p.seconds += w->wgrad_seconds;
        p.flops += w->wgrad_flops;
    }
    return (PassWork){share * p.seconds, share * p.flops};
}

gboolean schedule_check_one_chunk(const PlanSpec *plan, GError **error)
{
    if (plan->virtual_stages > 1)
        return plan_field_fail(error, plan, PLAN_VIRTUAL_STAGES,
                               "1 unless schedule is \"interleaved\"");
    return TRUE;
}

gboolean schedule_check_zero_bubble(const PlanSpec *plan, int least, GError **error)
{
    const char *name = schedule_names[plan->schedule];
    if (plan->pp < 2)
        return plan_field_fail(error, plan, PLAN_SCHEDULE,
                               "a schedule other than \"%s\" when pp = %d (it fills the "
                               "pipeline's bubble)",
                               name, plan->pp);
    if (!schedule_check_one_chunk(plan, error))
        return FALSE;
    int m = plan_spec_micro_batches(plan);
    if (m < least)
        return plan_field_fail(error, plan, PLAN_GLOBAL_BATCH_SIZE,
                               "micro-batches per step, global_batch_size / (micro_batch_size x "
                               "dp) = %d, at least %d for the \"%s\" schedule with pp = %d",
                               m, least, name, plan->pp);
    return TRUE;
}
