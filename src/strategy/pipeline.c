/* pipeline.c: pipeline parallelism; the schedule of every rank's units.
 *
 * The plan's schedule orders each stage's units (Huang et al., GPipe;
 * Narayanan et al., SC'21; Megatron-LM's schedules), with m micro-batches,
 * p stages and this rank's stage s:
 *   - naive: each micro-batch's forward then its backward, so only one
 *     micro-batch is ever in the pipeline;
 *   - gpipe: every forward, then every backward;
 *   - 1f1b: min(p - s - 1, m) warm-up forwards, then one forward and one
 *     backward in turn, then the remaining backwards, so that stage s holds
 *     at most min(p - s, m) micro-batches' activations;
 *   - interleaved: v model chunks per stage; the k-th forward runs chunk
 *     (k mod pv) / p of micro-batch (k / pv) p + k mod p (backwards the
 *     chunks in reverse), after (p - s - 1) 2 + (v - 1) p warm-up forwards
 *     (all of them when m = p).
 * With one stage, 1f1b and naive are gradient accumulation.
 *
 * Between stages, each unit's forward receives its input activations from
 * the stage before and sends its output to the stage after; backward the
 * same with gradients, the other way; b s h / t bf16 elements each (with
 * tensor parallelism each rank of the stage sends its 1/t, Megatron's
 * scatter/gather). Sends run on the pipeline stream once the unit's compute
 * is done; the receiving unit's first task waits for the transfer. A tied
 * word embedding, held by the first and the last stage, has its gradients
 * summed over the two at the end of the step. */
#include "strategy/strategy.h"

static gboolean active(const PlanSpec *plan)
{
    (void)plan;
    return TRUE; /* every plan has a schedule, even on one stage */
}

static void add(GArray *units, int micro_batch, gboolean forward, int chunk)
{
    Unit u = {micro_batch, forward, chunk};
    g_array_append_val(units, u);
}

/* Megatron-LM's interleaved order: the k-th forward (or backward) unit. */
static void interleaved_unit(GArray *units, int k, gboolean forward, int p, int v)
{
    int chunk = k % (p * v) / p;
    add(units, k / (p * v) * p + k % p, forward, forward ? chunk : v - 1 - chunk);
}

static void schedule(Emit *e, GArray *units)
{
    const PlanSpec *plan = emit_plan(e);
    int m = emit_micro_batches(e), p = plan->pp, v = plan->virtual_stages, s = emit_stage(e);
    switch (plan->schedule) {
    case SCHEDULE_NAIVE:
        for (int mb = 0; mb < m; mb++) {
            add(units, mb, TRUE, 0);
            add(units, mb, FALSE, 0);
        }
        return;
    case SCHEDULE_GPIPE:
        for (int mb = 0; mb < m; mb++)
            add(units, mb, TRUE, 0);
        for (int mb = 0; mb < m; mb++)
            add(units, mb, FALSE, 0);
        return;
    case SCHEDULE_1F1B: {
        int warmup = MIN(p - s - 1, m);
        for (int mb = 0; mb < warmup; mb++)
            add(units, mb, TRUE, 0);
        for (int i = 0; i < m - warmup; i++) {
            add(units, warmup + i, TRUE, 0);
            add(units, i, FALSE, 0);
        }
        for (int mb = m - warmup; mb < m; mb++)
            add(units, mb, FALSE, 0);
        return;
    }
    case SCHEDULE_INTERLEAVED: {
        int total = m * v, warmup = MIN((p - s - 1) * 2 + (v - 1) * p, total);
        if (m == p)
            warmup = total; /* Megatron-LM: every forward first */
        for (int k = 0; k < warmup; k++)
            interleaved_unit(units, k, TRUE, p, v);
        for (int i = 0; i < total - warmup; i++) {
            interleaved_unit(units, warmup + i, TRUE, p, v);
            interleaved_unit(units, i, FALSE, p, v);
        }
        for (int k = total - warmup; k < total; k++)
            interleaved_unit(units, k, FALSE, p, v);
        return;
    }
    }
}

/* Bytes of one transfer from one rank: b s h bf16 elements over t. */
static double transfer_bytes(const Emit *e)
{
    const ModelSpec *m = emit_model(e);
    const PlanSpec *plan = emit_plan(e);
    return 2.0 * plan->micro_batch_size * m->seq_length * m->hidden_size / plan->tp;
}

/* The transfer into model chunk g's unit of micro-batch mb: activations
 * from chunk g - 1 (forward), gradients from chunk g + 1 (backward). The
 * name is the sending chunk's, so that both ends name it alike. */
static TaskName transfer_name(gboolean forward, int mb, int from_chunk)
{
    return (TaskName){.fmt = forward ? "pp activations mb%d chunk%d" : "pp gradients mb%d chunk%d",
                      .a = mb,
                      .b = from_chunk};
}

static void unit_begin(Emit *e, void *state, const Unit *u)
{
    (void)state;
    int g = emit_model_chunk(e, u), last = emit_plan(e)->n_layers_per_stage - 1;
    if (u->forward && g > 0)
        emit_gate(e, emit_recv(e, TOWARD_NEXT, transfer_bytes(e),
                               transfer_name(TRUE, u->micro_batch, g - 1)));
    if (!u->forward && g < last)
        emit_gate(e, emit_recv(e, TOWARD_PREV, transfer_bytes(e),
                               transfer_name(FALSE, u->micro_batch, g + 1)));
}

static void unit_end(Emit *e, void *state, const Unit *u, TaskId done)
{
    (void)state;
    int g = emit_model_chunk(e, u), last = emit_plan(e)->n_layers_per_stage - 1;
    if (u->forward && g < last)
        emit_send(e, TOWARD_NEXT, transfer_bytes(e), done, transfer_name(TRUE, u->micro_batch, g));
    if (!u->forward && g > 0)
        emit_send(e, TOWARD_PREV, transfer_bytes(e), done, transfer_name(FALSE, u->micro_batch, g));
}

/* With a tied output layer the first and the last stage each hold the
 * word embedding; after backward they sum its gradients (Megatron-LM's
 * embedding group), an all-reduce of its bf16 gradients over the two. */
static void step_end(Emit *e, void *state)
{
    (void)state;
    const ModelSpec *m = emit_model(e);
    const PlanSpec *plan = emit_plan(e);
    int s = emit_stage(e);
    if (!m->tied_embeddings || plan->pp == 1 || (s != 0 && s != plan->pp - 1))
        return;
    double bytes = 2.0 * m->vocab_size * m->hidden_size / plan->tp;
    TaskId t = emit_ends_collective(e, STREAM_COMM, COLL_ALL_REDUCE, bytes, TAG_DP,
                                    (TaskName){.fmt = "embedding all_reduce"});
    emit_wait(e, emit_last(e, STREAM_COMPUTE), t);
}

const Strategy strategy_pipeline = {
    .name = "pipeline",
    .active = active,
    .schedule = schedule,
    .unit_begin = unit_begin,
    .unit_end = unit_end,
    .step_end = step_end,
};
