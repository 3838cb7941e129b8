/* schedule_interleaved.c: Megatron-LM's interleaved 1F1B (Narayanan et
 * al., SC'21): v model chunks per stage; the k-th forward runs chunk
 * (k mod pv) / p of micro-batch (k / pv) p + k mod p (backwards the chunks
 * in reverse), after (p - s - 1) 2 + (v - 1) p warm-up forwards (all of
 * them when m = p), one more when paired (the combined 1F1B overlap:
 * Megatron-Core's schedules.py, so that the forward and the backward of
 * each steady-state step are of other micro-batches). It needs p >= 2,
 * v >= 2 and m a multiple of p. */
#include "strategy/schedule.h"

/* The k-th forward (or backward) unit. */
static void unit(GArray *units, int k, gboolean forward, int p, int v)
{
    int chunk = k % (p * v) / p;
    schedule_add(units, k / (p * v) * p + k % p, forward, forward ? chunk : v - 1 - chunk);
}

static void order(const StageWork *w, GArray *units)
{
    int m = w->micro_batches, p = w->stages, v = w->chunks;
    int total = m * v, warmup = MIN((p - w->stage - 1) * 2 + (v - 1) * p + w->paired, total);
    if (m == p)
        warmup = total; /* Megatron-LM: every forward first */
    for (int k = 0; k < warmup; k++)
        unit(units, k, TRUE, p, v);
    for (int i = 0; i < total - warmup; i++) {
        unit(units, warmup + i, TRUE, p, v);
        unit(units, i, FALSE, p, v);
        schedule_pair_last(w, units);
    }
    for (int k = total - warmup; k < total; k++)
        unit(units, k, FALSE, p, v);
}

static gboolean check(const PlanSpec *plan, GError **error)
{
    if (plan->pp < 2)
        return plan_field_fail(error, plan, PLAN_SCHEDULE,
                               "a schedule other than \"interleaved\" when pp = %d "
                               "(it interleaves model chunks over pipeline stages)",
                               plan->pp);
    if (plan->virtual_stages < 2)
        return plan_field_fail(error, plan, PLAN_VIRTUAL_STAGES,
                               "at least 2 model chunks per stage with the \"interleaved\" "
                               "schedule");
    int m = plan_spec_micro_batches(plan);
    if (m % plan->pp != 0)
        return plan_field_fail(error, plan, PLAN_GLOBAL_BATCH_SIZE,
                               "micro-batches per step, global_batch_size / (micro_batch_size x "
                               "dp) = %d, a multiple of pp = %d for the \"interleaved\" schedule",
                               m, plan->pp);
    return TRUE;
}

/* Its forwards go round the pipeline p micro-batches at a time. */
static int period(const StageWork *w)
{
    return w->stages;
}

const PipeSchedule schedule_interleaved = {
    .name = "interleaved",
    .order = order,
    .check = check,
    .pairs = TRUE,
    .period = period,
};
