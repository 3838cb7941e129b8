/* transformer.c: operations, parameters and activations of a transformer.
 *
 * Notation as in docs/model.md: s sequence, b micro-batch, h hidden, a heads,
 * f FFN, V vocabulary, t tensor-parallel size; n = s b tokens, ns the tokens
 * a norm or dropout sees (n / t with sequence parallelism), h_kv = kv_heads
 * x h / a. bf16 tensors take 2 bytes per element, dropout masks 1, the
 * cross-entropy's logits 4 (fp32). The memory-bound operations are the
 * kernels Megatron-LM and Transformer Engine run, with their bytes read and
 * written (docs/model.md, "Compute"). */
#include "cost/transformer.h"

#include <string.h>

typedef struct {
    double n, ns; /* tokens, tokens for norms and dropout */
    double t;     /* tensor-parallel size */
    double h, hkv, f, v, s, b, a;
    double hkv_t; /* this GPU's K (or V) width: h_kv / t, or one head's
                   * width when t exceeds the KV heads (Megatron then
                   * replicates KV heads) */
} Dims;

static Dims dims(const ModelSpec *m, Shard sh)
{
    Dims d;
    d.s = m->seq_length;
    d.b = sh.micro_batch;
    d.n = d.s * d.b;
    d.t = sh.tp;
    d.ns = sh.sequence_parallel ? d.n / d.t : d.n;
    d.h = m->hidden_size;
    d.a = m->attention_heads;
    d.hkv = (double)m->kv_heads * (d.h / d.a);
    d.hkv_t = m->kv_heads >= sh.tp ? d.hkv / d.t : d.h / d.a;
    d.f = m->ffn_hidden_size;
    d.v = m->vocab_size;
    return d;
}

static gboolean gpt_style(const ModelSpec *m)
{
    return m->mlp == MLP_GELU;
}

static void add(OpList *l, const char *name, double flops, double bytes, int gemm)
{
    g_assert(l->n < TF_MAX_OPS);
    l->ops[l->n++] = (Op){.name = name, .flops = flops, .bytes = bytes, .gemm = gemm};
}

/* A GEMM of an (m x k) input by a (k x n) weight into an (m x n) output;
 * its shape sets its tiles and waves (roofline.h). */
static void gemm(OpList *l, const char *name, double m, double k, double n)
{
    add(l, name, 2 * m * k * n, 2 * (m * k + k * n + m * n), 1);
    Op *op = &l->ops[l->n - 1];
    op->m = m;
    op->k = k;
    op->n = n;
    op->batch = 1;
}

/* Norm over `tokens` x h: reads and writes bf16. */
static void norm(OpList *l, const char *name, double tokens, double h)
{
    add(l, name, 5 * tokens * h, 4 * tokens * h, 0);
}

/* Dropout and residual add: reads two tensors, writes one and a mask. */
static void dropout_residual(OpList *l, double tokens, double h)
{
    add(l, "dropout_add", 2 * tokens * h, 7 * tokens * h, 0);
}

/* The attention core, which selective recomputation replays: scores,
 * softmax, its dropout, and the product with V, on this GPU's heads. */
static void attention_core(OpList *out, const Dims *d)
{
    double scores = d->b * (d->a / d->t) * d->s * d->s;
    add(out, "scores", 2 * d->b * d->s * d->s * d->h / d->t,
        2 * d->n * (d->h / d->t + d->hkv_t) + 2 * scores, 1);
    add(out, "softmax", 5 * scores, 4 * scores, 0);
    add(out, "attn_dropout", scores, 5 * scores, 0);
    add(out, "attn_v", 2 * d->b * d->s * d->s * d->h / d->t,
        2 * scores + 2 * d->n * (d->hkv_t + d->h / d->t), 1);
}

/* FlashAttention (Dao 2023, "FlashAttention-2"; docs/model.md,
 * "FlashAttention"). Its kernels skip the blocks of the causal mask above
 * the diagonal, so they do about half of the s x s work (Dao, section
 * 3.1.1), while FLOPs are counted over all of it, as Megatron-LM and Dao
 * (section 4.2) count them. On the work they do, they run at their own
 * fractions of the GPU's peak: FlashAttention-2 reaches 50 to 73 % of an
 * A100's in the forward and at most 63 % in the backward (Dao, abstract and
 * section 1), FlashAttention-3 75 % of an H100's in the forward (Shah et
 * al. 2024); we take 60 % and 50 %, causal training shapes being below the
 * best case. The backward does 2.5 times the forward's FLOPs: its five
 * matrix multiplies against two, S = QK^T recomputed (Dao, section 4.1). */
#define FLASH_WORK                0.5  /* of the counted FLOPs, the part the kernels do */
#define FLASH_FORWARD_EFFICIENCY  0.60 /* of the peak, on that work */
#define FLASH_BACKWARD_EFFICIENCY 0.50

static const char FLASH_FORWARD[] = "flash_attention";
static const char FLASH_BACKWARD_REST[] = "flash_attention_bwd_rest";

/* FlashAttention's forward, one kernel: QK^T and score x V FLOPs as the
 * standard core's; it reads Q, K and V once and writes the output and
 * the fp32 logsumexp of each head and token, with no s x s traffic. */
static void flash_forward(OpList *out, const Dims *d)
{
    add(out, FLASH_FORWARD, 4 * d->b * d->s * d->s * d->h / d->t,
        2 * d->n * (d->h / d->t + 2 * d->hkv_t) + 2 * d->n * d->h / d->t + 4 * d->n * d->a / d->t,
        1);
}

/* What the fused backward does beyond twice the forward (which the
 * emitter charges every backward): its recomputation of S = QK^T, whose
 * 2 b s^2 h / t FLOPs are counted (hardware FLOPs, not model FLOPs), and
 * the whole backward's lower efficiency; see flash_s. */
static void flash_backward_rest(OpList *out, const Dims *d)
{
    add(out, FLASH_BACKWARD_REST, 2 * d->b * d->s * d->s * d->h / d->t, 0, 1);
}

/* The time of FlashAttention's operations, or -1 for any other. The
 * forward: its work at the forward efficiency (or its HBM traffic,
 * whichever is slower). The backward's rest, with F the forward's counted
 * FLOPs (twice the rest's): the backward kernel, 2.5 F x FLASH_WORK at the
 * backward efficiency, less twice the forward's compute time, which the
 * emitter has charged already (none if the backward were the faster). */
static double flash_s(const GpuSpec *gpu, const Op *op)
{
    double work = op->flops * FLASH_WORK / gpu->peak_flops;
    if (strcmp(op->name, FLASH_FORWARD) == 0)
        return MAX(work / FLASH_FORWARD_EFFICIENCY,
                   op->bytes / (gpu->memory_Bps * gpu->memory_efficiency)) +
               gpu->launch_s;
    if (strcmp(op->name, FLASH_BACKWARD_REST) == 0)
        return MAX(0, work * (5 / FLASH_BACKWARD_EFFICIENCY - 4 / FLASH_FORWARD_EFFICIENCY));
    return -1;
}

Shard tf_shard(const PlanSpec *plan)
{
    return (Shard){plan->micro_batch_size, plan->tp, plan->sequence_parallel, plan->attention};
}

void tf_block_ops(const ModelSpec *m, Block block, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    out->n = 0;
    norm(out, "norm", d.ns, d.h);
    if (block == BLOCK_ATTENTION) {
        gemm(out, "qkv", d.n, d.h, d.h / d.t + 2 * d.hkv_t);
        /* Llama: rotary embedding of Q and K, Transformer Engine's fused
         * kernel (read and write 2 bytes an element, 3 FLOPs) */
        if (!gpt_style(m))
            add(out, "rope", 3 * d.n * (d.h / d.t + d.hkv_t), 4 * d.n * (d.h / d.t + d.hkv_t), 0);
        if (sh.attention == ATTENTION_FLASH)
            flash_forward(out, &d);
        else
            attention_core(out, &d);
        gemm(out, "out_proj", d.n, d.h / d.t, d.h);
    } else {
        double up = gpt_style(m) ? d.f : 2 * d.f; /* SwiGLU: gate and up */
        gemm(out, "mlp_up", d.n, d.h, up / d.t);
        /* Megatron's fused bias and GeLU (read 2, write 2 bytes an element
         * of n x f/t), or fused SwiGLU (read gate and up, 4; write 2) */
        add(out, "activation", 8 * d.n * d.f / d.t,
            gpt_style(m) ? 4 * d.n * d.f / d.t : 6 * d.n * d.f / d.t, 0);
        gemm(out, "mlp_down", d.n, d.f / d.t, d.h);
    }
    dropout_residual(out, d.ns, d.h);
}

void tf_block_replay_ops(const ModelSpec *m, Block block, Shard sh, Recompute rc, OpList *out)
{
    Dims d = dims(m, sh);
    gboolean flash = sh.attention == ATTENTION_FLASH;
    out->n = 0;
    if (rc == RECOMPUTE_FULL)
        tf_block_ops(m, block, sh, out);
    else if (rc == RECOMPUTE_SELECTIVE && block == BLOCK_ATTENTION && !flash)
        attention_core(out, &d);
    /* FlashAttention has no core left to replay: it recomputes the scores
     * inside its backward, under any rc */
    if (block == BLOCK_ATTENTION && flash)
        flash_backward_rest(out, &d);
}

void tf_embedding_ops(const ModelSpec *m, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    out->n = 0;
    /* Megatron's VocabParallelEmbedding: gather the rows (read and write
     * 4 bytes an element), zero the (t - 1)/t of them outside this GPU's
     * vocabulary (write 2; the group sums the partial rows); GPT: gather
     * the learned positions (4) and add them (read 4, write 2); then the
     * transpose to sequence-first (read and write 4) */
    double bytes = 4 + 2 * (d.t - 1) / d.t + (gpt_style(m) ? 10 : 0) + 4;
    add(out, "embedding", (gpt_style(m) ? 1 : 0) * d.n * d.h, bytes * d.n * d.h, 0);
    add(out, "embedding_dropout", d.ns * d.h, 5 * d.ns * d.h, 0);
}

void tf_head_ops(const ModelSpec *m, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    out->n = 0;
    norm(out, "final_norm", d.ns, d.h);
    /* bf16 logits, n x V/t */
    gemm(out, "logits", d.n, d.h, d.v / d.t);
    /* Megatron's vocabulary-parallel cross-entropy, per logit: the cast to
     * fp32 (read 2, write 4), the max (read 4), the max subtracted (read
     * 4, write 4), exp in place (read 4, write 4), the sum (read 4), the
     * division into the softmax its backward keeps (read 4, write 4) */
    add(out, "loss", 5 * d.n * d.v / d.t, 38 * d.n * d.v / d.t, 0);
}

void tf_optimizer_ops(double params, OpList *out)
{
    out->n = 0;
    add(out, "adam", 12 * params, 28 * params, 0);
}

double tf_ops_s(const GpuSpec *gpu, const OpList *ops)
{
    double s = 0;
    for (int i = 0; i < ops->n; i++) {
        double flash = flash_s(gpu, &ops->ops[i]);
        s += flash >= 0 ? flash : roofline_s(gpu, &ops->ops[i]);
    }
    return s;
}

double tf_ops_flops(const OpList *ops, gboolean gemm_only)
{
    double f = 0;
    for (int i = 0; i < ops->n; i++)
        if (ops->ops[i].gemm || !gemm_only)
            f += ops->ops[i].flops;
    return f;
}

double tf_layer_params(const ModelSpec *m, int tp)
{
    Dims d = dims(m, (Shard){1, tp, FALSE, ATTENTION_FLASH});
    double qkv = d.h / d.t + 2 * d.hkv_t; /* columns of the QKV weight on this GPU */
    double attention = d.h * qkv + d.h * d.h / d.t;
    double mlp = (gpt_style(m) ? 2 : 3) * d.h * d.f / d.t;
    /* GPT: biases of qkv and fc1 split by column, of the projection and
     * fc2 replicated; two LayerNorms (weight, bias). Llama: two RMSNorm
     * weights. Norms are replicated. */
    if (gpt_style(m))
        return attention + mlp + qkv + d.h + d.f / d.t + d.h + 4 * d.h;
    return attention + mlp + 2 * d.h;
}

double tf_embedding_params(const ModelSpec *m, int tp)
{
    double words = (double)m->vocab_size * m->hidden_size / tp; /* vocabulary-parallel */
    return gpt_style(m) ? words + (double)m->seq_length * m->hidden_size : words;
}

double tf_head_params(const ModelSpec *m, int tp)
{
    double h = m->hidden_size;
    double final_norm = gpt_style(m) ? 2 * h : h;
    return final_norm + (m->tied_embeddings ? 0 : (double)m->vocab_size * h / tp);
}

double tf_params(const ModelSpec *m)
{
    return m->layers * tf_layer_params(m, 1) + tf_embedding_params(m, 1) + tf_head_params(m, 1);
}

double tf_block_activation_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc)
{
    Dims d = dims(m, sh);
    if (rc == RECOMPUTE_FULL)
        return block == BLOCK_ATTENTION ? 2 * d.n * d.h : 0;
    /* norm input, block input (bf16) and the closing dropout mask */
    double replicated = 2 * d.ns * d.h + 2 * d.ns * d.h + d.ns * d.h;
    if (block == BLOCK_MLP) {
        int kept = gpt_style(m) ? 2 : 3; /* GeLU input, fc2 input; or gate, up, down input */
        return replicated + kept * 2 * d.n * d.f / d.t;
    }
    /* Q and K, V, projection input */
    double sharded = 2 * d.n * (d.h / d.t + d.hkv_t) + 2 * d.n * d.hkv_t + 2 * d.n * d.h / d.t;
    /* FlashAttention: the fp32 logsumexp of each head and token; else the
     * softmax output (2), its dropout mask (1), dropout output (2) per score */
    double core = sh.attention == ATTENTION_FLASH ? 4 * d.n * d.a / d.t
                  : rc == RECOMPUTE_SELECTIVE     ? 0
                                                  : 5 * d.a * d.s * d.s * d.b / d.t;
    return replicated + sharded + core;
}

double tf_block_replay_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc)
{
    return tf_block_activation_bytes(m, block, sh, RECOMPUTE_NONE) -
           tf_block_activation_bytes(m, block, sh, rc);
}

double tf_embedding_activation_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    return d.ns * d.h;
}

double tf_head_activation_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    return 4 * d.ns * d.h + 4 * d.n * d.v / d.t;
}

double tf_model_flops(const ModelSpec *m, double sequences)
{
    Shard one = {1, 1, FALSE, ATTENTION_FLASH}; /* the same matrix multiplies as standard */
    OpList ops;
    double forward = 0;
    for (int b = 0; b < TF_BLOCKS; b++) {
        tf_block_ops(m, (Block)b, one, &ops);
        forward += m->layers * tf_ops_flops(&ops, TRUE);
    }
    tf_head_ops(m, one, &ops);
    forward += tf_ops_flops(&ops, TRUE);
    return 3 * forward * sequences;
}
