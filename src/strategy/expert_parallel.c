/* expert_parallel.c: a mixture of experts' token routing across GPUs.
 *
 * Each MoE layer's experts are split over the ep GPUs of an expert-parallel
 * group (layout.h, GROUP_EP), and each expert over the etp GPUs of an
 * expert tensor-parallel group (--expert-tensor-parallel-size), carved from
 * a stage's tensor-, context- and data-parallel ranks as Megatron-Core
 * carves them (MoE parallel folding: with etp < tp, ep takes in the rest of
 * tp, and each GPU routes its share of its tp group's tokens). Around every MoE layer's MLP block
 * (BLOCK_MOE; a dense layer's BLOCK_MLP routes nothing) the group exchanges tokens on the compute
 * stream, which waits: the dispatch before the block, the combine after it, in forward and in a
 * full recomputation's replay; in backward the combine's gradient before and the dispatch's after
 * (Megatron-Core's token dispatchers). The router's GEMM, inside the block's compute, runs before
 * the dispatch in truth: the sum on the stream is the same. The routed experts' gradients reduce,
 * and ZeRO shards their states, over the expert-data-parallel group (data_parallel.c, zero.c).
 *
 * With moe_shared_expert_overlap (Megatron-Core's --moe-shared-expert-overlap: the shared experts
 * on a stream of their own while the token dispatcher's all-to-all runs) the exchange before the
 * block's compute runs on the rank's ep stream instead, from when the block's input is ready, and
 * the shared experts' compute (transformer_moe_apart_ops, which the block leaves out) runs beside
 * it on the compute stream; the routed experts wait for both. So the compute stream spends
 * max(shared, exchange) where it spent their sum, in forward (beside the dispatch), in a full
 * recomputation's replay, and in backward (beside the combine's gradient); a W (zero-bubble)
 * computes the shared experts' weight gradients, and exchanges nothing.
 *
 * With overlap_moe_expert_parallel_comm (Megatron-Core's combined 1F1B
 * overlap, --overlap-moe-expert-parallel-comm) the emitter walks a
 * schedule's forward and backward units next to each other as a pair, a
 * piece of one, then a piece of the other (emit_paired); each exchange of
 * a paired unit runs beside the compute, on the ep stream (the forward's)
 * or the ep backward stream (the backward's), from when its unit's input
 * to it is ready, and the unit's next compute waits for it: so the other
 * unit's compute runs while it moves. Unpaired units (warm-up, cool-down)
 * exchange on the compute stream as without it.
 * docs/model.md, "Mixture of experts". */
#include "net/netbound.h"
#include "strategy/schedule.h"
#include "strategy/strategy.h"

static gboolean active(const PlanSpec *plan)
{
    return plan->ep > 1;
}

static gboolean check_model(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    int ep = plan->ep;
    if (ep > 1 && !transformer_moe(model))
        return plan_field_fail(error, plan, PLAN_EP, "1 for a model without experts");
    if (plan_field_value(plan, PLAN_ETP) != plan->tp && !transformer_moe(model))
        return plan_field_fail(error, plan, PLAN_ETP, "tp's, %d, for a model without experts",
                               plan->tp);
    if (transformer_moe(model) && model->experts % ep != 0)
        return plan_field_fail(error, plan, PLAN_EP, "a divisor of the experts, %d",
                               model->experts);
    return TRUE;
}

/* The combined 1F1B overlap, as Megatron-Core's TransformerConfig checks
 * it (transformer_config.py): the alltoall or flex dispatcher, no full
 * recomputation, no shared-expert overlap, and with pp > 1 virtual
 * pipeline stages; and a schedule of forward and backward pairs, 1F1B's
 * (its combined_1f1b.py merges 1F1B's steady state). */
static gboolean check_overlap(const PlanSpec *plan, GError **error)
{
    PlanField f = PLAN_MOE_A2A_OVERLAP;
    if (plan->moe_dispatcher == MOE_DISPATCHER_ALL_GATHER)
        return plan_field_fail(error, plan, f, "false with the all_gather dispatcher "
                                               "(Megatron-Core overlaps alltoall and flex only)");
    if (plan->moe_shared_expert_overlap)
        return plan_field_fail(error, plan, f, "false with moe_shared_expert_overlap "
                                               "(Megatron-Core requires it off)");
    if (plan->recompute == RECOMPUTE_FULL)
        return plan_field_fail(error, plan, f, "false with full recomputation "
                                               "(Megatron-Core requires it off)");
    if (!pipeline_schedules[plan->schedule]->pairs)
        return plan_field_fail(error, plan, f,
                               "false with the %s schedule (its steady state has no forward "
                               "and backward pairs, as a 1F1B schedule's, to walk together)",
                               schedule_names[plan->schedule]);
    if (plan->pp > 1 && plan->virtual_stages == 1)
        return plan_field_fail(error, plan, f,
                               "false with pp > 1 and one model chunk a stage "
                               "(Megatron-Core needs virtual pipeline stages)");
    return TRUE;
}

/* Megatron-Core's expert grid (parallel_state.py) cuts a stage's tp x cp
 * x dp ranks into etp x ep x edp; plansim keeps the experts' split within
 * the tensor-parallel group (etp divides tp), whose all-gather before the
 * MLP block and reduce-scatter after it then gather the experts' tokens
 * and sum their partial outputs: etp needs no collective of its own. */
static gboolean check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    int ep = plan->ep, etp = layout_plan_size(plan, GROUP_ETP);
    int stage = plan->tp * layout_plan_size(plan, GROUP_DP_CP);
    (void)model;
    if (plan->tp % etp != 0)
        return plan_field_fail(error, plan, PLAN_ETP, "a divisor of tp = %d", plan->tp);
    if (stage / etp % ep != 0)
        return plan_field_fail(error, plan, PLAN_EP,
                               "a divisor of tp x cp x dp / expert-tensor-parallel-size = %d",
                               stage / etp);
    if (ep > 1 && plan->zero_stage > 0 && plan->offload == OFFLOAD_OPTIMIZER)
        return plan_field_fail(error, plan, PLAN_OFFLOAD,
                               "none or activations with ep > 1 and ZeRO (the host's shards of "
                               "the experts' optimizer states are not modelled)");
    return ep <= 1 || !plan->overlap_moe_expert_parallel_comm || check_overlap(plan, error);
}

/* The most of an expert group's ep ranks, etp apart in a stage's expert
 * grid (layout.h), on one node. */
static int ep_on_a_node(const ClusterSpec *cluster, const PlanSpec *plan)
{
    return layout_plan_most_on_a_node(cluster, plan, plan->ep, layout_plan_size(plan, GROUP_ETP));
}

/* The size of one token exchange of the plan (transformer_moe_dispatch_bytes),
 * with as many of its group's GPUs on a node as the layout puts there. */
static double exchange_bytes(const ModelSpec *m, Shard sh, const ClusterSpec *cluster,
                             const PlanSpec *plan)
{
    return transformer_moe_dispatch_bytes(m, sh, plan->moe_dispatcher,
                                          ep_on_a_node(cluster, plan));
}

typedef struct {
    OpsWork shared; /* the shared experts' work, with the overlap (else none) */
    double bytes;   /* the size of each exchange, the same all step (exchange_bytes) */
} EpState;

static int piece_tasks(const PlanSpec *plan)
{
    return plan->moe_shared_expert_overlap ? 3 : 2; /* a dispatch, the shared experts, a combine */
}

static void step_begin(Emit *e, void *state)
{
    OpList ops;
    ((EpState *)state)->bytes =
        exchange_bytes(emit_model(e), emit_shard(e), emit_cluster(e), emit_plan(e));
    transformer_moe_apart_ops(emit_model(e), emit_shard(e), &ops);
    ((EpState *)state)->shared = transformer_ops_work(emit_gpu(e), &ops);
}

/* Whether the shared experts run beside the exchange: the overlap asked
 * for, and shared experts to run (ep > 1 where the strategy is active;
 * transformer_shard leaves them in the block otherwise). */
static gboolean shared_apart(const PlanSpec *plan, const ModelSpec *model)
{
    return plan->moe_shared_expert_overlap && model->shared_experts > 0;
}

/* Whether units pair for the combined 1F1B overlap (emit_paired). */
static gboolean overlapped(const PlanSpec *plan)
{
    return plan->overlap_moe_expert_parallel_comm && plan->ep > 1;
}

/* The ep streams, only where exchanges run on them. */
static unsigned step_streams(const Step *step)
{
    if (overlapped(step->plan))
        return 1u << STREAM_EP | 1u << STREAM_EP_BACKWARD;
    return shared_apart(step->plan, step->model) ? 1u << STREAM_EP : 0;
}

/* Whether piece `p` is a whole MoE block (forward, replayed or backward). */
static gboolean moe_piece(const PieceRef *p)
{
    return p->segment->kind == SEGMENT_LAYER && p->block == BLOCK_MOE && !p->partial;
}

/* Whether piece `p` moves tokens: a MoE block's pass of the tokens'
 * routes, not a W of the weights'. */
static gboolean routes(const PieceRef *p)
{
    return moe_piece(p) && unit_passes(p->phase) != PASS_WEIGHT_GRAD;
}

/* The exchange before (`before`) or after the block's compute: the
 * dispatch (an all-to-all, the flex dispatcher's deduplicated one, or an
 * all-gather) where tokens go to their experts, the combine (the same, or
 * a reduce-scatter) where they come back; backward runs them in reverse,
 * each as its mirror. */
static TaskId exchange(Emit *e, const EpState *st, const PieceRef *p, gboolean before,
                       Stream stream)
{
    const PlanSpec *plan = emit_plan(e);
    gboolean backward = emit_piece_backward(p);
    gboolean to_experts = before != backward;
    gboolean all_to_all = plan->moe_dispatcher != MOE_DISPATCHER_ALL_GATHER;
    CollOp op = all_to_all ? COLL_ALL_TO_ALL : to_experts ? COLL_ALL_GATHER : COLL_REDUCE_SCATTER;
    static const char *const names[2][2] = {
        {"ep all_to_all combine mb%d L%d", "ep all_to_all dispatch mb%d L%d"},
        {"ep reduce_scatter combine mb%d L%d", "ep all_gather dispatch mb%d L%d"}};
    TaskName name = {
        .fmt = names[!all_to_all][to_experts], .a = p->micro_batch, .b = p->segment->layer};
    if (stream == STREAM_COMPUTE)
        return emit_collective(e, GROUP_EP, stream, op, st->bytes, TAG_EP, name);
    return emit_collective_beside(e, GROUP_EP, stream, op, st->bytes, TAG_EP, name);
}

/* A paired unit's exchanges' stream: its forward's or its backward's. */
static Stream paired_stream(const PieceRef *p)
{
    return emit_piece_backward(p) ? STREAM_EP_BACKWARD : STREAM_EP;
}

/* Paired (the combined 1F1B overlap), the exchange before the block beside
 * the other unit's compute, which the block's compute waits for. With the
 * shared-expert overlap, the exchange before the block on the ep stream
 * and the shared experts' pass beside it; the block's compute waits for
 * it. */
static void piece_begin(Emit *e, void *state, const PieceRef *p)
{
    static const TaskTag tags[PHASES] = {[PHASE_FORWARD] = TAG_FORWARD,
                                         [PHASE_RECOMPUTE] = TAG_RECOMPUTE,
                                         [PHASE_BACKWARD] = TAG_BACKWARD,
                                         [PHASE_INPUT_GRAD] = TAG_BACKWARD,
                                         [PHASE_WEIGHT_GRAD] = TAG_BACKWARD};
    static const char *const names[PHASES] = {[PHASE_FORWARD] = "fwd mb%d L%d shared",
                                              [PHASE_RECOMPUTE] = "fwd mb%d L%d shared",
                                              [PHASE_BACKWARD] = "bwd mb%d L%d shared",
                                              [PHASE_INPUT_GRAD] = "bwd mb%d L%d shared",
                                              [PHASE_WEIGHT_GRAD] = "wgrad mb%d L%d shared"};
    const EpState *st = state;
    if (emit_paired(e)) {
        if (routes(p))
            emit_gate(e, exchange(e, st, p, TRUE, paired_stream(p)));
        return;
    }
    if (!shared_apart(emit_plan(e), emit_model(e))) {
        if (routes(p))
            exchange(e, st, p, TRUE, STREAM_COMPUTE);
        return;
    }
    if (!moe_piece(p))
        return;
    TaskId x = routes(p) ? exchange(e, st, p, TRUE, STREAM_EP) : TASK_NONE;
    PassWork w = unit_work(unit_passes(p->phase), &st->shared, 1);
    emit_compute(e, w.seconds, w.flops, tags[p->phase],
                 (TaskName){.fmt = names[p->phase], .a = p->micro_batch, .b = p->segment->layer});
    emit_gate(e, x);
}

static void piece_end(Emit *e, void *state, const PieceRef *p, TaskId task)
{
    (void)task;
    if (routes(p) && emit_paired(e))
        emit_gate(e, exchange(e, state, p, FALSE, paired_stream(p)));
    else if (routes(p))
        exchange(e, state, p, FALSE, STREAM_COMPUTE);
}

/* A dense model routes no tokens: the experts' fields change nothing, and
 * take their defaults (plan_fields.def). An expert tensor-parallel size of
 * tp is the default's (0). With ep 1 no token leaves its GPU: the
 * dispatcher changes nothing either. */
static void normalize(PlanSpec *plan, const ModelSpec *model)
{
    if (plan_field_value(plan, PLAN_ETP) == plan->tp)
        plan->expert_tensor_parallel_size = 0;
    if (plan->ep <= 1 || model->shared_experts == 0) /* no exchange, or nothing beside it */
        plan->moe_shared_expert_overlap = FALSE;
    if (plan->ep <= 1) { /* nothing exchanged, nothing to overlap */
        plan->moe_dispatcher = MOE_DISPATCHER_ALL_TO_ALL;
        plan->overlap_moe_expert_parallel_comm = FALSE;
    }
    if (transformer_moe(model))
        return;
    plan->moe_capacity_percent = 0;
    plan->moe_imbalance_percent = 100;
    plan->moe_dispatcher = MOE_DISPATCHER_ALL_TO_ALL;
}

/* A lower bound of a token exchange of `bytes` a rank over the plan's ep
 * ranks, etp apart in a stage's expert grid (layout.h): the exchange's bound
 * (netbound_exchange_s), and for an all-to-all (its direct plan: bytes /
 * ep to every member) the bytes for ranks on other nodes (all but
 * layout_plan_most_on_a_node of them), which leave through the rank's NIC
 * (topology.c's paths), after its latency (across nodes when fewer than
 * ep are on one node: its members cannot all be). A ring's all-gather
 * crosses nodes through a few members only. */
static double exchange_bound_s(const ClusterSpec *cluster, const PlanSpec *plan, double bytes)
{
    int n = plan->ep, nics, here = ep_on_a_node(cluster, plan);
    double alone = netbound_exchange_s(cluster, bytes, n);
    if (plan->moe_dispatcher == MOE_DISPATCHER_ALL_GATHER)
        return alone;
    double latency_s = netbound_all_to_all_latency_s(cluster, n, here < n);
    if (alone == 0) /* it may be latency-bound (net.h): its latency alone */
        return latency_s;
    double across = bytes * (n - here) / n / netbound_nic_payload_Bps(cluster, &nics);
    return latency_s + MAX(alone, across);
}

/* A MoE block's dispatch and combine run on the compute stream in each
 * pass, and again in a full recomputation's replay: each at least its
 * exchange's bound; none with the combined 1F1B overlap, which may hide
 * them all. */
static BlockBound block_bound(const Step *step, Block block, const OpList *ops)
{
    (void)ops;
    if (block != BLOCK_MOE || overlapped(step->plan))
        return (BlockBound){0};
    const PlanSpec *plan = step->plan;
    double bytes = exchange_bytes(step->model, step->shard, step->cluster, plan);
    double exchanges_s = 2 * exchange_bound_s(step->cluster, plan, bytes);
    return (BlockBound){.forward_s = exchanges_s,
                        .backward_s = exchanges_s * (plan->recompute == RECOMPUTE_FULL ? 2 : 1)};
}

const Strategy strategy_expert_parallel = {
    .name = "expert_parallel",
    .active = active,
    .check_model = check_model,
    .check = check,
    .check_model_reads = PLAN_BIT(EP) | PLAN_BIT(ETP) | PLAN_BIT(TP),
    .check_reads = PLAN_BIT(TP) | PLAN_BIT(CP) | PLAN_BIT(PP) | PLAN_BIT(DP) | PLAN_BIT(EP) |
                   PLAN_BIT(ETP) | PLAN_BIT(ZERO_STAGE) | PLAN_BIT(OFFLOAD) |
                   PLAN_BIT(MOE_A2A_OVERLAP) | PLAN_BIT(MOE_DISPATCHER) |
                   PLAN_BIT(MOE_SHARED_EXPERT_OVERLAP) | PLAN_BIT(RECOMPUTE) |
                   PLAN_BIT(SCHEDULE) | PLAN_BIT(VIRTUAL_STAGES),
    .piece_tasks = piece_tasks,
    .state_size = sizeof(EpState),
    .step_streams = step_streams,
    .step_begin = step_begin,
    .piece_begin = piece_begin,
    .piece_end = piece_end,
    .normalize = normalize,
    .block_bound = block_bound,
};
