/* transformer.h: what one GPU does and stores for a decoder-only transformer.
 *
 * A layer is two blocks, attention and MLP, each a list of operations with
 * their FLOPs and HBM bytes (docs/model.md, "Compute");
 * around the layers sit the embedding and the head (final norm, logits,
 * cross-entropy loss). Everything is for one micro-batch on one GPU of a
 * tensor-parallel group (`Shard`). A backward operation costs twice its
 * forward (two GEMMs, input and weight gradient, per forward GEMM).
 *
 * Model families: a "gelu" model is GPT-style (LayerNorm, biases, learned
 * position embeddings); a "swiglu" model is Llama-style (RMSNorm, no
 * biases, rotary positions). Both keep dropout masks as Korthikanti et al.
 * count them, so the activation bytes match their table. */
#ifndef PLANSIM_COST_TRANSFORMER_H
#define PLANSIM_COST_TRANSFORMER_H

#include <glib.h>

#include "cost/roofline.h"
#include "spec/spec.h"

typedef enum { BLOCK_ATTENTION, BLOCK_MLP, TF_BLOCKS } Block;

typedef struct {
    int micro_batch;            /* b, sequences */
    int tp;                     /* t, the tensor-parallel size */
    gboolean sequence_parallel; /* norms and dropout on s/t tokens */
    Attention attention;        /* left out: ATTENTION_FLASH, the plan default */
} Shard;

/* The plan's Shard: its micro-batch size, tp, sequence parallelism and
 * attention. */
Shard tf_shard(const PlanSpec *plan);

#define TF_MAX_OPS 10

typedef struct {
    Op ops[TF_MAX_OPS];
    int n;
} OpList;

/* Forward operations of one block of one layer. With FlashAttention the
 * attention core is one operation, the fused kernel's forward. */
void tf_block_ops(const ModelSpec *m, Block block, Shard sh, OpList *out);
/* The operations that run before a block's backward on top of it (which
 * costs twice the block's forward): what recomputation replays (the whole
 * block under full recomputation; under selective with standard attention
 * the attention core: scores, softmax, dropout, score x V; nothing else),
 * then, for the attention block with FlashAttention, whatever the rc, the
 * rest of the fused kernel's backward: its recomputation of the scores
 * S = QK^T (2 b s^2 h / t FLOPs) and its lower efficiency (docs/model.md,
 * "FlashAttention"). That rest comes last: it is the whole list under
 * RECOMPUTE_NONE. */
void tf_block_replay_ops(const ModelSpec *m, Block block, Shard sh, Recompute rc, OpList *out);
/* Forward operations of the token (and position) embedding. */
void tf_embedding_ops(const ModelSpec *m, Shard sh, OpList *out);
/* Forward operations of the head: final norm, logits, loss. */
void tf_head_ops(const ModelSpec *m, Shard sh, OpList *out);
/* One mixed-precision Adam step over `params` parameters: reads the bf16
 * gradient and fp32 master, momentum and variance, writes them back with
 * the bf16 parameters (28 bytes per parameter); memory-bound. */
void tf_optimizer_ops(double params, OpList *out);

/* Sum of the operations' roofline times. */
double tf_ops_s(const GpuSpec *gpu, const OpList *ops);
/* Sum of their FLOPs; only matrix multiplies when `gemm_only`. */
double tf_ops_flops(const OpList *ops, gboolean gemm_only);

/* Parameters one GPU of a tensor-parallel group of `tp` holds: of one
 * layer (weights and column biases split, norms and row biases
 * replicated), of the embedding (vocabulary split, learned positions
 * replicated), of the head (final norm, and the output layer split unless
 * tied). tf_params is the whole model's, Psi. */
double tf_layer_params(const ModelSpec *m, int tp);
double tf_embedding_params(const ModelSpec *m, int tp);
double tf_head_params(const ModelSpec *m, int tp);
double tf_params(const ModelSpec *m);

/* Bytes one block keeps from its forward for its backward, per micro-batch
 * (Korthikanti et al. 2022, section 4: attention 11sbh + 5as^2b, MLP 19sbh,
 * norms 4sbh for a GPT layer; sharded as their table says). FlashAttention
 * keeps no s^2 term but the fp32 logsumexp of each head and token, 4asb/t
 * (its Q, K, V and output are among the 11sbh), so selective recomputation
 * keeps the same as none. Under full recomputation the attention block
 * keeps the layer input (2sbh), the MLP block nothing. */
double tf_block_activation_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc);
/* Bytes a replay re-creates and the block's backward frees: what the
 * block would keep without recomputation, less what it keeps under `rc`. */
double tf_block_replay_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc);
/* The embedding's dropout mask, sbh bytes (/t with sequence parallelism). */
double tf_embedding_activation_bytes(const ModelSpec *m, Shard sh);
/* The head's: final norm and logits inputs (2sbh each) and the fp32
 * logits (4sbV/t). */
double tf_head_activation_bytes(const ModelSpec *m, Shard sh);

/* Model FLOPs of a step over `sequences` sequences: forward and backward
 * matrix multiplies (3x the forward), no recomputation. For a GPT model
 * this is Korthikanti et al.'s eq. 7. */
double tf_model_flops(const ModelSpec *m, double sequences);

#endif
