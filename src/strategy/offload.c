/* offload.c: host memory for the GPU's: ZeRO-Offload's optimizer, or
 * chosen layers' activations, copied down after their forward and
 * prefetched back for their backward (offload.h). */
#include "strategy/offload.h"

#include "layout/chunks.h"
#include "strategy/schedule.h"
#include "strategy/strategy.h"
#include "strategy/states.h"

/* The parameters of the optimizer shard of a rank holding `params`. */
static double shard_params(const StatesRule *rule, double params)
{
    return params / rule->shards[MEM_OPTIMIZER];
}

double offload_pcie_bytes_per_param(const PlanSpec *plan)
{
    return states_tensor_bytes(plan, TENSOR_PARAM);
}

int offload_chunk_layers(const PlanSpec *plan, int g)
{
    if (plan->offload != OFFLOAD_ACTIVATIONS)
        return 0;
    int n = chunks_layers(plan, g); /* 0 for a chunk of the embedding or the head alone */
    return plan->offload_layers > 0 ? MIN(plan->offload_layers, n) : MAX(n - 1, 0);
}

/* A_l, whether offloaded or not: it depends only on the layer's kind
 * (transformer_layer_kind). */
static double layer_activation_bytes(const ModelSpec *model, const PlanSpec *plan, int layer)
{
    double bytes = 0;
    for (int i = 0; i < transformer_layer_blocks(model, layer); i++)
        bytes += transformer_block_activation_bytes(model, transformer_layer_block(model, layer, i),
                                                    transformer_shard(plan), plan->recompute);
    return bytes;
}

double offload_layer_bytes(const ModelSpec *model, const PlanSpec *plan, int layer)
{
    if (plan->offload != OFFLOAD_ACTIVATIONS)
        return 0;
    int g = chunks_of_layer(plan, layer);
    return layer - chunks_first_layer(plan, g) < offload_chunk_layers(plan, g) ? layer_activation_bytes(model, plan, layer)
                                                        : 0;
}

/* A_l of each layer kind, made when first asked for. */
typedef struct {
    double bytes[TRANSFORMER_LAYER_KINDS];
    gboolean made[TRANSFORMER_LAYER_KINDS];
} KindBytes;

/* offload_chunk_bytes, the kinds' A_l from `kinds`. */
static double chunk_bytes(const ModelSpec *model, const PlanSpec *plan, int g, KindBytes *kinds)
{
    if (plan->offload != OFFLOAD_ACTIVATIONS)
        return 0;
    int from = chunks_first_layer(plan, g);
    double bytes = 0;
    for (int l = from; l < from + offload_chunk_layers(plan, g); l++) {
        int k = transformer_layer_kind(model, l);
        if (!kinds->made[k])
            kinds->bytes[k] = layer_activation_bytes(model, plan, l);
        kinds->made[k] = TRUE;
        bytes += kinds->bytes[k];
    }
    return bytes;
}

double offload_chunk_bytes(const ModelSpec *model, const PlanSpec *plan, int g)
{
    return chunk_bytes(model, plan, g, &(KindBytes){.made = {FALSE}});
}

/* ZeRO-Offload on a rank of stage `stage`: the least a copy of its
 * optimizer shard's parameters (or gradients) takes over the host link,
 * and the host's Adam step over the shard (step_end). */
typedef struct {
    double copy_s, adam_s;
} ShardHost;

static ShardHost shard_host(const Step *step, int stage)
{
    double params = states_stage_params_of(step->model, step->plan, stage).params;
    return (ShardHost){.copy_s = offload_pcie_bytes_per_param(step->plan) *
                                 shard_params(&step->states, params) / step->gpu.pcie_Bps,
                       .adam_s = offload_cpu_adam_s(step->cluster, &step->states, params)};
}

double offload_stream_s(const Step *step, int stage)
{
    const PlanSpec *plan = step->plan;
    double pcie_Bps = step->gpu.pcie_Bps;
    if (plan->offload == OFFLOAD_NONE || pcie_Bps <= 0)
        return 0;
    if (plan->offload == OFFLOAD_OPTIMIZER) { /* down, the Adam step, up */
        ShardHost h = shard_host(step, stage);
        return 2 * h.copy_s + h.adam_s;
    }
    double bytes = 0; /* a micro-batch's, each copied down and up */
    KindBytes kinds = {.made = {FALSE}};
    for (int c = 0; c < plan->virtual_stages; c++)
        bytes += chunk_bytes(step->model, plan, chunks_of_stage(plan, stage, c), &kinds);
    return 2 * bytes * step->micro_batches / pcie_Bps;
}

/* The most offloaded activations a rank of stage `stage` keeps on the host
 * (offload.h, offload_host_bytes). */
static double host_activation_bytes(const ModelSpec *model, const PlanSpec *plan, int stage)
{
    g_autofree double *chunk = g_new0(double, plan->virtual_stages);
    KindBytes kinds = {.made = {FALSE}};
    for (int c = 0; c < plan->virtual_stages; c++)
        chunk[c] = chunk_bytes(model, plan, chunks_of_stage(plan, stage, c), &kinds);
    return schedule_stage_held(plan, stage, chunk);
}

double offload_host_bytes(const Step *step, int stage)
{
    const ModelSpec *model = step->model;
    const PlanSpec *plan = step->plan;
    switch (plan->offload) {
    case OFFLOAD_OPTIMIZER:
        return (transformer_optimizer_state_bytes(plan->optimizer_states) +
                offload_pcie_bytes_per_param(plan)) *
               shard_params(&step->states, states_stage_params_of(model, plan, stage).params);
    case OFFLOAD_ACTIVATIONS:
        return host_activation_bytes(model, plan, stage);
    case OFFLOAD_NONE:
        break;
    }
    return 0;
}

double offload_cpu_adam_s(const ClusterSpec *cluster, const StatesRule *rule, double params)
{
    return shard_params(rule, params) * cluster->gpus_per_node / cluster->cpu_adam_params_s;
}

static gboolean active(const PlanSpec *plan)
{
    return plan->offload != OFFLOAD_NONE;
}

/* offload_layers needs offload activations and leaves each model chunk's
 * last layer on the GPU (Megatron-Core: cpu_offloading_num_layers below
 * the layers); recomputation is refused with it, as Megatron-Core's
 * TransformerConfig refuses cpu_offloading with recompute_granularity. */
static gboolean check(const PlanSpec *plan, const ModelSpec *model, GError **error)
{
    (void)model;
    if (plan->offload_layers > 0 && plan->offload != OFFLOAD_ACTIVATIONS)
        return plan_field_fail(error, plan, PLAN_OFFLOAD_LAYERS, "0 without offload activations");
    if (plan->offload != OFFLOAD_ACTIVATIONS)
        return TRUE;
    if (plan->recompute != RECOMPUTE_NONE)
        return plan_field_fail(error, plan, PLAN_RECOMPUTE,
                               "none with offload activations (Megatron-Core refuses CPU "
                               "offloading with recomputation)");
    if (!plan->layers_per_stage.v)
        return TRUE; /* a sweep's walk, before the layers are split: checked once they are */
    int fewest = G_MAXINT; /* of the chunks that hold layers */
    for (int g = 0; g < chunks_count(plan); g++)
        if (chunks_layers(plan, g) > 0)
            fewest = MIN(fewest, chunks_layers(plan, g));
    if (plan->offload_layers > fewest - 1)
        return plan_field_fail(error, plan, PLAN_OFFLOAD_LAYERS,
                               "at most the layers of a model chunk less one, %d", fewest - 1);
    return TRUE;
}

static int piece_tasks(const PlanSpec *plan)
{
    return plan->offload == OFFLOAD_ACTIVATIONS; /* a copy per layer, down or up: 2 pieces */
}

/* Per rank: the prefetch of the layer whose backward comes next. */
typedef struct {
    TaskId up;
} OffloadState;

static void step_begin(Emit *e, void *state)
{
    (void)e;
    ((OffloadState *)state)->up = TASK_NONE;
}

/* The host's work of `seconds` on the offload stream, after `after`. */
static TaskId offload_task(Emit *e, double seconds, TaskId after, TaskName name)
{
    TaskId t = emit_background(e, STREAM_OFFLOAD, seconds, TAG_OFFLOAD, name);
    emit_wait(e, after, t);
    return t;
}

/* A copy of `bytes` over the host path on the offload stream, up (to the
 * GPU) or down, after `after`. */
static TaskId offload_copy(Emit *e, double bytes, gboolean up, TaskId after, TaskName name)
{
    TaskId t = emit_copy(e, STREAM_OFFLOAD, bytes, up, TAG_OFFLOAD, name);
    emit_wait(e, after, t);
    return t;
}

/* A copy of the bf16 shard of `params` parameters, up or down, after
 * `after`. */
static TaskId transfer(Emit *e, double params, gboolean up, TaskId after, const char *name)
{
    double bytes =
        offload_pcie_bytes_per_param(emit_plan(e)) * shard_params(emit_states(e), params);
    return offload_copy(e, bytes, up, after, (TaskName){.fmt = name});
}

/* A copy of layer `layer`'s A_l for micro-batch `mb`, after `after`;
 * the activations are freed when a copy down ends, allocated when a copy
 * up starts. TASK_NONE for a layer not offloaded. */
static TaskId copy_activations(Emit *e, int layer, int mb, gboolean down, TaskId after)
{
    double bytes = offload_layer_bytes(emit_model(e), emit_plan(e), layer);
    if (bytes == 0)
        return TASK_NONE;
    TaskName name = {
        .fmt = down ? "offload act down mb%d L%d" : "offload act up mb%d L%d", .a = mb, .b = layer};
    TaskId t = offload_copy(e, bytes, !down, after, name);
    emit_mem(e, t, MEM_ACTIVATIONS, down ? -bytes : bytes, down);
    return t;
}

/* Before a layer's backward (a whole one or its B): the next compute task
 * waits for the layer's prefetch, and the prefetch of the layer below
 * starts once the compute before this backward has ended. */
static void segment_begin(Emit *e, void *state, const Unit *u, const Segment *seg)
{
    OffloadState *st = state;
    if (!unit_passes_gradients(u) || seg->kind != SEGMENT_LAYER)
        return;
    if (offload_layer_bytes(emit_model(e), emit_plan(e), seg->layer) > 0)
        emit_gate(e, st->up);
    if (seg->layer > 0)
        st->up = copy_activations(e, seg->layer - 1, u->micro_batch, FALSE,
                                  emit_unit_last(e));
}

/* Offload optimizer: the last micro-batch's backward sends each segment's
 * gradient shard down once the segment has produced it and the reductions
 * launched so far have ended. Offload activations: a layer's forward sends
 * its activations down when it ends. */
static void segment_end(Emit *e, void *state, const Unit *u, const Segment *seg, TaskId last)
{
    (void)state;
    if (emit_plan(e)->offload == OFFLOAD_ACTIVATIONS) {
        if (u->forward && seg->kind == SEGMENT_LAYER)
            copy_activations(e, seg->layer, u->micro_batch, TRUE, last);
        return;
    }
    if (u->forward || u->micro_batch != emit_micro_batches(e) - 1)
        return;
    TaskId down = transfer(e, seg->params, FALSE, last, "offload grads down");
    emit_wait(e, emit_last(e, STREAM_COMM), down);
}

/* Offload optimizer: the host's Adam step after the last gradients came
 * down, then the parameters up; the GPU's optimizer step (next on the
 * compute stream) waits for them. */
static void step_end(Emit *e, void *state)
{
    (void)state;
    if (emit_plan(e)->offload != OFFLOAD_OPTIMIZER)
        return;
    double adam_s = offload_cpu_adam_s(emit_cluster(e), emit_states(e), emit_params(e));
    TaskId adam =
        offload_task(e, adam_s, emit_last(e, STREAM_COMM), (TaskName){.fmt = "offload cpu adam"});
    emit_gate(e, transfer(e, emit_params(e), TRUE, adam, "offload params up"));
}

/* Offload optimizer: the host's Adam step, then the parameters' copy up,
 * one after the other on the offload stream, after the last copy of
 * gradients down (which waits for the last unit's compute) and the
 * stream's last reduction (step_end); the GPU's optimizer step waits for
 * the copy. */
static double tail_s(const Step *step, int stage)
{
    if (step->plan->offload != OFFLOAD_OPTIMIZER || step->gpu.pcie_Bps <= 0)
        return 0;
    ShardHost h = shard_host(step, stage);
    return h.adam_s + h.copy_s;
}

/* Layer `layer`'s backward waits for its activations' copy up, which the
 * next layer's backward starts (segment_begin): A_l over the host link. */
static double prefetch_s(const Step *step, int layer)
{
    double pcie_Bps = step->gpu.pcie_Bps;
    return pcie_Bps > 0 ? offload_layer_bytes(step->model, step->plan, layer) / pcie_Bps : 0;
}

/* The offloaded layers' activations leave once copied down. */
static double released_bytes(const Step *step, int chunk)
{
    return offload_chunk_bytes(step->model, step->plan, chunk);
}

/* ZeRO-Offload's optimizer states live in the host's memory: none on the
 * GPU, and no optimizer step there (the host's, offload_cpu_adam_s). */
static void states(const PlanSpec *plan, StatesRule *rule)
{
    if (plan->offload == OFFLOAD_OPTIMIZER)
        rule->bytes_per_param[MEM_OPTIMIZER] = 0;
}

const Strategy strategy_offload = {
    .name = "offload",
    .active = active,
    .check = check,
    .check_reads = PLAN_BIT(OFFLOAD) | PLAN_BIT(OFFLOAD_LAYERS) | PLAN_BIT(RECOMPUTE) |
                   PLAN_BIT(LAYERS_PER_STAGE),
    .piece_tasks = piece_tasks,
    .state_size = sizeof(OffloadState),
    .streams = 1u << STREAM_OFFLOAD,
    .states = states,
    .step_begin = step_begin,
    .segment_begin = segment_begin,
    .segment_end = segment_end,
    .step_end = step_end,
    .stream_bound_s = offload_stream_s,
    .tail_s = tail_s,
    .prefetch_s = prefetch_s,
    .released_bytes = released_bytes,
};
