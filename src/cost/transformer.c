/* transformer.c: operations, parameters and activations of a transformer.
 *
 * Notation as in docs/model.md: s sequence, b micro-batch, h hidden, a heads,
 * f FFN, V vocabulary, t tensor-parallel size; n = s b tokens, ns the tokens
 * a norm or dropout sees (n / t with sequence parallelism), h_kv = kv_heads
 * x h / a. bf16 tensors take 2 bytes per element, dropout masks 1, logits
 * for the loss 4 (fp32). */
#include "cost/transformer.h"

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
    l->ops[l->n++] = (Op){name, flops, bytes, gemm};
}

/* A GEMM of an (m x k) input by a (k x n) weight into an (m x n) output. */
static void gemm(OpList *l, const char *name, double m, double k, double n)
{
    add(l, name, 2 * m * k * n, 2 * (m * k + k * n + m * n), 1);
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

void tf_block_ops(const ModelSpec *m, Block block, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    out->n = 0;
    norm(out, "norm", d.ns, d.h);
    if (block == BLOCK_ATTENTION) {
        gemm(out, "qkv", d.n, d.h, d.h / d.t + 2 * d.hkv_t);
        attention_core(out, &d);
        gemm(out, "out_proj", d.n, d.h / d.t, d.h);
    } else {
        double up = gpt_style(m) ? d.f : 2 * d.f; /* SwiGLU: gate and up */
        gemm(out, "mlp_up", d.n, d.h, up / d.t);
        add(out, "activation", 8 * d.n * d.f / d.t,
            gpt_style(m) ? 4 * d.n * d.f / d.t : 6 * d.n * d.f / d.t, 0);
        gemm(out, "mlp_down", d.n, d.f / d.t, d.h);
    }
    dropout_residual(out, d.ns, d.h);
}

void tf_block_replay_ops(const ModelSpec *m, Block block, Shard sh, Recompute rc, OpList *out)
{
    out->n = 0;
    if (rc == RECOMPUTE_FULL) {
        tf_block_ops(m, block, sh, out);
    } else if (rc == RECOMPUTE_SELECTIVE && block == BLOCK_ATTENTION) {
        Dims d = dims(m, sh);
        attention_core(out, &d);
    }
}

void tf_embedding_ops(const ModelSpec *m, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    out->n = 0;
    /* gather rows (and add learned positions); vocabulary-parallel GPUs
     * write partial rows that the group sums */
    add(out, "embedding", d.n * d.h, (gpt_style(m) ? 6 : 4) * d.n * d.h, 0);
    add(out, "embedding_dropout", d.ns * d.h, 5 * d.ns * d.h, 0);
}

void tf_head_ops(const ModelSpec *m, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    out->n = 0;
    norm(out, "final_norm", d.ns, d.h);
    /* logits written in fp32 for the loss */
    add(out, "logits", 2 * d.n * d.h * d.v / d.t,
        2 * (d.n * d.h + d.h * d.v / d.t) + 4 * d.n * d.v / d.t, 1);
    add(out, "loss", 5 * d.n * d.v / d.t, 8 * d.n * d.v / d.t, 0);
}

void tf_optimizer_ops(double params, OpList *out)
{
    out->n = 0;
    add(out, "adam", 12 * params, 28 * params, 0);
}

double tf_ops_s(const GpuSpec *gpu, const OpList *ops)
{
    double s = 0;
    for (int i = 0; i < ops->n; i++)
        s += roofline_s(gpu, &ops->ops[i]);
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
    Dims d = dims(m, (Shard){1, tp, FALSE});
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
    /* softmax output (2), its dropout mask (1), dropout output (2) per score */
    double core = rc == RECOMPUTE_SELECTIVE ? 0 : 5 * d.a * d.s * d.s * d.b / d.t;
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
    Shard one = {1, 1, FALSE};
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
