/* states.h: the model states, one table for every user: the parameters
 * each segment of the model holds on a rank, the element type of each
 * kind of tensor (the plan's one rule for them), and the bytes of a
 * rank's states by a step's StatesRule (step.h): the rule every plan
 * starts from, states_rule, which the strategies' `states` hooks change
 * (ZeRO's split, zero.c; the optimizer on the host, offload.c;
 * docs/model.md, "Memory").
 *
 * emit.c lays out the segments and allocates the states at "step begin"
 * by these, estimate.c bounds the memory peak with them, offload.c sizes
 * the host's optimizer shard, data_parallel.c reduces the gradients in
 * their element type. */
#ifndef PLANSIM_STRATEGY_STATES_H
#define PLANSIM_STRATEGY_STATES_H

#include "strategy/emit.h"

/* The tensors of a plan by element type: what a stage sends its
 * neighbour, what tensor, context and expert parallelism move, the
 * activations (bf16 whatever the GEMMs' dtype: Transformer Engine
 * communicates in bf16); a parameter as held and all-gathered (bf16, or
 * a layer's fp8 with fp8_param_gather); a gradient as accumulated and
 * reduced (grad_accum_dtype: fp32 or bf16). */
typedef enum { TENSOR_ACTIVATION, TENSOR_PARAM, TENSOR_LAYER_PARAM, TENSOR_GRAD } Tensor;

/* Bytes of one element of tensor `t` under `plan`: the one rule. */
double states_tensor_bytes(const PlanSpec *plan, Tensor t);

/* Segment `kind` (`layer` for SEGMENT_LAYER and SEGMENT_MTP, else -1) as
 * a rank holds it (Segment, emit.h): its tensor-parallel share of the
 * parameters; the head of a tied model on a pipeline also holds its copy
 * of the word embedding, and computes with it in any case (Megatron-LM);
 * so does the first MTP module of an untied model on a stage without the
 * embedding (Megatron-Core keeps a copy on the MTP layers' stage). */
Segment states_segment(const ModelSpec *model, const PlanSpec *plan, SegmentKind kind, int layer);

/* The pipeline stage holding the second copy of the word embedding,
 * whose gradients are summed with the first stage's: a tied model's head's
 * stage (the last, but in a V the first), else the MTP layers' stage; -1
 * when that is the first stage (pp 1, a V). The plan must be resolved. */
int states_embedding_copy_stage(const ModelSpec *model, const PlanSpec *plan);

/* Every plan's rule of its model states (StatesRule, step.h), before the
 * strategies' hooks: bf16 parameters (2 bytes, a layer's
 * TENSOR_LAYER_PARAM's); gradients in the plan's grad_accum_dtype (fp32
 * 4, bf16 2); Adam's states as its optimizer_states keeps them
 * (transformer_optimizer_state_bytes: fp32 master weights, momentum and
 * variance, 12, Rajbhandari et al. 2020, section 3's K); nothing split.
 * So 18 bytes per parameter with fp32 gradients (Megatron-LM), 16 with
 * bf16. */
StatesRule states_rule(const PlanSpec *plan);

/* Bytes one parameter of a segment of `kind` takes as the rank holds and
 * all-gathers it: TENSOR_LAYER_PARAM's for a layer, TENSOR_PARAM's for the
 * embedding and the head. */
double states_param_bytes(const PlanSpec *plan, SegmentKind kind);
/* Bytes one parameter of a segment of `kind` moves in ZeRO's all-gather:
 * states_param_bytes, but a layer's in the gradient buffer's type
 * (TENSOR_GRAD) when the plan gathers its mxfp8 parameters there
 * (reuse_grad_buf_for_mxfp8_param_ag). */
double states_gather_bytes(const PlanSpec *plan, SegmentKind kind);

/* Of layer `layer`'s parameters a rank holds, those whose states and
 * gradients live on the expert-data-parallel group: its routed experts'
 * when that group is their own (layout_plan_experts_apart;
 * transformer_layer_expert_params_at), else none (that group is then the
 * data-parallel one, and they go with the rest). Segment.expert_params
 * (emit.h). */
double states_layer_expert_params(const ModelSpec *model, const PlanSpec *plan, int layer);

/* Parameters of a rank's shard of state `kind` (MEM_PARAMS, MEM_GRADS or
 * MEM_OPTIMIZER), of a rank holding `params` parameters, `experts` of them
 * split over rule->expert_shards and the rest over rule->shards:
 * (params - experts) / d_k + experts / d_e,k, or params / d_k when the two
 * split kind alike. */
double states_shard_params(const StatesRule *rule, MemKind kind, double params, double experts);

/* Bytes of state `kind` on such a rank: its bytes per parameter x its
 * shard, rounded as emit.c's allocation is; of MEM_PARAMS, its `layers`
 * (of the `params`, its transformer layers', the experts among them) at
 * the rule's layer_param_bytes. */
double states_bytes(const StatesRule *rule, MemKind kind, double params, double experts,
                    double layers);

/* The GPU's optimizer step over a shard of `shard` parameters (its
 * states_shard_params of MEM_OPTIMIZER): one mixed-precision Adam step
 * (transformer_optimizer_ops), or none when the optimizer's states are
 * not on the GPU (offload.h). */
double states_optimizer_s(const GpuSpec *gpu, const StatesRule *rule, double shard);

/* Model-state bytes of such a rank: states_bytes summed kind by kind in
 * MemKind order, as the engine's memory ledger sums emit.c's allocations.
 * With d = dp x cp, ZeRO's split (zero.c) and no experts apart: stage 0
 * 18 (16) Psi, stage 1 6 (4) Psi + 12 Psi / d, stage 2 2 Psi + 16 (14)
 * Psi / d, stage 3 18 (16) Psi / d, fp32 (bf16) gradients; the experts'
 * part of Psi over d_e. */
double states_total_bytes(const StatesRule *rule, double params, double experts, double layers);

/* The segments a rank of each pipeline stage holds (states_segment), for
 * walking stage after stage: a layer's segment depends only on whether it
 * is MoE, so each kind's is made once, when first visited (an MTP module's
 * own segment, made each time, comes before its layer's). */
typedef struct {
    const ModelSpec *model;
    const PlanSpec *plan;
    int *first; /* chunks_firsts */
    Segment layer[2];
    gboolean made[2];
} StageSegments;

/* The segments of `plan`'s stages (resolved), cleared with
 * states_stage_segments_clear. */
StageSegments states_stage_segments(const ModelSpec *model, const PlanSpec *plan);
void states_stage_segments_clear(StageSegments *segs);

/* Visits the segments a rank of stage `stage` holds, in model order as
 * emit.c walks them: the embedding, each chunk's layers, the head. */
void states_stage_visit(StageSegments *segs, int stage,
                        void (*visit)(const Segment *seg, void *ctx), void *ctx);

/* The parameters a rank of stage `stage` holds, and of them those on the
 * expert-data-parallel group (states_layer_expert_params: 0 with ep 1 and etp tp)
 * and its layers', each summed segment by segment in model order as
 * emit.c sums them. */
typedef struct {
    double params, experts, layers;
} StageParams;
StageParams states_stage_params(StageSegments *segs, int stage);

/* states_stage_params of one stage of `plan` (resolved). */
StageParams states_stage_params_of(const ModelSpec *model, const PlanSpec *plan, int stage);

#endif
