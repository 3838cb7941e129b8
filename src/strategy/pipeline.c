/* pipeline.c: pipeline parallelism; the schedule of every rank's units.
 *
 * The plan's schedule orders each stage's units: its row of
 * pipeline_schedules (schedule.h, one file each: naive, gpipe, 1f1b,
 * interleaved, zb-h1, zb-h2), which also checks the plan fields the schedule constrains.
 *
 * Between stages, each unit's forward receives its input activations from
 * the stage before and sends its output to the stage after; backward the
 * same with gradients, the other way; b s h / t bf16 elements each (with
 * tensor parallelism each rank of the stage sends its 1/t, Megatron's
 * scatter/gather); a split backward's gradients travel with its B, its W
 * exchanges nothing. Sends run on the pipeline stream once the unit's compute
 * is done; the receiving unit's first task waits for the transfer. A word
 * embedding held by two stages, the first and the last (tied) or the
 * stage of the MTP layers (states_embedding_copy_stage), has its gradients
 * summed over the two at the end of the step.
 *
 * The plan's multi-token-prediction layers (mtp_num_layers, Megatron-Core's
 * --mtp-num-layers) follow the model's layers in its last chunk, or where
 * its layout puts them (plan.c places them); the pipeline checks that the
 * model has as many. */
#include "strategy/pipeline.h"

#include "layout/chunks.h"
#include "strategy/schedule.h"
#include "strategy/states.h"
#include "strategy/strategy.h"

static gboolean active(const PlanSpec *plan)
{
    (void)plan;
    return TRUE; /* every plan has a schedule, even on one stage */
}

static const PipeSchedule *schedule_of(const PlanSpec *plan)
{
    return pipeline_schedules[plan->schedule];
}

static gboolean check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    (void)model;
    return schedule_of(plan)->check(plan, error);
}

/* The MTP layers trained are the model's: Megatron-Core builds
 * mtp_num_layers of them, DeepSeek-V3's config has num_nextn_predict_layers. */
static gboolean check_model(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    if (plan->mtp_num_layers <= model->mtp_layers)
        return TRUE;
    if (model->mtp_layers == 0)
        return plan_field_fail(error, plan, PLAN_MTP_NUM_LAYERS,
                               "0: the model has no multi-token-prediction layers (a Hugging Face "
                               "config's num_nextn_predict_layers, a model file's mtp_layers)");
    return plan_field_fail(error, plan, PLAN_MTP_NUM_LAYERS,
                           "at most the model's %d multi-token-prediction layers", model->mtp_layers);
}

static void schedule(Emit *e, GArray *units)
{
    const PlanSpec *plan = emit_plan(e);
    StageWork w = schedule_stage_work(plan, emit_micro_batches(e), emit_stage(e));
    schedule_of(plan)->order(&w, units);
}

double pipeline_transfer_bytes(const ModelSpec *model, const PlanSpec *plan, Shard shard)
{
    return states_tensor_bytes(plan, TENSOR_ACTIVATION) * transformer_tokens(model, shard) *
           model->hidden_size / plan->tp;
}

static double transfer_bytes(const Emit *e)
{
    return pipeline_transfer_bytes(emit_model(e), emit_plan(e), emit_shard(e));
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

/* The direction of what goes from model chunk `from` to its neighbour `to`
 * (chunks_toward), or -1 where both are on one stage: the stage's stream
 * order carries it, nothing moves. */
static int direction(const PlanSpec *plan, int from, int to)
{
    int way = chunks_toward(plan, MIN(from, to)) * (to > from ? 1 : -1);
    return way == 0 ? -1 : way > 0 ? TOWARD_NEXT : TOWARD_PREV;
}

static void unit_begin(Emit *e, void *state, const Unit *u)
{
    (void)state;
    const PlanSpec *plan = emit_plan(e);
    int g = emit_model_chunk(e, u), last = chunks_count(plan) - 1, d;
    if (u->forward && g > 0 && (d = direction(plan, g - 1, g)) >= 0)
        emit_gate(e, emit_recv(e, (Direction)d, FLOW_ACTIVATIONS, transfer_bytes(e),
                               transfer_name(TRUE, u->micro_batch, g - 1)));
    if (unit_passes_gradients(u) && g < last && (d = direction(plan, g + 1, g)) >= 0)
        emit_gate(e, emit_recv(e, (Direction)d, FLOW_GRADIENTS, transfer_bytes(e),
                               transfer_name(FALSE, u->micro_batch, g + 1)));
}

static void unit_end(Emit *e, void *state, const Unit *u, TaskId done)
{
    (void)state;
    const PlanSpec *plan = emit_plan(e);
    int g = emit_model_chunk(e, u), last = chunks_count(plan) - 1, d;
    if (u->forward && g < last && (d = direction(plan, g, g + 1)) >= 0)
        emit_send(e, (Direction)d, FLOW_ACTIVATIONS, transfer_bytes(e), done,
                  transfer_name(TRUE, u->micro_batch, g));
    if (unit_passes_gradients(u) && g > 0 && (d = direction(plan, g, g - 1)) >= 0)
        emit_send(e, (Direction)d, FLOW_GRADIENTS, transfer_bytes(e), done,
                  transfer_name(FALSE, u->micro_batch, g));
}

/* With a tied output layer the first and the last stage each hold the
 * word embedding, and so do the first and the MTP layers' stage; after
 * backward they sum its gradients (Megatron-LM's embedding group, whose
 * name its comm lines take), an all-reduce of its gradients over the
 * two. */
static void step_end(Emit *e, void *state)
{
    (void)state;
    const ModelSpec *m = emit_model(e);
    const PlanSpec *plan = emit_plan(e);
    int s = emit_stage(e), copy = states_embedding_copy_stage(m, plan);
    if (copy < 0 || (s != 0 && s != copy))
        return;
    double bytes =
        states_tensor_bytes(plan, TENSOR_GRAD) * m->vocab_size * m->hidden_size / plan->tp;
    TaskId t = emit_ends_collective(e, copy, STREAM_COMM, COLL_ALL_REDUCE, bytes, TAG_EMBEDDING,
                                    (TaskName){.fmt = "embedding all_reduce"});
    emit_wait(e, emit_last(e, STREAM_COMPUTE), t);
}

/* Exposed pipeline transfers: fewer of them (fewer model chunks or
 * stages). */
static char *comm_advice(TaskTag tag, const PlanSpec *plan, const ClusterSpec *cluster)
{
    (void)cluster;
    if (tag != TAG_PP)
        return NULL;
    if (plan->virtual_stages > 1)
        return g_strdup_printf("fewer model chunks a stage (--virtual-stages %d: each sends its "
                               "activations on)",
                               plan->virtual_stages / 2);
    return g_strdup_printf("fewer pipeline stages (--pp %d), or stages on faster links",
                           MAX(plan->pp / 2, 1));
}

/* On one stage the naive schedule is 1F1B: each micro-batch's forward,
 * then its backward (1F1B warms up with pp - 1 - s = 0 forwards); so is
 * GPipe with one micro-batch, whose forwards are then that one. */
static void normalize(PlanSpec *plan, const ModelSpec *model)
{
    (void)model;
    if (plan->pp == 1 && (plan->schedule == SCHEDULE_NAIVE ||
                          (plan->schedule == SCHEDULE_GPIPE && plan_spec_micro_batches(plan) == 1)))
        plan->schedule = SCHEDULE_1F1B;
        /* a schedule's own field under another schedule: its default */
#define SCHEDULE(ID, name, row)
#define SCHEDULE_KNOB(ID, name, row, KNOB, member, flag, lo, hi, fallback, help)                   \
    if (plan->schedule != SCHEDULE_##ID)                                                           \
        plan->member = fallback;
#include "base/schedules.def"
#undef SCHEDULE_KNOB
#undef SCHEDULE
}

const Strategy strategy_pipeline = {
    .name = "pipeline",
    .active = active,
    .check = check,
    .check_model = check_model,
    .check_model_reads = PLAN_BIT(MTP_NUM_LAYERS),
    /* the batch's shape, and every schedule's own field (SCHEDULE_KNOB) */
    .check_reads = PLAN_BIT(TP) | PLAN_BIT(CP) | PLAN_BIT(PP) | PLAN_BIT(DP) |
                   PLAN_BIT(MICRO_BATCH_SIZE) | PLAN_BIT(GLOBAL_BATCH_SIZE) | PLAN_BIT(SCHEDULE) |
                   PLAN_BIT(VIRTUAL_STAGES)
#define SCHEDULE(ID, name, row)
#define SCHEDULE_KNOB(ID, name, row, KNOB, ...) | PLAN_BIT(KNOB)
#include "base/schedules.def"
#undef SCHEDULE_KNOB
#undef SCHEDULE
    ,
    .comm_advice = comm_advice,
    .schedule = schedule,
    .unit_begin = unit_begin,
    .unit_end = unit_end,
    .step_end = step_end,
    .normalize = normalize,
};
