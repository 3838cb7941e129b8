/* schedule_1f1b.c: one forward, one backward, Megatron-LM's schedule without
 * interleaving (Narayanan et al., SC'21): min(p - s - 1, m) warm-up
 * forwards, then one forward and one backward in turn, then the remaining
 * backwards, so that stage s holds
 * at most min(p - s, m) micro-batches' activations. On one stage, gradient
 * accumulation. Paired (the combined 1F1B overlap, schedule.h), one
 * warm-up forward more, as Megatron-Core's combined_1f1b.py runs it on
 * one stage: then each forward and backward in turn are of other
 * micro-batches. */
#include "strategy/schedule.h"

static void order(const StageWork *w, GArray *units)
{
    int m = w->micro_batches, warmup = MIN(w->stages - w->stage - 1 + w->paired, m);
    for (int mb = 0; mb < warmup; mb++)
        schedule_add(units, mb, TRUE, 0);
    for (int i = 0; i < m - warmup; i++) {
        schedule_add(units, warmup + i, TRUE, 0);
        schedule_add(units, i, FALSE, 0);
        schedule_pair_last(w, units);
    }
    for (int mb = m - warmup; mb < m; mb++)
        schedule_add(units, mb, FALSE, 0);
}

const PipeSchedule schedule_1f1b = {
    .name = "1f1b",
    .order = order,
    .check = schedule_check_one_chunk,
    .pairs = TRUE,
    .period = schedule_period_one,
};
