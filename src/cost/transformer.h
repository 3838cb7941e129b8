/* transformer.h: what one GPU does and stores for a decoder-only transformer.
 *
 * A layer is two blocks, attention and MLP, each a list of operations with
 * their FLOPs and HBM bytes (docs/model.md, "Compute");
 * around the layers sit the embedding and the head (final norm, logits,
 * cross-entropy loss). Everything is for one micro-batch on one GPU of a
 * tensor- and context-parallel group (`Shard`): with context parallelism
 * every operation runs on the GPU's s/c tokens, and attention on its
 * queries against the whole sequence's keys, 1/c of the scores (causal
 * load balancing evens the work: docs/model.md, "Context parallelism"). A backward operation costs twice its
 * forward (two GEMMs, input and weight gradient, per forward GEMM).
 *
 * Model families: a "gelu" model is GPT-style (LayerNorm, biases, learned
 * position embeddings); a "swiglu" model is Llama-style (RMSNorm, no
 * biases, rotary positions); a "relu2" model is Llama-style with an
 * ungated squared-ReLU MLP (Nemotron-H's). A hybrid model's layers are one
 * block each, its attention without positions (docs/model.md, "Hybrid
 * models"). Both keep dropout masks as Korthikanti et al.
 * count them, so the activation bytes match their table. */
#ifndef PLANSIM_COST_TRANSFORMER_H
#define PLANSIM_COST_TRANSFORMER_H

#include <glib.h>

#include "cost/roofline.h"
#include "spec/model.h"
#include "spec/gpu.h"
#include "spec/plan.h"

/* The kinds of a layer's blocks: attention over the whole sequence, a
 * dense MLP (ffn_hidden_size), a MoE layer's MLP block
 * (transformer_layer_moe: router, shared and routed experts), attention
 * over the sliding window (transformer_layer_windowed), a Mamba-2 mixer
 * (docs/model.md, "Hybrid models"). A layer has up to TRANSFORMER_BLOCKS
 * blocks (transformer_layer_blocks): its attention then its MLP block, or
 * in a hybrid model its one block (transformer_layer_block); per-block
 * caches hold TRANSFORMER_BLOCK_KINDS. A layer's kind
 * (transformer_layer_kind), one of TRANSFORMER_LAYER_KINDS, is a row of
 * one table of its blocks. */
typedef enum { BLOCK_ATTENTION, BLOCK_MLP, BLOCK_MOE, BLOCK_WINDOW, BLOCK_MAMBA } Block;
enum { TRANSFORMER_BLOCKS = 2, TRANSFORMER_BLOCK_KINDS = 5, TRANSFORMER_LAYER_KINDS = 8 };

typedef struct {
    int micro_batch;            /* b, sequences */
    int tp;                     /* t, the tensor-parallel size */
    gboolean sequence_parallel; /* norms and dropout on s/t tokens */
    Attention attention;        /* left out: ATTENTION_FLASH, the plan default */
    Dtype dtype;                /* of the linear layers' GEMMs; left out: DTYPE_BF16 */
    gboolean amax_pass;         /* the casts to dtype first read their tensor for its amax
                                 * (current scaling: dtypes.def, fp8_recipe tensorwise) */
    int ep;                     /* expert-parallel size; left out (0): 1 */
    int etp;                    /* expert tensor-parallel size, dividing tp: the routed
                                 * experts' f_e is split over it, and the GPU routes
                                 * n etp / tp of its tokens; left out (0): tp */
    double expert_load;         /* rows an expert GEMM gets over the mean tokens routed to
                                 * it: the capacity factor, or with dropless routing the
                                 * busiest expert's load imbalance; left out (0): 1 */
    int cp;                     /* c, the context-parallel size: this GPU holds s/c tokens of
                                 * each sequence and computes 1/c of its attention scores;
                                 * left out (0): 1 */
    gboolean expert_padded;     /* expert_load is a capacity every GPU computes (padded);
                                 * else the busiest GPU's, the others doing less */
    gboolean cp_all_to_all;     /* context parallelism by all-to-all (Ulysses): attention
                                 * runs the whole sequence on a share of the heads, not
                                 * a chunk of it a step (ring) */
    CeFusion ce_fusion;         /* the loss's cross-entropy kernels; left out:
                                 * CE_FUSION_NONE, the plan default */
    gboolean fp8_one_copy;      /* a per-tensor-scaled fp8 cast writes one copy, the GPU's
                                 * FP8 GEMMs taking any layout (GpuSpec.fp8_any_layout);
                                 * left out: a copy and its transpose (Hopper's) */
    int mtp;                    /* multi-token-prediction layers trained (the plan's
                                 * mtp_num_layers): the head computes their logits and
                                 * losses too; left out: none */
    int recompute_modules;      /* what a selective recomputation replays, a set of
                                 * RecomputeModule bits (the plan's recompute_modules);
                                 * left out (0): core_attn, Megatron-Core's default */
    gboolean norm_keeps_output; /* a norm keeps its output for its backward, not its input
                                 * (the plan's memory_efficient_layer_norm); left out: input */
    gboolean moe_shared_apart;  /* a MoE block's shared experts run apart from it, beside
                                 * the dispatch (the plan's moe_shared_expert_overlap):
                                 * transformer_moe_apart_ops has them; left out: inside */
} Shard;

/* The plan's Shard: its micro-batch size, tp, sequence parallelism,
 * attention and dtype with its recipe's amax pass; and on `gpu` (NULL:
 * none in particular, Hopper's casts). */
Shard transformer_shard(const PlanSpec *plan);
Shard transformer_shard_on(const PlanSpec *plan, const GpuSpec *gpu);

/* Tokens of one micro-batch on this GPU: b s / c. */
double transformer_tokens(const ModelSpec *m, Shard sh);
/* Bytes of this GPU's share of attention's bf16 tensors for one
 * micro-batch: its query heads (Q), b (s/c) a d_qk / t elements; its K
 * and V together, b (s/c) kv_heads (d_qk + d_v) / t; the attention's
 * output, b (s/c) a d_v / t. A head's QK and V widths d_qk and d_v are
 * both the head's width but with latent attention (qk_nope + qk_rope and
 * v_head_dim). */
double transformer_q_bytes(const ModelSpec *m, Shard sh);
double transformer_kv_bytes(const ModelSpec *m, Shard sh);
double transformer_out_bytes(const ModelSpec *m, Shard sh);

#define TRANSFORMER_MAX_OPS 24

typedef struct {
    Op ops[TRANSFORMER_MAX_OPS];
    int module[TRANSFORMER_MAX_OPS]; /* the RecomputeModule bit an operation belongs to
                                      * (transformer_block_ops'), or 0 */
    int n;
} OpList;

/* Forward operations of one block of one layer. With FlashAttention the
 * attention core is one operation, the fused kernel's forward. A model
 * with latent attention (kv_lora_rank > 0) has DeepSeek-V2's in its
 * attention block: down-projections replicated over tp, the latents'
 * norms, up-projections split by column, the decoupled RoPE, the core
 * over QK and V head widths that differ, the output projection split by
 * row (docs/model.md, "Multi-head latent attention"). A Mamba-2 block
 * (BLOCK_MAMBA) is its pre-norm, in_proj split by column, the causal
 * convolution, the chunked SSD scan as one matrix-multiply operation, the
 * group RMSNorm and out_proj split by row (docs/model.md, "Hybrid
 * models"). In fp8 the
 * linear layers' GEMMs (qkv, out_proj, mlp_up, mlp_down) read 1-byte
 * inputs at the FP8 peak, each after a memory-bound cast of its
 * activation input (Transformer Engine's fused cast and transpose: read
 * bf16, write fp8 and its transpose, 4 bytes an element); attention, the
 * logits and every other operation stay bf16 (docs/model.md, "Precision recipes"). */
void transformer_block_ops(const ModelSpec *m, Block block, Shard sh, OpList *out);
/* The operations that run before a block's backward on top of it (which
 * costs twice the block's forward): what recomputation replays (the whole
 * block under full recomputation; under selective the block's forward
 * operations of the Shard's recompute_modules, in their order: core_attn
 * standard attention's core (scores, softmax, dropout, score x V),
 * layernorm the norm of a block whose first GEMMs take it apart (a MoE
 * block's, latent attention's), mla_up_proj latent attention's latent
 * norms, up-projections and RoPE, moe_act the routed experts' activation
 * and the cast of its output (docs/model.md, "Recomputation by module")),
 * then, for the attention block with FlashAttention, whatever the rc, the
 * rest of the fused kernel's backward: its recomputation of the scores
 * S = QK^T (2 b s^2 h / t FLOPs) and its lower efficiency (docs/model.md,
 * "FlashAttention"). That rest comes last: it is the whole list under
 * RECOMPUTE_NONE. */
void transformer_block_replay_ops(const ModelSpec *m, Block block, Shard sh, Recompute rc,
                                  OpList *out);
/* The same list in its two parts: what recomputation replays (`replay`,
 * empty under RECOMPUTE_NONE) and the rest of FlashAttention's backward
 * (`rest`, empty but for the attention block with FlashAttention). */
void transformer_block_replay_split(const ModelSpec *m, Block block, Shard sh, Recompute rc,
                                    OpList *replay, OpList *rest);
/* Forward operations of the token (and position) embedding. */
void transformer_embedding_ops(const ModelSpec *m, Shard sh, OpList *out);
/* Forward operations of the head: final norm, logits, loss; and with
 * Shard.mtp, each MTP layer's logits (one grouped GEMM of as many) and
 * loss by the shared output layer. */
void transformer_head_ops(const ModelSpec *m, Shard sh, OpList *out);
/* A multi-token-prediction module's own forward operations, beside its
 * transformer layer (DeepSeek-V3, arXiv 2412.19437, section 2.2; docs/model.md,
 * "Multi-token prediction"): the shared embedding's lookup, two RMSNorms,
 * the projection of their concatenation, 2h to h split by column over tp,
 * and the norm after its layer; and the bytes they keep for backward. */
void transformer_mtp_ops(const ModelSpec *m, Shard sh, OpList *out);
double transformer_mtp_activation_bytes(const ModelSpec *m, Shard sh);
/* One mixed-precision Adam step over `params` parameters, memory-bound:
 * the gradients' L2 norm for clipping (reads 4 bytes per parameter), then
 * Adam, which reads the bf16 gradient and fp32 master, momentum and
 * variance, and writes them back with the bf16 parameters (28 bytes per
 * parameter). */
void transformer_optimizer_ops(double params, OptimizerStates how, OpList *out);
/* Bytes of Adam's states a parameter kept `how` (12, 10, 4 or 8). */
double transformer_optimizer_state_bytes(OptimizerStates how);

/* A head's QK width: with latent attention qk_nope_head_dim +
 * qk_rope_head_dim, else the model's head_dim, else hidden_size /
 * attention_heads. */
double transformer_head_dim(const ModelSpec *m);

/* A mixture of experts (docs/model.md, "Mixture of experts"): whether
 * the model has routed experts, and whether layer `layer` (0-based) is one
 * of its MoE layers: layer >= first_dense_layers and layer %
 * moe_layer_frequency == 0 (DeepSeek's first_k_dense_replace and
 * moe_layer_freq); a multi-token-prediction layer (layer >= layers) is of
 * the last layer's kind, as Megatron-Core builds it, here and in
 * transformer_layer_windowed. transformer_block_ops,
 * transformer_block_replay_ops and the activation functions give for BLOCK_MOE the MoE layer's MLP block: the
 * router GEMM (h x E, replicated over tp), the permutation of the tokens
 * to their experts and back, the shared experts as a dense MLP of
 * shared_experts x f_e, and the routed experts as grouped GEMMs: E / ep
 * local experts, each of n' k ep / E x expert_load rows (n' = n etp / tp
 * the tokens the GPU routes, its share of its tensor-parallel group's n,
 * k experts per token; uniform routing), f_e split over etp. */
gboolean transformer_moe(const ModelSpec *m);
/* The operations of a MoE layer's MLP block that run apart from it: its
 * shared experts when Shard.moe_shared_apart (then BLOCK_MOE's operations
 * leave them out), none otherwise. */
void transformer_moe_apart_ops(const ModelSpec *m, Shard sh, OpList *out);
gboolean transformer_layer_moe(const ModelSpec *m, int layer);
/* Sliding-window attention (docs/model.md, "FlashAttention"): whether
 * layer `layer`'s attention is over the model's sliding_window of w keys
 * (ModelSpec.window_layers), BLOCK_WINDOW: each query's scores span
 * min(s, w) keys, of which the causal kernels do 1 - w / 2s; and whether
 * `block` is an attention block, windowed or not. */
gboolean transformer_layer_windowed(const ModelSpec *m, int layer);
gboolean transformer_block_attends(Block block);
/* Layer `layer`'s kind, 0 .. TRANSFORMER_LAYER_KINDS - 1: 2 when its
 * attention is windowed, plus 1 in a MoE layer; in a hybrid model 4 plus
 * its HybridLayer. The blocks of a layer of kind `kind`, and block `i` (0
 * .. transformer_kind_blocks - 1) of it. */
int transformer_layer_kind(const ModelSpec *m, int layer);
int transformer_kind_blocks(int kind);
Block transformer_kind_block(int kind, int i);
/* Layer `layer`'s blocks and block `i` of them: its attention,
 * BLOCK_WINDOW in a windowed layer, BLOCK_ATTENTION in another; then
 * BLOCK_MOE in a MoE layer, BLOCK_MLP in a dense one; in a hybrid model
 * its one block (BLOCK_MAMBA, BLOCK_ATTENTION, BLOCK_MLP or BLOCK_MOE). */
int transformer_layer_blocks(const ModelSpec *m, int layer);
Block transformer_layer_block(const ModelSpec *m, int layer, int i);
/* How many of the model's layers have a block of kind `block` (of each
 * kind: transformer_block_counts, one walk over the layers), and how
 * many blocks its layers have in all. */
int transformer_block_layers(const ModelSpec *m, Block block);
void transformer_block_counts(const ModelSpec *m, int layers[TRANSFORMER_BLOCK_KINDS]);
int transformer_model_blocks(const ModelSpec *m);
/* Parameters layer `layer` holds on one GPU of tp, etp and ep:
 * transformer_moe_layer_params in a MoE layer, transformer_layer_params in a dense one, in a
 * hybrid model its one block's with its norm (a Mamba-2 mixer's: in_proj,
 * conv1d, dt_bias, A_log, D, the gated norm, out_proj); and
 * of them its routed experts' (0 in a dense layer). */
double transformer_layer_params_at(const ModelSpec *m, int layer, int tp, int etp, int ep);
double transformer_layer_expert_params_at(const ModelSpec *m, int layer, int etp, int ep);
/* The size S (net/collective.h) of a MoE layer's token dispatch over the
 * expert-parallel group per micro-batch, which the combine mirrors. An
 * all-to-all: one GPU's send buffer, its n' k token copies of h bf16
 * elements, times the capacity factor when experts are padded to capacity
 * (Shard.expert_load; the dropless imbalance does not change what a GPU
 * sends). An all-gather: the gathered buffer, the tokens the ep GPUs route.
 * The flex dispatcher's (DeepEP, HybridEP) deduplicated dispatch, with
 * `per_node` of the group's ep GPUs on a node (a group of N = ep / per_node
 * nodes): each token once over RDMA to each other node that holds one of
 * its k experts, or, in one node, once to each other GPU that does, with
 * the experts uniformly routed (probability 1 - C(E - x, k) / C(E, k) for
 * x experts there); as an all-to-all (S / ep to each member) whose bytes
 * beyond the node are those: N n' (1 - C(E - E/N, k) / C(E, k)) tokens
 * across nodes, ep n' (1 - C(E - E/ep, k) / C(E, k)) in one. */
double transformer_moe_dispatch_bytes(const ModelSpec *m, Shard sh, MoeDispatcher how,
                                      int per_node);

/* One operation's time (FlashAttention's by its own efficiencies, the
 * rest by roofline_s), and the sum of the operations'. */
double transformer_op_s(const GpuSpec *gpu, const Op *op);
double transformer_ops_s(const GpuSpec *gpu, const OpList *ops);

/* The kernel classes a profiler's table groups an operation into
 * (simulate --breakdown): the attention core (FlashAttention's kernels, or
 * standard attention's scores, softmax, dropout and score x V), the other
 * matrix multiplies, and the memory-bound rest (norms, activations,
 * rotary, dropout and residual, embedding, loss, casts, permutations). */
typedef enum { KERNEL_GEMM, KERNEL_ATTENTION, KERNEL_MEMORY, KERNEL_CLASSES } KernelClass;
KernelClass transformer_op_class(const Op *op);
/* Whether the operation is a kernel of its own, with its launch cost: all
 * but FlashAttention's backward rest, part of its backward kernel. */
gboolean transformer_op_launches(const Op *op);
/* Sum of their FLOPs; only matrix multiplies when `gemm_only`. */
double transformer_ops_flops(const OpList *ops, gboolean gemm_only);

/* The matrix-multiply FLOPs the kernels of `ops` do (hardware FLOPs): each
 * GEMM's counted FLOPs less its idle share (roofline.h's Op.idle). */
double transformer_ops_hardware_flops(const OpList *ops);

/* An operation's backward: Op.backward times its forward (twice unless
 * set). */
double transformer_op_backward_s(const GpuSpec *gpu, const Op *op);
double transformer_ops_backward_s(const GpuSpec *gpu, const OpList *ops);

/* What operations take, forward (transformer_ops_s, transformer_ops_hardware_flops), their
 * backward (transformer_op_backward_s, and twice the FLOPs) and, of that, what the weight
 * gradients take: each operation's Op.wgrad times its forward. */
typedef struct {
    double seconds, flops;                   /* forward */
    double backward_seconds, backward_flops; /* backward, weight gradients included */
    double wgrad_seconds, wgrad_flops;       /* the backward's weight gradients */
} OpsWork;
OpsWork transformer_ops_work(const GpuSpec *gpu, const OpList *ops);

/* Parameters one GPU of a tensor-parallel group of `tp` holds: of one
 * layer (weights and column biases split, norms and row biases
 * replicated, GPT-OSS's sink logits split with their heads), of the
 * embedding (vocabulary split, learned positions replicated), of the head
 * (final norm, and the output layer split unless tied).
 * transformer_params is the whole model's, Psi. */
double transformer_layer_params(const ModelSpec *m, int tp);
double transformer_embedding_params(const ModelSpec *m, int tp);
double transformer_head_params(const ModelSpec *m, int tp);
double transformer_params(const ModelSpec *m);
/* A multi-token-prediction module's own parameters on one GPU of tp: its
 * projection (2h x h, split by column) and three norms (replicated); its
 * embedding and output layer are the model's. And the unique parameters
 * of `mtp_layers` modules, their transformer layers (of the last layer's
 * kind) with them, on one GPU. */
double transformer_mtp_params(const ModelSpec *m, int tp);
double transformer_mtp_layers_params(const ModelSpec *m, int mtp_layers);
/* A MoE layer's parameters on one GPU: attention, norms, the router
 * and its bias if any (replicated), the shared experts (split over tp) and its E / ep routed
 * experts (split over etp); transformer_layer_expert_params the routed experts'
 * part alone, which expert-parallel ranks hold different shards of. With
 * DeepSeek-V2's latent attention (kv_lora_rank > 0) the attention's are
 * its projections' (arXiv 2405.04434, section 2.1), the down-projections
 * replicated over tp, the rest split. */
double transformer_moe_layer_params(const ModelSpec *m, int tp, int etp, int ep);
double transformer_layer_expert_params(const ModelSpec *m, int etp, int ep);
/* The parameters one token's forward uses: transformer_params with each MoE
 * layer's routed experts counted experts_per_token times, not E times. */
double transformer_active_params(const ModelSpec *m);

/* Bytes one block keeps from its forward for its backward, per micro-batch
 * (Korthikanti et al. 2022, section 4: attention 11sbh + 5as^2b, MLP 19sbh,
 * norms 4sbh for a GPT layer; sharded as their table says). In fp8 the
 * inputs of the linear layers' GEMMs are kept as Transformer Engine keeps
 * them, in fp8 (1 byte an element): GPT's attention then keeps 9sbh + the
 * core, its MLP 14sbh. FlashAttention
 * keeps no s^2 term but the fp32 logsumexp of each head and token, 4asb/t
 * (its Q, K, V and output are among the 11sbh), so selective recomputation
 * keeps the same as none. Under full recomputation the attention block
 * keeps the layer input (2sbh), the MLP block nothing. Under selective,
 * each of the Shard's recompute_modules keeps none of what it replays
 * (transformer_block_replay_ops): core_attn the standard core's scores,
 * layernorm its norm's output as its first GEMM keeps it, mla_up_proj the
 * bf16 Q, K and V, moe_act the routed experts' down GEMM input. A norm
 * that keeps its output (Shard.norm_keeps_output) keeps no input (2sbh)
 * where the GEMM after it keeps that output in bf16, and it is not
 * replayed. */
double transformer_block_activation_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc);
/* Bytes a replay re-creates and the block's backward frees: what the
 * block would keep without recomputation, less what it keeps under `rc`. */
double transformer_block_replay_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc);
/* The embedding's dropout mask, sbh bytes (/t with sequence parallelism). */
double transformer_embedding_activation_bytes(const ModelSpec *m, Shard sh);
/* The head's: final norm (none under Shard.norm_keeps_output) and logits
 * inputs (2sbh each) and what the
 * loss keeps: the fp32 softmax (4sbV/t), or under cross_entropy_fusion te
 * the bf16 logits its gradient overwrote (2sbV/t). */
double transformer_head_activation_bytes(const ModelSpec *m, Shard sh);

/* Model FLOPs of a step over `sequences` sequences: forward and backward
 * matrix multiplies (3x the forward), no recomputation. For a GPT model
 * this is Korthikanti et al.'s eq. 7. */
double transformer_model_flops(const ModelSpec *m, double sequences);
/* The same with attention's causal half only (a sliding window's share),
 * as Megatron-Bridge's num_floating_point_operations counts it for its
 * model TFLOP/s per GPU. */
double transformer_causal_model_flops(const ModelSpec *m, double sequences);
/* What `mtp_layers` multi-token-prediction modules add to either, as
 * Megatron-Bridge counts them: each its layer, projection, norms and
 * logits (transformer.c, mtp_forward_flops); `causal`: attention's causal
 * share, as transformer_causal_model_flops. */
double transformer_mtp_model_flops(const ModelSpec *m, int mtp_layers, double sequences,
                                   gboolean causal);

#endif
