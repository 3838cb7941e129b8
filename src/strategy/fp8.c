/* fp8.c: FP8 training's amax reductions (docs/model.md, "Precision
 * recipes"), and the plan's fp8_recipe.
 *
 * Active when the linear layers' GEMMs run in fp8 with delayed scaling
 * (the other recipes scale from each tensor or block itself, on the GPU
 * that casts it: transformer.c's casts). Transformer Engine's
 * delayed scaling keeps, for every fp8 GEMM, the largest magnitude (amax)
 * of each tensor it casts, and reduces them to their maximum over the
 * ranks that must agree on the scales, once per pass: at the end of a
 * micro-batch's forward through a model chunk, the amaxes of each GEMM's
 * input, weight and output (3 fp32 values), and at the end of its backward
 * (the input gradients' pass, B, under a zero-bubble schedule), those of
 * the output and input gradients (2). It is one small all-reduce of all
 * of the chunk's amaxes, which the next compute waits for. Megatron-Core
 * reduces over the tensor-, data- and context-parallel ranks; plansim
 * over the data- and context-parallel group (GROUP_DP_CP), the tensor-
 * parallel ranks of a node adding one NVLink hop to a latency-bound
 * exchange. */
#include "strategy/strategy.h"

/* fp32 amaxes a fp8 GEMM reduces in its forward and its backward. */
enum { AMAX_FORWARD = 3, AMAX_BACKWARD = 2, AMAX_BYTES = 4 };

typedef struct {
    double gemms[TRANSFORMER_BLOCK_KINDS]; /* fp8 GEMMs of a block of each kind */
    double unit_gemms[2];         /* of the unit so far, a backward's [0] and a forward's [1]
                                   * (a pair of the combined 1F1B overlap walks one of each
                                   * together, emit_paired) */
} Fp8State;

static gboolean active(const PlanSpec *plan)
{
    return plan->dtype == DTYPE_FP8 && plan->fp8_recipe == FP8_RECIPE_DELAYED;
}

/* fp8_recipe scales fp8 only. */
static void normalize(PlanSpec *plan, const ModelSpec *model)
{
    (void)model;
    if (plan->dtype != DTYPE_FP8)
        plan->fp8_recipe = FP8_RECIPE_DELAYED;
}

static int piece_tasks(const PlanSpec *plan)
{
    (void)plan;
    return 1; /* a unit's reduction; a unit has a piece at least */
}

/* The FP8 GEMMs of `ops`. */
static int fp8_gemms(const OpList *ops)
{
    int n = 0;
    for (int i = 0; i < ops->n; i++)
        n += ops->ops[i].gemm && ops->ops[i].dtype == DTYPE_FP8;
    return n;
}

static void step_begin(Emit *e, void *state)
{
    Fp8State *st = state;
    OpList ops;
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++) {
        transformer_block_ops(emit_model(e), (Block)b, emit_shard(e), &ops);
        st->gemms[b] = fp8_gemms(&ops);
        if (b != BLOCK_MOE)
            continue;
        transformer_moe_apart_ops(emit_model(e), emit_shard(e), &ops); /* its shared experts */
        st->gemms[b] += fp8_gemms(&ops);
    }
}

static void unit_begin(Emit *e, void *state, const Unit *u)
{
    (void)e;
    ((Fp8State *)state)->unit_gemms[u->forward] = 0;
}

static void segment_end(Emit *e, void *state, const Unit *u, const Segment *seg, TaskId last)
{
    (void)last;
    Fp8State *st = state;
    if (seg->kind == SEGMENT_LAYER)
        for (int i = 0; i < transformer_layer_blocks(emit_model(e), seg->layer); i++)
            st->unit_gemms[u->forward] +=
                st->gemms[transformer_layer_block(emit_model(e), seg->layer, i)];
}

static void unit_end(Emit *e, void *state, const Unit *u, TaskId last)
{
    const Fp8State *st = state;
    double gemms = st->unit_gemms[u->forward];
    if (gemms == 0 || !(u->forward || unit_passes_gradients(u)))
        return;
    double bytes = gemms * (u->forward ? AMAX_FORWARD : AMAX_BACKWARD) * AMAX_BYTES;
    TaskName name = {.fmt = u->forward ? "fwd mb%d c%d amax" : "bwd mb%d c%d amax",
                     .a = u->micro_batch,
                     .b = u->chunk};
    TaskId c = emit_collective(e, GROUP_DP_CP, STREAM_TP, COLL_ALL_REDUCE, bytes, TAG_AMAX, name);
    emit_wait(e, last, c);
    emit_gate(e, c);
}

const Strategy strategy_fp8 = {
    .name = "fp8",
    .active = active,
    .normalize = normalize,
    .piece_tasks = piece_tasks,
    .state_size = sizeof(Fp8State),
    .step_begin = step_begin,
    .unit_begin = unit_begin,
    .segment_end = segment_end,
    .unit_end = unit_end,
};
