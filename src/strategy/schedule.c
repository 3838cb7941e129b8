/* schedule.c: the table of pipeline schedules, and what they share. */
#include "strategy/schedule.h"

const PipeSchedule *const pipeline_schedules[SCHEDULES] = {
#define SCHEDULE(ID, name, row) [SCHEDULE_##ID] = &row,
#include "base/schedules.def"
#undef SCHEDULE
};

void schedule_add(GArray *units, int micro_batch, gboolean forward, int chunk)
{
    Unit u = {micro_batch, forward, chunk};
    g_array_append_val(units, u);
}

gboolean schedule_check_one_chunk(const PlanSpec *plan, GError **error)
{
    if (plan->virtual_stages > 1)
        return plan_field_fail(error, plan, PLAN_VIRTUAL_STAGES,
                               "1 unless schedule is \"interleaved\"");
    return TRUE;
}
