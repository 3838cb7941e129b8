/* schedule_naive.c: each micro-batch's forward then its backward, so only
 * one micro-batch is ever in the pipeline (on one stage: gradient
 * accumulation). */
#include "strategy/schedule.h"

static void order(const StageWork *w, GArray *units)
{
    for (int mb = 0; mb < w->micro_batches; mb++) {
        schedule_add(units, mb, TRUE, 0);
        schedule_add(units, mb, FALSE, 0);
    }
}

const PipeSchedule schedule_naive = {
    .name = "naive",
    .order = order,
    .check = schedule_check_one_chunk,
    .one_at_a_time = TRUE,
};
