/* schedule_llama3.c: Meta's Llama 3 schedule (Llama 3 paper, section
 * 3.3.2), as Megatron-Core runs it: interleaved 1F1B whose rounds take N
 * contiguous micro-batches through each model chunk before the next
 * (Megatron-Core's microbatch_group_size_per_vp_stage; Megatron-LM's
 * interleaved schedule is N = p), so that the micro-batches per step need
 * not be a multiple of p, and a larger N hides more of the pipeline
 * transfers for more activations held. The k-th forward is entry k of the
 * table of rounds (get_schedule_table in Megatron-Core's schedules.py):
 * round r holds micro-batches r N .. min((r + 1) N, m) - 1, each through
 * chunk 0, then each through chunk 1, ...; the k-th backward is entry k
 * with its chunk reversed. Stage s warms up with (p - s - 1) 2 + (v - 1) N
 * forwards (one more paired, as interleaved), all of them when that is as
 * many. Megatron-Core's rules: p
 * <= N <= m, and the last round holds N micro-batches or at least p. The
 * paper's other two changes are the plan's own: its first and last
 * stages one layer fewer, the embedding and the loss alone in a chunk
 * (account_for_embedding_in_pipeline_split and
 * account_for_loss_in_pipeline_split, or a layout), and a stage's input
 * and output freed once consumed, which plansim never holds beyond the
 * activations its layers keep. */
#include "strategy/schedule.h"

/* N, the knob's value (0: p, Megatron-Core's default). */
static int group_of(int knob, int stages)
{
    return knob > 0 ? knob : stages;
}

/* The k-th forward (or backward) unit: entry k of the table of rounds. */
static void unit(GArray *units, int k, gboolean forward, int m, int v, int n)
{
    int round = k / (n * v), first = round * n, size = MIN(n, m - first);
    int at = k - round * n * v, chunk = at / size;
    schedule_add(units, first + at % size, forward, forward ? chunk : v - 1 - chunk);
}

static void order(const StageWork *w, GArray *units)
{
    int m = w->micro_batches, p = w->stages, v = w->chunks, n = group_of(w->knob, p);
    int total = m * v, warmup = MIN((p - w->stage - 1) * 2 + (v - 1) * n + w->paired, total);
    for (int k = 0; k < warmup; k++)
        unit(units, k, TRUE, m, v, n);
    for (int i = 0; i < total - warmup; i++) {
        unit(units, warmup + i, TRUE, m, v, n);
        unit(units, i, FALSE, m, v, n);
        schedule_pair_last(w, units);
    }
    for (int k = total - warmup; k < total; k++)
        unit(units, k, FALSE, m, v, n);
}

static gboolean check(const PlanSpec *plan, GError **error)
{
    if (plan->pp < 2 || plan->virtual_stages < 2)
        return plan_field_fail(error, plan,
                               plan->pp < 2 ? PLAN_SCHEDULE : PLAN_VIRTUAL_STAGES,
                               "pp and virtual_stages at least 2 with the \"llama3\" schedule, "
                               "an interleaved one (pp = %d, virtual_stages = %d)",
                               plan->pp, plan->virtual_stages);
    int m = plan_spec_micro_batches(plan), p = plan->pp;
    int n = group_of(plan->microbatch_group_size_per_vp_stage, p);
    if (n < p || n > m)
        return plan_field_fail(error, plan, PLAN_MICROBATCH_GROUP,
                               "contiguous micro-batches a model chunk runs from pp = %d to the "
                               "micro-batches per step, %d (Megatron-Core's rule; 0: pp)",
                               p, m);
    if (m % n != 0 && m % n < p)
        return plan_field_fail(error, plan, PLAN_MICROBATCH_GROUP,
                               "a group that leaves a last round of 0 or at least pp = %d of the "
                               "%d micro-batches (Megatron-Core's rule: a smaller one stalls the "
                               "pipeline; it leaves %d)",
                               p, m, m % n);
    return TRUE;
}

/* A round: N micro-batches through every chunk. */
static int period(const StageWork *w)
{
    return group_of(w->knob, w->stages);
}

const PipeSchedule schedule_llama3 = {
    .name = "llama3",
    .order = order,
    .check = check,
    .pairs = TRUE,
    .period = period,
};
