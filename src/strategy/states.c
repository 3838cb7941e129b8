/* states.c: the model states (states.h): segments' parameters, bytes per
 * parameter and element, and their ZeRO split. */
#include "strategy/states.h"

#include "layout/chunks.h"

/* fp32 gradients' bytes an element */
#define FP32_BYTES 4

double states_tensor_bytes(const PlanSpec *plan, Tensor t)
{
    switch (t) {
    case TENSOR_LAYER_PARAM:
        return plan->fp8_param_gather ? dtype_bytes(plan->dtype) + dtype_scale_bytes(plan->dtype)
                                      : dtype_bytes(DTYPE_BF16);
    case TENSOR_GRAD:
        return plan->grad_accum_dtype == GRAD_ACCUM_FP32 ? FP32_BYTES : dtype_bytes(DTYPE_BF16);
    case TENSOR_ACTIVATION:
    case TENSOR_PARAM:
        break;
    }
    return dtype_bytes(DTYPE_BF16);
}

int states_embedding_copy_stage(const ModelSpec *model, const PlanSpec *plan)
{
    if (plan->pp == 1)
        return -1;
    int stage = model->tied_embeddings ? chunks_stage(plan, chunks_count(plan) - 1)
                : plan->mtp_num_layers > 0
                    ? chunks_stage(plan, chunks_of_layer(plan, model->layers))
                    : 0;
    return stage > 0 ? stage : -1;
}

Segment states_segment(const ModelSpec *model, const PlanSpec *plan, SegmentKind kind, int layer)
{
    int tp = plan->tp;
    double vocab = (double)model->vocab_size * model->hidden_size / tp;
    double words = model->tied_embeddings ? vocab : 0;
    switch (kind) {
    case SEGMENT_EMBEDDING: {
        double p = transformer_embedding_params(model, tp);
        return (Segment){.kind = kind, .layer = -1, .params = p, .uses = p};
    }
    case SEGMENT_LAYER: {
        double p = transformer_layer_params_at(model, layer, tp, layout_plan_size(plan, GROUP_ETP),
                                               plan->ep);
        return (Segment){.kind = kind,
                         .layer = layer,
                         .params = p,
                         .uses = p,
                         .expert_params = states_layer_expert_params(model, plan, layer)};
    }
    case SEGMENT_MTP: {
        /* the first module holds the untied word embedding's copy where
         * its stage needs one (a tied one's is the head's) */
        double own = transformer_mtp_params(model, tp);
        double copy = !model->tied_embeddings && layer == model->layers &&
                              states_embedding_copy_stage(model, plan) >= 0
                          ? vocab
                          : 0;
        return (Segment){.kind = kind, .layer = layer, .params = own + copy, .uses = own + vocab};
    }
    case SEGMENT_HEAD:
        break;
    }
    double head = transformer_head_params(model, tp);
    return (Segment){.kind = kind,
                     .layer = -1,
                     .params = head + (states_embedding_copy_stage(model, plan) >= 0 ? words : 0),
                     .uses = head + words};
}

StatesRule states_rule(const PlanSpec *plan)
{
    StatesRule rule = {.bytes_per_param = {[MEM_PARAMS] = states_tensor_bytes(plan, TENSOR_PARAM),
                                           [MEM_GRADS] = states_tensor_bytes(plan, TENSOR_GRAD),
                                           [MEM_OPTIMIZER] = transformer_optimizer_state_bytes(
                                               plan->optimizer_states)},
                       .layer_param_bytes = states_tensor_bytes(plan, TENSOR_LAYER_PARAM),
                       .optimizer = plan->optimizer_states};
    for (int k = 0; k < MEM_KINDS; k++)
        rule.shards[k] = rule.expert_shards[k] = 1;
    return rule;
}

double states_param_bytes(const PlanSpec *plan, SegmentKind kind)
{
    return states_tensor_bytes(plan, kind == SEGMENT_LAYER ? TENSOR_LAYER_PARAM : TENSOR_PARAM);
}

double states_gather_bytes(const PlanSpec *plan, SegmentKind kind)
{
    if (kind == SEGMENT_LAYER && plan->reuse_grad_buf_for_mxfp8_param_ag)
        return states_tensor_bytes(plan, TENSOR_GRAD);
    return states_param_bytes(plan, kind);
}

double states_layer_expert_params(const ModelSpec *model, const PlanSpec *plan, int layer)
{
    return layout_plan_experts_apart(plan)
               ? transformer_layer_expert_params_at(model, layer, layout_plan_size(plan, GROUP_ETP),
                                                    plan->ep)
               : 0;
}

/* `scale` x the shard of `kind`: states_shard_params, each part scaled
 * before it is divided, as emit.c has always rounded a state's bytes. */
static double scaled_shard(const StatesRule *rule, MemKind kind, double scale, double params,
                           double experts)
{
    int dense = rule->shards[kind], expert = rule->expert_shards[kind];
    if (dense == expert)
        return scale * params / dense;
    return scale * (params - experts) / dense + scale * experts / expert;
}

double states_shard_params(const StatesRule *rule, MemKind kind, double params, double experts)
{
    return scaled_shard(rule, kind, 1, params, experts);
}

double states_bytes(const StatesRule *rule, MemKind kind, double params, double experts,
                    double layers)
{
    double per = rule->bytes_per_param[kind];
    if (kind == MEM_PARAMS && rule->layer_param_bytes != per) /* the layers apart */
        return scaled_shard(rule, kind, per, params - layers, 0) +
               scaled_shard(rule, kind, rule->layer_param_bytes, layers, experts);
    return scaled_shard(rule, kind, per, params, experts);
}

double states_optimizer_s(const GpuSpec *gpu, const StatesRule *rule, double shard)
{
    if (rule->bytes_per_param[MEM_OPTIMIZER] == 0)
        return 0;
    OpList ops;
    transformer_optimizer_ops(shard, rule->optimizer, &ops);
    return transformer_ops_s(gpu, &ops);
}

double states_total_bytes(const StatesRule *rule, double params, double experts, double layers)
{
    double bytes = 0;
    for (int k = MEM_PARAMS; k <= MEM_OPTIMIZER; k++)
        bytes += states_bytes(rule, (MemKind)k, params, experts, layers);
    return bytes;
}

StageSegments states_stage_segments(const ModelSpec *model, const PlanSpec *plan)
{
    return (StageSegments){.model = model, .plan = plan, .first = chunks_firsts(plan)};
}

void states_stage_segments_clear(StageSegments *segs)
{
    g_free(segs->first);
}

void states_stage_visit(StageSegments *segs, int stage,
                        void (*visit)(const Segment *seg, void *ctx), void *ctx)
{
    const PlanSpec *plan = segs->plan;
    int chunks = chunks_count(plan);
    for (int c = 0; c < plan->virtual_stages; c++) {
        int g = chunks_of_stage(plan, stage, c);
        if (g == 0) {
            Segment embedding = states_segment(segs->model, plan, SEGMENT_EMBEDDING, -1);
            visit(&embedding, ctx);
        }
        for (int i = segs->first[g]; i < segs->first[g + 1]; i++) {
            if (i >= segs->model->layers) {
                Segment mtp = states_segment(segs->model, plan, SEGMENT_MTP, i);
                visit(&mtp, ctx);
            }
            int moe = transformer_layer_moe(segs->model, i);
            if (!segs->made[moe])
                segs->layer[moe] = states_segment(segs->model, plan, SEGMENT_LAYER, i);
            segs->made[moe] = TRUE;
            visit(&segs->layer[moe], ctx);
        }
        if (g == chunks - 1) {
            Segment head = states_segment(segs->model, plan, SEGMENT_HEAD, -1);
            visit(&head, ctx);
        }
    }
}

static void add_params(const Segment *seg, void *ctx)
{
    StageParams *p = ctx;
    p->params += seg->params;
    if (seg->kind != SEGMENT_LAYER)
        return;
    p->layers += seg->params;
    p->experts += seg->expert_params;
}

StageParams states_stage_params(StageSegments *segs, int stage)
{
    StageParams p = {0};
    states_stage_visit(segs, stage, add_params, &p);
    return p;
}

StageParams states_stage_params_of(const ModelSpec *model, const PlanSpec *plan, int stage)
{
    StageSegments segs = states_stage_segments(model, plan);
    StageParams p = states_stage_params(&segs, stage);
    states_stage_segments_clear(&segs);
    return p;
}
