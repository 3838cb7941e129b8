/* zero.c: ZeRO (Rajbhandari et al., SC'20) stages 1 to 3; stage 3 is FSDP.
 *
 * Model states are sharded over the data-parallel group of d ranks, with
 * its context-parallel ranks d x c (Megatron-Core's distributed optimizer):
 * stage 1 the optimizer states, stage 2 also the gradients, stage 3 also
 * the parameters; with ep > 1 the routed experts' states over the
 * expert-data-parallel group instead, d x c / ep ranks (Megatron-Core
 * builds a separate distributed optimizer for the expert parameters over
 * that group). emit.c allocates them by states_bytes (states.h). The gradient
 * reduce-scatter is data parallelism's (data_parallel.c). Here, each
 * all-gather split the same way, experts over the expert-data-parallel
 * group (names "zero expert ..."), the rest over the data-parallel one:
 *   - stages 1 and 2: an all-gather of the updated bf16 parameters, so
 *     every rank has them all again. With overlap_param_gather (Megatron-
 *     LM's --overlap-param-gather) each segment's is issued when the
 *     optimizer step ends and waited for by its first forward of the next
 *     step; the replay is of a step in the steady state, so it issues them
 *     at its start, on the communication stream in the order the forward
 *     uses them, and gates each segment's first forward on its own.
 *     Without it, one all-gather of them all after the optimizer step;
 *   - stage 3: before each segment's forward and backward (its B under a zero-bubble
 *     schedule: a W needs no parameters), an all-gather
 *     of its parameters on the communication stream, the segment's compute
 *     waiting for it. The gather of the next segment is issued one segment
 *     ahead (it waits only for the end of the segment before this one), so
 *     it runs while this one computes and at most two gathered copies live
 *     at once; each is a buffer from its gather's start to its segment's
 *     end.
 * With fp8_param_gather (Megatron-Core's --fp8-param-gather, Transformer
 * Engine's FP8 parameters) the layers' parameters are held and gathered in
 * fp8, 1 byte each (states_param_bytes); the embedding and the head stay
 * bf16. With reuse_grad_buf_for_mxfp8_param_ag (stage 1, mxfp8) the
 * distributed optimizer gathers them in the gradient buffer instead, in
 * its type, and casts them to mxfp8 as it copies them out
 * (states_gather_bytes): the cast, about 4 bytes of memory traffic a
 * parameter once a step, is left out.
 * Per step and GPU, in parameter elements: stages 1 and 2 move 2 Psi
 * (reduce-scatter and all-gather), stage 3 3 Psi per micro-batch (two
 * gathers and a reduce-scatter). The model states' bytes per parameter and
 * their split are states.h's, whether or not the plan uses ZeRO. */
#include "strategy/states.h"
#include "net/netbound.h"
#include "strategy/strategy.h"

typedef struct {
    const Segment *ahead; /* the segment gathered ahead, or NULL */
    TaskId ahead_task;    /* its gather */
    TaskId prev_end;      /* the last compute of the segment before */
} ZeroState;

static gboolean active(const PlanSpec *plan)
{
    return plan->zero_stage > 0;
}

/* fp8_param_gather holds fp8 (or mxfp8) parameters, and gathers them: it
 * needs such GEMMs and a ZeRO stage (Megatron-Core's distributed
 * optimizer). nvfp4's own, --fp4-param-gather, is not modelled. Gathering
 * mxfp8 parameters in the gradient buffer needs them, and the distributed
 * optimizer's buffers (stage 1). */
static gboolean check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    (void)model;
    gboolean fp8 = plan->dtype == DTYPE_FP8 || plan->dtype == DTYPE_MXFP8;
    if (plan->fp8_param_gather && (!fp8 || plan->zero_stage == 0))
        return plan_field_fail(error, plan, PLAN_FP8_PARAM_GATHER,
                               "false unless dtype is fp8 or mxfp8 and zero_stage at least 1 (got "
                               "dtype %s, zero_stage %d)",
                               dtype_names[plan->dtype], plan->zero_stage);
    if (plan->reuse_grad_buf_for_mxfp8_param_ag &&
        (plan->dtype != DTYPE_MXFP8 || !plan->fp8_param_gather || plan->zero_stage != 1))
        return plan_field_fail(error, plan, PLAN_REUSE_GRAD_BUF,
                               "false unless dtype is mxfp8 with fp8_param_gather and zero_stage "
                               "1 (got dtype %s, fp8_param_gather %s, zero_stage %d)",
                               dtype_names[plan->dtype], plan->fp8_param_gather ? "true" : "false",
                               plan->zero_stage);
    return TRUE;
}

/* Stages 1 and 2 with overlap_param_gather: whether the parameters are
 * gathered segment by segment at the step's start. */
static gboolean gathers_ahead(const PlanSpec *plan)
{
    return plan->zero_stage >= 1 && plan->zero_stage <= 2 && plan->overlap_param_gather;
}

static int piece_tasks(const PlanSpec *plan)
{
    /* per segment, a gather, and with ep > 1 one of the experts */
    return plan->zero_stage == 3 || gathers_ahead(plan) ? 1 + (plan->ep > 1) : 0;
}

/* A stage over one rank (dp x cp = 1: the experts' group is one rank too)
 * shards nothing and gathers nothing: ZeRO-0, unless fp8_param_gather
 * keeps the parameters in fp8. The gathers' timing matters only where
 * there are gathers of the updated parameters: stages 1 and 2 over more
 * than one rank. */
static void normalize(PlanSpec *plan, const ModelSpec *model)
{
    (void)model;
    if (layout_plan_size(plan, GROUP_DP_CP) == 1 && !plan->fp8_param_gather)
        plan->zero_stage = 0;
    if (plan->zero_stage == 0 || plan->zero_stage == 3)
        plan->overlap_param_gather = TRUE;
}

static void step_begin(Emit *e, void *state)
{
    ZeroState *st = state;
    (void)e;
    st->ahead_task = TASK_NONE;
    st->prev_end = TASK_NONE;
}

/* All-gathers of `params` parameters' values, after `after`, named
 * names[0] and names[1] with `name`'s numbers: `experts` of them over the
 * expert-data-parallel group, the rest over the data-parallel one; `dense`
 * bytes and `per` bytes a parameter of the experts. Sets *first, unless
 * NULL, to the first gather; returns the last, which the communication
 * stream ends last (TASK_NONE for a group of one). */
static TaskId gather_params(Emit *e, double dense, double experts, double per, TaskId after,
                            const char *const names[2], TaskName name, TaskId *first)
{
    name.fmt = names[0];
    TaskId t = emit_collective(e, GROUP_DP_CP, STREAM_COMM, COLL_ALL_GATHER, dense, TAG_ZERO, name);
    emit_wait(e, after, t);
    if (first)
        *first = t;
    if (experts == 0)
        return t;
    name.fmt = names[1];
    TaskId x =
        emit_collective(e, GROUP_EDP, STREAM_COMM, COLL_ALL_GATHER, per * experts, TAG_ZERO, name);
    emit_wait(e, after, x);
    return x != TASK_NONE ? x : t;
}

/* Segment `seg`'s gathers of `params` of its parameters, after `after`:
 * at states_gather_bytes each, the experts' apart. */
static TaskId gather_segment(Emit *e, const Segment *seg, double params, TaskId after,
                             const char *const names[2], TaskName name, TaskId *first)
{
    double per = states_gather_bytes(emit_plan(e), seg->kind);
    return gather_params(e, per * (params - seg->expert_params), seg->expert_params, per, after,
                         names, name, first);
}

/* Segment `seg`'s gathers for unit `u`, after `after`: the parameters its
 * compute needs whole, a buffer from the first gather's start. The task
 * its compute waits for. */
static TaskId gather(Emit *e, const Unit *u, const Segment *seg, TaskId after)
{
    static const char *const names[][2] = {
        [SEGMENT_EMBEDDING] = {"zero all_gather mb%d embedding", NULL},
        [SEGMENT_LAYER] = {"zero all_gather mb%d L%d", "zero expert all_gather mb%d L%d"},
        [SEGMENT_MTP] = {"zero all_gather mb%d L%d mtp", NULL},
        [SEGMENT_HEAD] = {"zero all_gather mb%d head", NULL},
    };
    TaskId first;
    TaskId t = gather_segment(e, seg, seg->uses, after, names[seg->kind],
                              (TaskName){.a = u->micro_batch, .b = seg->layer}, &first);
    emit_mem(e, first, MEM_BUFFERS, states_param_bytes(emit_plan(e), seg->kind) * seg->uses, FALSE);
    return t;
}

/* Whether unit `u` computes with the parameters: a forward, or a backward
 * that makes the input gradients (dX = dY W^T); a W (dW = X^T dY, a
 * zero-bubble schedule's) needs none, and ZeRO-3 gathers nothing for it. */
static gboolean uses_params(const Unit *u)
{
    return u->forward || unit_passes_gradients(u);
}

static void segment_begin(Emit *e, void *state, const Unit *u, const Segment *seg)
{
    static const char *const ahead[][2] = {
        [SEGMENT_EMBEDDING] = {"zero all_gather embedding", NULL},
        [SEGMENT_LAYER] = {"zero all_gather L%d", "zero expert all_gather L%d"},
        [SEGMENT_MTP] = {"zero all_gather L%d mtp", NULL},
        [SEGMENT_HEAD] = {"zero all_gather head", NULL},
    };
    ZeroState *st = state;
    if (gathers_ahead(emit_plan(e)) && u->forward && u->micro_batch == 0)
        emit_gate(e, gather_segment(e, seg, seg->params, TASK_NONE, ahead[seg->kind],
                                    (TaskName){.a = seg->layer}, NULL));
    if (emit_plan(e)->zero_stage < 3 || !uses_params(u))
        return;
    TaskId mine = st->ahead == seg ? st->ahead_task : gather(e, u, seg, TASK_NONE);
    emit_gate(e, mine);
    const Segment *next = emit_segment_next(e, u, seg);
    st->ahead = next;
    st->ahead_task = next ? gather(e, u, next, st->prev_end) : TASK_NONE;
}

static void segment_end(Emit *e, void *state, const Unit *u, const Segment *seg, TaskId last)
{
    ZeroState *st = state;
    if (emit_plan(e)->zero_stage < 3 || !uses_params(u))
        return;
    if (layout_plan_size(emit_plan(e), GROUP_DP_CP) > 1)
        emit_mem(e, last, MEM_BUFFERS, -states_param_bytes(emit_plan(e), seg->kind) * seg->uses,
                 TRUE);
    st->prev_end = last;
}

static void after_optimizer(Emit *e, void *state, TaskId optimizer)
{
    static const char *const names[2] = {"zero all_gather params", "zero expert all_gather params"};
    (void)state;
    if (emit_plan(e)->zero_stage >= 3 || gathers_ahead(emit_plan(e)))
        return; /* parameters stay sharded, or were gathered ahead */
    const PlanSpec *plan = emit_plan(e);
    double layer = states_gather_bytes(plan, SEGMENT_LAYER),
           other = states_gather_bytes(plan, SEGMENT_HEAD);
    double experts = emit_expert_params(e), layers = emit_layer_params(e);
    gather_params(e, layer * (layers - experts) + other * (emit_params(e) - layers), experts, layer,
                  optimizer, names, (TaskName){0}, NULL);
}

/* Exposed ZeRO gathers: overlap them, else a lower stage. */
static char *comm_advice(TaskTag tag, const PlanSpec *plan, const ClusterSpec *cluster)
{
    (void)cluster;
    if (tag != TAG_ZERO)
        return NULL;
    if (plan->zero_stage == 3)
        return g_strdup("ZeRO-1 or 2 if memory allows (--zero-stage 2: ZeRO-3 gathers every "
                        "layer's parameters in forward and backward)");
    if (!plan->overlap_param_gather)
        return g_strdup("overlap the parameter gather with the next forward "
                        "(--overlap-param-gather)");
    return g_strdup_printf("a lower ZeRO stage if memory allows (--zero-stage %d)",
                           plan->zero_stage - 1);
}

/* The gathers of `seg`'s parameters in a step, over dp x cp and the
 * experts' over expert data parallel: ZeRO-1 and 2 gather the updated
 * parameters once, ZeRO-3 each segment's for every forward and every
 * backward that makes input gradients, 2 m of them. */
static void segment_comm_bytes(const PlanSpec *plan, const Segment *seg, double bytes[2])
{
    double times = plan->zero_stage == 3 ? 2.0 * plan_spec_micro_batches(plan) : 1;
    double per = states_gather_bytes(plan, seg->kind);
    double gathered = plan->zero_stage == 3 ? seg->uses : seg->params;
    bytes[0] += netbound_loaded_bytes(times, per * (gathered - seg->expert_params),
                                      layout_plan_size(plan, GROUP_DP_CP));
    bytes[1] += netbound_loaded_bytes(times, per * seg->expert_params,
                                      layout_plan_size(plan, GROUP_EDP));
}

/* ZeRO's split of the model states over the ranks that hold the same
 * parameters, d = dp x cp, and of the routed experts' over expert data
 * parallel: stage 1 the optimizer's, stage 2 also the gradients, stage 3
 * also the parameters (Rajbhandari et al. 2020, section 5). */
static void states(const PlanSpec *plan, StatesRule *rule)
{
    static const MemKind split_from[] = {MEM_OPTIMIZER, MEM_GRADS, MEM_PARAMS}; /* stage 1, 2, 3 */
    for (int stage = 1; stage <= plan->zero_stage && stage <= 3; stage++) {
        rule->shards[split_from[stage - 1]] = layout_plan_size(plan, GROUP_DP_CP);
        rule->expert_shards[split_from[stage - 1]] = layout_plan_size(plan, GROUP_EDP);
    }
}

const Strategy strategy_zero = {
    .name = "zero",
    .active = active,
    .check = check,
    .check_reads = PLAN_BIT(FP8_PARAM_GATHER) | PLAN_BIT(REUSE_GRAD_BUF) | PLAN_BIT(DTYPE) |
                   PLAN_BIT(ZERO_STAGE),
    .comm_advice = comm_advice,
    .piece_tasks = piece_tasks,
    .state_size = sizeof(ZeroState),
    .states = states,
    .step_begin = step_begin,
    .segment_begin = segment_begin,
    .segment_end = segment_end,
    .after_optimizer = after_optimizer,
    .normalize = normalize,
    .segment_comm_bytes = segment_comm_bytes,
};
