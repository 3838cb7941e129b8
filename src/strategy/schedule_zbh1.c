/* schedule_zbh1.c: ZB-H1, the memory-efficient zero-bubble schedule (Qi et
 * al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 2.1). Each
 * backward is split into B (input gradients) and W (weight gradients).
 * Stage s runs 1F1B's min(p - s - 1, m) warm-up forwards, then one
 * forward (while any is left) and one B in turn, and the W of micro-batch
 * i - s after the i-th B: each stage delays its W's by s B's, so that every
 * stage has at most p micro-batches in flight (forward done, W not), as
 * 1F1B's first stage. The delayed W's fill the tail: the pipeline's bubble
 * is (p - 1)(T_F + T_B - T_W) against 1F1B's (p - 1)(T_F + T_B + T_W)
 * (their section 2.1, with m >= p and T_W <= T_F). */
#include "strategy/schedule.h"

static void order(const StageWork *w, GArray *units)
{
    int m = w->micro_batches, s = w->stage, warmup = MIN(w->stages - s - 1, m), next = 0;
    while (next < warmup)
        schedule_add(units, next++, TRUE, 0);
    for (int i = 0; i < m; i++) {
        if (next < m)
            schedule_add(units, next++, TRUE, 0);
        schedule_add_part(units, i, BACKWARD_INPUT, 0);
        if (i >= s)
            schedule_add_part(units, i - s, BACKWARD_WEIGHT, 0);
    }
    for (int i = MAX(m - s, 0); i < m; i++)
        schedule_add_part(units, i, BACKWARD_WEIGHT, 0);
}

static gboolean check(const PlanSpec *plan, GError **error)
{
    return schedule_check_zero_bubble(plan, 1, error);
}

const PipeSchedule schedule_zbh1 = {
    .name = "zb-h1",
    .order = order,
    .check = check,
    .split = SPLIT_ALL,
    .period = schedule_period_one,
};
