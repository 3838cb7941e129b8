/* schedule_gpipe.c: GPipe (Huang et al.): every forward, then every
 * backward. */
#include "strategy/schedule.h"

static void order(const StageWork *w, GArray *units)
{
    for (int mb = 0; mb < w->micro_batches; mb++)
        schedule_add(units, mb, TRUE, 0);
    for (int mb = 0; mb < w->micro_batches; mb++)
        schedule_add(units, mb, FALSE, 0);
}

const PipeSchedule schedule_gpipe = {
    .name = "gpipe",
    .order = order,
    .check = schedule_check_one_chunk,
};
