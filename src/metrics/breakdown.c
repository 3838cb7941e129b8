/* breakdown.c: one micro-batch's compute on a pipeline stage, by kernel
 * class (breakdown.h). */
#include "metrics/breakdown.h"

#include "layout/chunks.h"
#include "strategy/estimate.h"
#include "strategy/recompute.h"

const char *const breakdown_class_names[] = {"gemm", "attention_forward", "attention_backward",
                                             "memory_bound", NULL};

/* Adds each operation of `ops` once, or its `backward` (Op.backward
 * runs of it), attention to `attention` (its forward or backward row);
 * `recompute` says the time is a replay's. */
static void add_ops(Breakdown *out, const GpuSpec *gpu, const OpList *ops, gboolean backward,
                    BreakdownClass attention, gboolean recompute)
{
    static const BreakdownClass rows[KERNEL_CLASSES] = {
        [KERNEL_GEMM] = BREAKDOWN_GEMM, [KERNEL_MEMORY] = BREAKDOWN_MEMORY};
    for (int i = 0; i < ops->n; i++) {
        const Op *op = &ops->ops[i];
        KernelClass k = transformer_op_class(op);
        BreakdownClass row = k == KERNEL_ATTENTION ? attention : rows[k];
        double one = transformer_op_s(gpu, op);
        double s = backward ? transformer_op_backward_s(gpu, op) : one;
        double times = s / one;
        out->seconds[row] += s;
        if (recompute)
            out->recompute_s += s;
        if (transformer_op_launches(op)) {
            out->kernels[row] += times;
            out->launch_s += times * gpu->launch_s;
        }
    }
}

/* The forward of `ops` and its backward. */
static void add_forward_backward(Breakdown *out, const GpuSpec *gpu, const OpList *ops)
{
    add_ops(out, gpu, ops, FALSE, BREAKDOWN_ATTENTION_FORWARD, FALSE);
    add_ops(out, gpu, ops, TRUE, BREAKDOWN_ATTENTION_BACKWARD, FALSE);
}

void breakdown_compute(const Step *step, int stage, Breakdown *out)
{
    const ModelSpec *model = step->model;
    const GpuSpec *gpu = &step->gpu;
    const PlanSpec *plan = step->plan;
    *out = (Breakdown){.stage = stage};
    Shard sh = step->shard;
    int chunks = chunks_count(plan);
    OpList ops;
    for (int k = 0; k < plan->virtual_stages; k++) {
        int g = chunks_of_stage(plan, stage, k);
        if (g == 0) {
            transformer_embedding_ops(model, sh, &ops);
            add_forward_backward(out, gpu, &ops);
        }
        int first = chunks_first_layer(plan, g);
        for (int layer = first; layer < first + chunks_layers(plan, g); layer++) {
            if (layer >= model->layers) { /* an MTP module's own operations */
                transformer_mtp_ops(model, sh, &ops);
                add_forward_backward(out, gpu, &ops);
            }
            for (int i = 0; i < transformer_layer_blocks(model, layer); i++) {
                Block block = transformer_layer_block(model, layer, i);
                transformer_block_ops(model, block, sh, &ops);
                add_forward_backward(out, gpu, &ops);
                /* the replay (recomputation), then FlashAttention's rest */
                OpList replay, rest;
                transformer_block_replay_split(model, block, sh,
                                               recompute_of_layer(plan, layer - first), &replay,
                                               &rest);
                add_ops(out, gpu, &replay, FALSE, BREAKDOWN_ATTENTION_BACKWARD, TRUE);
                add_ops(out, gpu, &rest, FALSE, BREAKDOWN_ATTENTION_BACKWARD, FALSE);
                if (block != BLOCK_MOE)
                    continue;
                /* the shared experts run apart (expert_parallel.c), and
                 * again in a full recomputation's replay */
                transformer_moe_apart_ops(model, sh, &ops);
                add_forward_backward(out, gpu, &ops);
                if (plan->recompute == RECOMPUTE_FULL)
                    add_ops(out, gpu, &ops, FALSE, BREAKDOWN_ATTENTION_BACKWARD, TRUE);
            }
        }
        if (g == chunks - 1) {
            transformer_head_ops(model, sh, &ops);
            add_forward_backward(out, gpu, &ops);
        }
    }
    out->optimizer_s = estimate_optimizer_s(step, stage);
}

double breakdown_micro_batch_s(const Breakdown *b)
{
    double s = 0;
    for (int c = 0; c < BREAKDOWN_CLASSES; c++)
        s += b->seconds[c];
    return s;
}
