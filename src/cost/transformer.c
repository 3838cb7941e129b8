/* transformer.c: operations, parameters and activations of a transformer.
 *
 * Notation as in docs/model.md: s sequence, b micro-batch, h hidden, a heads,
 * f FFN, V vocabulary, t tensor-parallel size, c context-parallel size;
 * s_q = s / c the queries of a sequence on this GPU, n = s_q b tokens, ns the tokens
 * a norm or dropout sees (n / t with sequence parallelism), d the head
 * width (head_dim, h / a unless the model gives it), h_q = a x d the
 * attention's width, h_kv = kv_heads x d. bf16 tensors take e16 = dtype_bytes(DTYPE_BF16) = 2 bytes
 * per element, the inputs of the linear layers' GEMMs eg = dtype_bytes(dtype) +
 * dtype_scale_bytes(dtype) (2 in bf16, 1 in fp8, 1 + 1/32 in mxfp8, 1/2 + 1/16 in nvfp4: an element
 * with its share of its block's scale), dropout masks 1, the cross-entropy's logits 4 (fp32); the
 * byte counts of fused kernels sum these sizes. The memory-bound operations are the kernels
 * Megatron-LM and Transformer Engine run, with their bytes read and written (docs/model.md,
 * "Compute"). */
#include "cost/transformer.h"

#include <string.h>

typedef struct {
    double n, ns;                     /* tokens, tokens for norms and dropout */
    double t;                         /* tensor-parallel size */
    double et;                        /* expert tensor-parallel size, dividing t */
    double routed; /* tokens the GPU routes to experts: n / (t / et), its share of its
                    * tensor-parallel group's n (the expert grid's, layout.h) */
    double h, hq, hkv, f, v, s, b, a; /* hq: Q's width, a x head; hkv: K's, kv_heads x head */
    double head;   /* a head's QK width: head_dim, or MLA's qk_nope + qk_rope */
    double head_v; /* a head's V width: head, or MLA's v_head_dim */
    double ho;     /* the attention output's width, a x head_v */
    double hv_t;   /* this GPU's V width: kv_heads x head_v / t */
    double sq;                        /* queries on this GPU: s / c under context parallelism */
    double keys;  /* keys a query's scores span: s, or in a windowed block the sliding
                   * window when shorter (block_dims) */
    double kernel_s; /* the sequence an attention kernel runs: s, or its chunk of s / c under
                      * ring context parallelism */
    double work;  /* of the sq x keys scores counted, the causal share the kernels do */
    double hkv_t; /* this GPU's K (or V) width: h_kv / t (t divides the
                   * KV heads, as Megatron-Core requires) */
    Dtype dtype;  /* of the linear layers' GEMMs */
    double e16;   /* bytes of a bf16 element */
    double eg;    /* bytes of a linear layer's GEMM input element, with its scale's share */
    double copies; /* quantized copies a cast writes: the GEMM's and the weight gradient's
                    * (a transpose, a column-wise copy), or one (Shard.fp8_one_copy) */
    gboolean amax_pass; /* Shard.amax_pass */
    double mask;        /* bytes of a hidden dropout mask's element: 1, or 0 at p = 0 */
    gboolean attention_dropout; /* the attention probabilities' dropout runs (p > 0) */
    CeFusion ce_fusion;         /* Shard.ce_fusion */
} Dims;

static Dims dims(const ModelSpec *m, Shard sh)
{
    Dims d;
    d.s = m->seq_length;
    d.sq = d.s / MAX(sh.cp, 1);
    d.keys = d.s; /* causal, the kernels do half of s x s */
    d.work = 0.5;
    d.kernel_s = sh.cp_all_to_all ? d.s : d.sq;
    d.b = sh.micro_batch;
    d.n = d.sq * d.b;
    d.t = sh.tp;
    d.et = sh.etp > 0 ? sh.etp : sh.tp;
    d.routed = d.n / (d.t / d.et);
    d.ns = sh.sequence_parallel ? d.n / d.t : d.n;
    d.h = m->hidden_size;
    d.a = m->attention_heads;
    d.head = transformer_head_dim(m);
    d.head_v = m->kv_lora_rank > 0 ? m->v_head_dim : d.head;
    d.hq = d.a * d.head;
    d.hkv = (double)m->kv_heads * d.head;
    d.hkv_t = d.hkv / d.t;
    d.ho = d.a * d.head_v;
    d.hv_t = (double)m->kv_heads * d.head_v / d.t;
    d.f = m->ffn_hidden_size;
    d.v = m->vocab_size;
    d.dtype = sh.dtype;
    d.e16 = dtype_bytes(DTYPE_BF16);
    d.eg = dtype_bytes(sh.dtype) + dtype_scale_bytes(sh.dtype);
    d.copies = sh.fp8_one_copy && sh.dtype == DTYPE_FP8 ? 1 : 2;
    d.amax_pass = sh.amax_pass;
    /* PyTorch's dropout returns its input at p = 0: no kernel, no mask */
    d.mask = m->hidden_dropout > 0 ? 1 : 0;
    d.attention_dropout = m->attention_dropout > 0;
    d.ce_fusion = sh.ce_fusion;
    return d;
}

/* dims() for a block of kind `block`: a windowed block's queries see at
 * most w = sliding_window keys; causally query i sees min(i + 1, w), so of
 * the s x w counted the kernels do s w - w^2 / 2 (half when the window
 * spans the sequence). */
static Dims block_dims(const ModelSpec *m, Block block, Shard sh)
{
    Dims d = dims(m, sh);
    if (block == BLOCK_WINDOW) {
        d.keys = MIN(d.s, m->sliding_window);
        d.work = 1 - d.keys / (2 * d.s);
    }
    return d;
}

static gboolean gpt_style(const ModelSpec *m)
{
    return m->mlp == MLP_GELU;
}

/* The MLP's up projection is two, gate and up (SwiGLU's); else one. */
static gboolean gated(const ModelSpec *m)
{
    return m->mlp == MLP_SWIGLU;
}

/* Rotary positions on Q and K: Llama-style models; not GPT's (learned
 * positions), nor a hybrid model's (transformers' NemotronHAttention
 * applies none). */
static gboolean rotary(const ModelSpec *m)
{
    return !gpt_style(m) && !m->hybrid_layers;
}

static void add(OpList *l, const char *name, double flops, double bytes, int gemm)
{
    g_assert(l->n < TRANSFORMER_MAX_OPS);
    l->module[l->n] = 0;
    l->ops[l->n++] = (Op){.name = name, .flops = flops, .bytes = bytes, .gemm = gemm};
}

/* Operations `from` to `to` (excluded) belong to recomputation module
 * `module` (OpList.module). */
static void tag(OpList *l, int from, int to, RecomputeModule module)
{
    for (int i = from; i < to; i++)
        l->module[i] = 1 << module;
}

/* The modules a recomputation `rc` replays of the Shard's: its
 * recompute_modules (core_attn left out) under selective, none else. */
static int replayed_modules(Shard sh, Recompute rc)
{
    if (rc != RECOMPUTE_SELECTIVE)
        return 0;
    return sh.recompute_modules ? sh.recompute_modules : 1 << RECOMPUTE_CORE_ATTN;
}

/* The last operation added does not do `idle` of its FLOPs (Op.idle). */
static void idle_last(OpList *l, double idle)
{
    l->ops[l->n - 1].idle = idle;
}

/* Each narrow dtype's cast kernel, by name. */
static const char *const cast_names[] = {
#define DTYPE(ID, name, ...) [DTYPE_##ID] = name "_cast",
#include "base/dtypes.def"
#undef DTYPE
};

/* The quantization of an (m x k) GEMM input to `dtype`, as Transformer
 * Engine casts it: read bf16, write the quantized copy for the GEMM and
 * the one the weight gradient reads (fp8's transpose; the block formats'
 * column-wise copy, quantized along the other dimension), or per-tensor
 * fp8's one copy on a GPU whose FP8 GEMMs take any layout (Transformer
 * Engine's quantizer.cpp makes no transpose where
 * nvte_is_non_tn_fp8_gemm_supported, compute capability 10.x), 2 FLOPs an
 * element (scaling, and the amax its recipe needs); under current scaling
 * an amax kernel reads the input first. Nothing for bf16. The weights'
 * cast is left out: Megatron-LM casts them on a step's first micro-batch
 * only (docs/model.md, "Precision recipes"). */
static void quantize(OpList *l, const Dims *d, Dtype dtype, double m, double k)
{
    if (dtype == DTYPE_BF16)
        return;
    if (d->amax_pass)
        add(l, "amax", m * k, d->e16 * m * k, 0);
    add(l, cast_names[dtype], 2 * m * k, (d->e16 + d->copies * d->eg) * m * k, 0);
}

/* A GEMM of an (m x k) input by a (k x n) weight into an (m x n) bf16
 * output, its inputs of `dtype` with their scales, already quantized; its
 * shape sets its tiles and waves (roofline.h). */
static void matmul(OpList *l, const Dims *d, Dtype dtype, const char *name, double m, double k,
                   double n)
{
    double q = dtype_bytes(dtype) + dtype_scale_bytes(dtype);
    add(l, name, 2 * m * k * n, d->e16 * m * n + q * (m * k + k * n), 1);
    Op *op = &l->ops[l->n - 1];
    op->m = m;
    op->k = k;
    op->n = n;
    op->batch = 1;
    op->dtype = dtype;
    op->wgrad = 1;
}

/* A GEMM whose input is quantized on its own rows (quantize, matmul). */
static void gemm(OpList *l, const Dims *d, Dtype dtype, const char *name, double m, double k,
                 double n)
{
    quantize(l, d, dtype, m, k);
    matmul(l, d, dtype, name, m, k, n);
}

/* Norm over `tokens` x h: reads and writes bf16. */
static void norm(OpList *l, const char *name, double tokens, double h)
{
    add(l, name, 5 * tokens * h, 4 * tokens * h, 0);
}

/* A block's norm over `tokens` x h before its column-parallel GEMM (qkv,
 * mlp_up), and the quantization of that GEMM's input: Transformer
 * Engine's LayerNormLinear normalizes and quantizes this GPU's rows, s/t
 * of them under sequence parallelism, before the all-gather (which moves
 * the quantized copy: module/layernorm_linear.py). Where the scale needs
 * no amax of the output (delayed scaling, MXFP8) the norm's kernel writes
 * the quantized copies itself (with_quantized_norm: read 2, write them);
 * under current scaling it writes bf16 and takes the amax, and a cast
 * follows, with no amax pass of its own. */
static void norm_quantized(OpList *l, const Dims *d, double tokens, double h)
{
    double q = d->copies * d->eg;
    if (d->dtype == DTYPE_BF16) {
        norm(l, "norm", tokens, h);
    } else if (!d->amax_pass) {
        add(l, "norm", 5 * tokens * h, (d->e16 + q) * tokens * h, 0);
    } else {
        norm(l, "norm", tokens, h);
        add(l, cast_names[d->dtype], 2 * tokens * h, (d->e16 + q) * tokens * h, 0);
    }
}

/* Dropout and residual add: reads two tensors, writes one and a mask
 * (none without dropout). */
static void dropout_residual(OpList *l, const Dims *d, double tokens, double h)
{
    add(l, "dropout_add", 2 * tokens * h, (6 + d->mask) * tokens * h, 0);
}

/* The attention core, which selective recomputation replays: scores,
 * softmax, its dropout, and the product with V, on this GPU's heads (QK^T
 * contracts over a head's QK width, score x V makes its V width). */
static void attention_core(OpList *out, const Dims *d)
{
    int first = out->n;
    double scores = d->b * (d->a / d->t) * d->sq * d->keys;
    add(out, "scores", 2 * d->b * d->sq * d->keys * d->hq / d->t,
        2 * d->n * (d->hq / d->t + d->hkv_t) + 2 * scores, 1);
    add(out, "softmax", 5 * scores, 4 * scores, 0);
    if (d->attention_dropout)
        add(out, "attn_dropout", scores, 5 * scores, 0);
    add(out, "attn_v", 2 * d->b * d->sq * d->keys * d->ho / d->t,
        2 * scores + 2 * d->n * (d->hv_t + d->ho / d->t), 1);
    tag(out, first, out->n, RECOMPUTE_CORE_ATTN);
}

/* FlashAttention (Dao 2023, "FlashAttention-2"; docs/model.md,
 * "FlashAttention"). Its kernels skip the blocks of the causal mask above
 * the diagonal, so they do about half of the s x s work (Dao, section
 * 3.1.1), while FLOPs are counted over all of it, as Megatron-LM and Dao
 * (section 4.2) count them (with a sliding window of w keys, over s x w,
 * of which the kernels do 1 - w / 2s: Dims.work). On the work they do, they run at their own
 * fractions of the GPU's peak: FlashAttention-2 reaches 50 to 73 % of an
 * A100's in the forward and at most 63 % in the backward (Dao, abstract and
 * section 1), FlashAttention-3 75 % of an H100's in the forward (Shah et
 * al. 2024); we take 60 % and 50 %, causal training shapes being below the
 * best case (GPU_ATTENTION_*_EFFICIENCY, the defaults of a GPU that gives
 * none: attention_forward_efficiency and attention_backward_efficiency). The backward does 2.5
 * times the forward's FLOPs: its five matrix multiplies against two, S = QK^T recomputed (Dao,
 * section 4.1). */

static const char FLASH_FORWARD[] = "flash_attention";
static const char FLASH_BACKWARD_REST[] = "flash_attention_bwd_rest";

/* The last operation added is a FlashAttention kernel: it does the
 * causal share of its FLOPs, and its products run over the QK head width
 * (Op.k) and the V head width (Op.m) of a sequence (Op.n), which set its
 * efficiency (flash_s). */
static void flash_last(OpList *l, const Dims *d)
{
    idle_last(l, 1 - d->work);
    l->ops[l->n - 1].k = d->head;
    l->ops[l->n - 1].m = d->head_v;
    l->ops[l->n - 1].n = d->kernel_s;
}

/* FlashAttention's forward, one kernel: QK^T and score x V FLOPs as the
 * standard core's; it reads Q, K and V once and writes the output and
 * the fp32 logsumexp of each head and token, with no s x s traffic. */
static void flash_forward(OpList *out, const Dims *d)
{
    add(out, FLASH_FORWARD, 2 * d->b * d->sq * d->keys * (d->hq + d->ho) / d->t,
        2 * d->n * (d->hq / d->t + d->hkv_t + d->hv_t) + 2 * d->n * d->ho / d->t +
            4 * d->n * d->a / d->t,
        1);
    flash_last(out, d);
}

/* What the fused backward does beyond twice the forward (which the
 * emitter charges every backward): its recomputation of S = QK^T, whose
 * 2 b s^2 h / t FLOPs are counted (hardware FLOPs, not model FLOPs), and
 * the whole backward's lower efficiency; see flash_s. */
static void flash_backward_rest(OpList *out, const Dims *d)
{
    add(out, FLASH_BACKWARD_REST, 2 * d->b * d->sq * d->keys * d->hq / d->t, 0, 1);
    flash_last(out, d);
}

/* The time of FlashAttention's operations, or -1 for any other. The
 * forward: its work at the forward efficiency (or its HBM traffic,
 * whichever is slower). The backward's rest, whose counted FLOPs R are
 * the recomputed QK^T's, U d_qk for a QK head width d_qk (Op.k) and a V
 * one d_v (Op.m): the backward kernel, five products of U (3 d_qk + 2
 * d_v) FLOPs (the cuDNN frontend's SDPA benchmark counts them so:
 * benchmark_single_sdpa.py), x its work share at the backward efficiency,
 * less twice the forward's compute time, U (d_qk + d_v) a pass, which the
 * emitter has charged already (none if the backward were the faster);
 * with d_qk = d_v, 5 R against 4 R (Dao 2023's 2.5 times the forward).
 * Both efficiencies are the GPU's at the kernel's head dimension, the
 * mean of d_qk and d_v, and at its sequence: times its
 * attention_head_dim_factor and attention_seq_factor (docs/model.md,
 * "FlashAttention"). */
static double flash_s(const GpuSpec *gpu, const Op *op)
{
    double qk = op->k, v = op->m;
    double work = op->flops * (1 - op->idle) / gpu->peak_flops;
    work /= gpu_curve_at(&gpu->attention_head_dim, (qk + v) / 2, 1) *
            gpu_curve_at(&gpu->attention_seq, op->n, 1);
    double forward = gpu_attention_efficiency(gpu, TRUE);
    if (strcmp(op->name, FLASH_FORWARD) == 0)
        return MAX(work / forward, op->bytes / (gpu->memory_Bps * gpu->memory_efficiency)) +
               gpu->launch_s;
    if (strcmp(op->name, FLASH_BACKWARD_REST) == 0)
        return MAX(0, work * ((3 * qk + 2 * v) / qk / gpu_attention_efficiency(gpu, FALSE) -
                              2 * (qk + v) / qk / forward));
    return -1;
}

double transformer_head_dim(const ModelSpec *m)
{
    if (m->kv_lora_rank > 0)
        return m->qk_nope_head_dim + m->qk_rope_head_dim;
    return m->head_dim > 0 ? m->head_dim : (double)m->hidden_size / m->attention_heads;
}

gboolean transformer_moe(const ModelSpec *m)
{
    return m->experts > 1;
}

/* The decoder layer whose kind layer `layer` has: itself, or for a
 * multi-token-prediction layer (layer >= layers) the last. */
static int kind_of(const ModelSpec *m, int layer)
{
    return MIN(layer, m->layers - 1);
}

gboolean transformer_layer_moe(const ModelSpec *m, int layer)
{
    layer = kind_of(m, layer);
    if (m->hybrid_layers)
        return m->hybrid_layers[layer] == HYBRID_MOE;
    return transformer_moe(m) && layer >= m->first_dense_layers &&
           layer % m->moe_layer_frequency == 0;
}

gboolean transformer_layer_windowed(const ModelSpec *m, int layer)
{
    if (m->sliding_window <= 0 || m->hybrid_layers)
        return FALSE;
    layer = kind_of(m, layer);
    if (m->window_layers)
        return m->window_layers[layer];
    return layer >= m->window_from &&
           (m->window_period == 0 || (layer + 1) % m->window_period != 0);
}

gboolean transformer_block_attends(Block block)
{
    return block == BLOCK_ATTENTION || block == BLOCK_WINDOW;
}

/* The layers' kinds (transformer_layer_kind) and their blocks: a
 * transformer layer's attention (full or windowed) then its MLP (dense
 * or MoE); a hybrid model's layer, one block, from KIND_HYBRID on. */
enum { KIND_HYBRID = 4 };
static const struct {
    Block blocks[TRANSFORMER_BLOCKS];
    int n;
} layer_kinds[TRANSFORMER_LAYER_KINDS] = {
    [0] = {.blocks = {BLOCK_ATTENTION, BLOCK_MLP}, .n = 2},
    [1] = {.blocks = {BLOCK_ATTENTION, BLOCK_MOE}, .n = 2},
    [2] = {.blocks = {BLOCK_WINDOW, BLOCK_MLP}, .n = 2},
    [3] = {.blocks = {BLOCK_WINDOW, BLOCK_MOE}, .n = 2},
    [KIND_HYBRID + HYBRID_MAMBA] = {.blocks = {BLOCK_MAMBA}, .n = 1},
    [KIND_HYBRID + HYBRID_ATTENTION] = {.blocks = {BLOCK_ATTENTION}, .n = 1},
    [KIND_HYBRID + HYBRID_MLP] = {.blocks = {BLOCK_MLP}, .n = 1},
    [KIND_HYBRID + HYBRID_MOE] = {.blocks = {BLOCK_MOE}, .n = 1},
};

int transformer_layer_kind(const ModelSpec *m, int layer)
{
    if (m->hybrid_layers)
        return KIND_HYBRID + m->hybrid_layers[kind_of(m, layer)];
    return 2 * transformer_layer_windowed(m, layer) + transformer_layer_moe(m, layer);
}

int transformer_kind_blocks(int kind)
{
    g_assert(kind >= 0 && kind < TRANSFORMER_LAYER_KINDS);
    return layer_kinds[kind].n;
}

Block transformer_kind_block(int kind, int i)
{
    g_assert(i >= 0 && i < transformer_kind_blocks(kind));
    return layer_kinds[kind].blocks[i];
}

int transformer_layer_blocks(const ModelSpec *m, int layer)
{
    return transformer_kind_blocks(transformer_layer_kind(m, layer));
}

Block transformer_layer_block(const ModelSpec *m, int layer, int i)
{
    return transformer_kind_block(transformer_layer_kind(m, layer), i);
}

void transformer_block_counts(const ModelSpec *m, int layers[TRANSFORMER_BLOCK_KINDS])
{
    int of_kind[TRANSFORMER_LAYER_KINDS] = {0};
    for (int l = 0; l < m->layers; l++)
        of_kind[transformer_layer_kind(m, l)]++;
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++)
        layers[b] = 0;
    for (int k = 0; k < TRANSFORMER_LAYER_KINDS; k++)
        for (int i = 0; i < layer_kinds[k].n; i++)
            layers[layer_kinds[k].blocks[i]] += of_kind[k];
}

int transformer_block_layers(const ModelSpec *m, Block block)
{
    int layers[TRANSFORMER_BLOCK_KINDS];
    transformer_block_counts(m, layers);
    return layers[block];
}

int transformer_model_blocks(const ModelSpec *m)
{
    int n = 0;
    for (int l = 0; l < m->layers; l++)
        n += transformer_layer_blocks(m, l);
    return n;
}

/* Rows all the GPU's routed experts get together: the tokens it and the
 * other ranks of its expert-parallel group route, n k expert_load over
 * t / et (uniform routing: as many come as go). */
static double expert_rows(const ModelSpec *m, const Dims *d, Shard sh)
{
    return d->routed * m->experts_per_token * (sh.expert_load > 0 ? sh.expert_load : 1);
}

/* The probability that none of a token's k experts, routed uniformly over
 * E, is among `held` of them: C(E - held, k) / C(E, k). */
static double none_held(int experts, int k, double held)
{
    double none = 1;
    for (int i = 0; i < k && none > 0; i++)
        none *= MAX(experts - held - i, 0) / (experts - i);
    return none;
}

/* The probability that a token routed as the model routes it (k of E
 * experts, among those of its router_topk_groups best of router_groups
 * groups of E / groups experts, all groups alike) has none of its experts
 * in the range [lo, hi): over the C(groups, topk) sets of groups, each
 * overlapping the range by x of its M = topk E / groups experts,
 * C(M - x, k) / C(M, k) (none_held); the sets counted by the sum of their
 * overlaps, one group at a time. */
static double none_in(const ModelSpec *m, double lo, double hi)
{
    int groups = MAX(m->router_groups, 1), topk = MAX(m->router_topk_groups, 1);
    double size = (double)m->experts / groups;
    if (groups == 1)
        return none_held(m->experts, m->experts_per_token, hi - lo);
    /* sets[j][s]: the sets of j groups so far whose overlaps sum to s */
    int most = m->experts;
    g_autofree double *sets = g_new0(double, (gsize)(topk + 1) * (most + 1));
    sets[0] = 1;
    for (int g = 0; g < groups; g++) {
        int x = (int)(MAX(MIN(hi, (g + 1) * size) - MAX(lo, g * size), 0) + 0.5);
        for (int j = MIN(g + 1, topk); j >= 1; j--)
            for (int s = most; s >= x; s--)
                sets[j * (most + 1) + s] += sets[(j - 1) * (most + 1) + s - x];
    }
    double all = 0, none = 0;
    for (int s = 0; s <= most; s++) {
        double n = sets[topk * (most + 1) + s];
        all += n;
        none += n * none_held((int)(topk * size + 0.5), m->experts_per_token, s);
    }
    return none / all;
}

/* The flex dispatcher's token rows, as transformer.h says: the mean over
 * the group's nodes (or GPUs, in one node) of a token's chance of an
 * expert there, experts laid out over the ep GPUs in order. */
static double flex_rows(const ModelSpec *m, const Dims *d, Shard sh, int per_node)
{
    int ep = MAX(sh.ep, 1), g = CLAMP(per_node, 1, ep), units = g < ep ? ep / g : ep;
    double load = sh.expert_load > 0 ? sh.expert_load : 1, held = (double)m->experts / units;
    double there = 0; /* the mean chance of an expert on a unit */
    for (int u = 0; u < units; u++)
        there += (1 - none_in(m, u * held, (u + 1) * held)) / units;
    return d->routed * load * units * there;
}

double transformer_moe_dispatch_bytes(const ModelSpec *m, Shard sh, MoeDispatcher how,
                                      int per_node)
{
    Dims d = dims(m, sh);
    double rows = how == MOE_DISPATCHER_ALL_TO_ALL ? expert_rows(m, &d, sh)
                  : how == MOE_DISPATCHER_FLEX     ? flex_rows(m, &d, sh, per_node)
                                                   : MAX(sh.ep, 1) * d.routed;
    return d.e16 * rows * d.h;
}

/* `batch` GEMMs of one shape in one kernel (a grouped GEMM), each with
 * weights of its own. */
static void grouped_gemm(OpList *l, const Dims *d, Dtype dtype, const char *name, double batch,
                         double m, double k, double n)
{
    int first = l->n;
    gemm(l, d, dtype, name, m, k, n);
    for (int i = first; i < l->n; i++) {
        l->ops[i].flops *= batch;
        l->ops[i].bytes *= batch;
    }
    l->ops[l->n - 1].batch = batch;
}

/* An MLP's activation over `rows` x f: fused GeLU or SwiGLU, as the dense
 * block's. */
static void mlp_activation(OpList *l, const ModelSpec *m, const char *name, double rows, double f)
{
    add(l, name, 8 * rows * f, (gated(m) ? 6 : 4) * rows * f, 0);
}

/* The shared experts: a dense MLP of shared_experts x f_e, split over t,
 * on the n tokens. */
static void shared_expert_ops(const ModelSpec *m, const Dims *d, OpList *out)
{
    if (m->shared_experts == 0)
        return;
    double fs_t = m->shared_experts * (m->moe_ffn_hidden_size / d->t);
    gemm(out, d, d->dtype, "shared_up", d->n, d->h, (gpt_style(m) ? 1 : 2) * fs_t);
    mlp_activation(out, m, "shared_activation", d->n, fs_t);
    gemm(out, d, d->dtype, "shared_down", d->n, fs_t, d->h);
}

/* A MoE layer's MLP block between its norm and its dropout (transformer.h,
 * transformer_moe): router, permutation (read and write each token copy on the way
 * out and back) of the tokens the GPU routes, shared experts (f_e split
 * over t, on the n tokens), the local experts' grouped GEMMs (f_e split
 * over et). */
static void moe_ops(const ModelSpec *m, const Dims *d, Shard sh, OpList *out)
{
    double fe_t = m->moe_ffn_hidden_size / d->et, up = gated(m) ? 2 : 1;
    double rows = expert_rows(m, d, sh), local = m->experts / (double)MAX(sh.ep, 1);
    gemm(out, d, DTYPE_BF16, "router", d->routed, d->h, m->experts);
    add(out, "moe_permute", 0, 2 * d->e16 * (d->routed + rows) * d->h, 0);
    if (!sh.moe_shared_apart)
        shared_expert_ops(m, d, out);
    /* dropless, the GPU of the most rows sets the pace, and across GPUs
     * the mean is the work done; padded, every GPU computes its capacity */
    double imbalance = sh.expert_padded ? 0 : 1 - 1 / (sh.expert_load > 0 ? sh.expert_load : 1);
    grouped_gemm(out, d, d->dtype, "experts_up", local, rows / local, d->h, up * fe_t);
    idle_last(out, imbalance);
    int act = out->n;
    mlp_activation(out, m, "experts_activation", rows, fe_t);
    grouped_gemm(out, d, d->dtype, "experts_down", local, rows / local, fe_t, d->h);
    idle_last(out, imbalance);
    /* the activation and its output's cast (none in bf16), not the GEMM: moe_act */
    tag(out, act, out->n - 1, RECOMPUTE_MOE_ACT);
}

/* What an MLP of `rows` x f (per GPU) keeps for its backward, as the
 * dense block: GeLU's input, or SwiGLU's gate and up, in bf16, and the
 * down GEMM's input. */
static double mlp_kept_bytes(const ModelSpec *m, const Dims *d, double rows, double f_t)
{
    return ((gated(m) ? 2 : 1) * d->e16 + d->eg) * rows * f_t;
}

/* A MoE block's: the router's fp32 probabilities of the routed tokens, the
 * permuted tokens (the experts' first GEMM input) and each MLP's own. */
static double moe_kept_bytes(const ModelSpec *m, const Dims *d, Shard sh)
{
    double rows = expert_rows(m, d, sh), fe = m->moe_ffn_hidden_size;
    return 4 * d->routed * m->experts + d->eg * rows * d->h +
           mlp_kept_bytes(m, d, rows, fe / d->et) +
           mlp_kept_bytes(m, d, d->n, m->shared_experts * (fe / d->t));
}

Shard transformer_shard(const PlanSpec *plan)
{
    /* padded to capacity, every expert gets its capacity; dropless, the
     * busiest sets the pace */
    int load =
        plan->moe_capacity_percent > 0 ? plan->moe_capacity_percent : plan->moe_imbalance_percent;
    return (Shard){.micro_batch = plan->micro_batch_size,
                   .tp = plan->tp,
                   .sequence_parallel = plan->sequence_parallel,
                   .attention = plan->attention,
                   .dtype = plan->dtype,
                   .amax_pass =
                       dtype_amax_pass(plan->dtype) ||
                       (plan->dtype == DTYPE_FP8 && plan->fp8_recipe == FP8_RECIPE_TENSORWISE),
                   .ep = plan->ep,
                   .etp = plan_field_value(plan, PLAN_ETP),
                   .expert_load = load / 100.0,
                   .cp = plan->cp,
                   .expert_padded = plan->moe_capacity_percent > 0,
                   .cp_all_to_all = plan->cp_algorithm == CP_ALL_TO_ALL,
                   .ce_fusion = plan->cross_entropy_fusion,
                   .mtp = plan->mtp_num_layers,
                   .recompute_modules = plan->recompute_modules,
                   .norm_keeps_output = plan->memory_efficient_layer_norm,
                   /* beside an exchange: with ep > 1 (expert_parallel.c) */
                   .moe_shared_apart = plan->moe_shared_expert_overlap && plan->ep > 1};
}

Shard transformer_shard_on(const PlanSpec *plan, const GpuSpec *gpu)
{
    Shard sh = transformer_shard(plan);
    sh.fp8_one_copy = gpu && gpu->fp8_any_layout;
    return sh;
}

double transformer_tokens(const ModelSpec *m, Shard sh)
{
    return dims(m, sh).n;
}

double transformer_q_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    return d.e16 * d.n * d.hq / d.t;
}

double transformer_kv_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    return d.e16 * d.n * (d.hkv_t + d.hv_t);
}

double transformer_out_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    return d.e16 * d.n * d.ho / d.t;
}

/* DeepSeek-V2's multi-head latent attention between its norm and its
 * dropout (arXiv 2405.04434, section 2.1 and appendix C), as Megatron-Core
 * runs it (transformer/multi_latent_attention.py, MLASelfAttention, with
 * gpt_layer_specs.py's qk_layernorm spec), with q = q_lora_rank, c =
 * kv_lora_rank, r = qk_rope_head_dim, a / t heads on this GPU:
 * - the down-projections of Q (h x q) and of KV with the shared rotary key
 *   (h x (c + r)): TELinear "duplicated", whole on every GPU of the
 *   tensor-parallel group, on its rows (n_s: s/t of them with sequence
 *   parallelism); each casts its own input in fp8;
 * - the latents' RMSNorms, each fused into its up-projection
 *   (TELayerNormColumnParallelLinear: normalized and cast on this GPU's
 *   rows, then gathered);
 * - the up-projections, split by column: Q's to a/t x (d_nope + r), KV's
 *   to a/t x (d_nope + d_v); without q_lora_rank Q's projection is h x
 *   a/t (d_nope + r) straight from the norm;
 * - the decoupled RoPE, Megatron-Core's fused kernels
 *   (fusions/fused_mla_yarn_rope_apply.py): Q's r columns of each head
 *   rotated in place (read and write 2 bytes an element), and K's: read
 *   the up-projected KV and the rotary key, write K (the key broadcast to
 *   every head) and V; 3 FLOPs a rotated element;
 * - attention, QK^T over d_nope + r and score x V over d_v;
 * - the output projection, a/t x d_v by h, split by row. */
static void latent_attention_ops(const ModelSpec *m, const Dims *d, Shard sh, OpList *out)
{
    double q = m->q_lora_rank, c = m->kv_lora_rank, r = m->qk_rope_head_dim;
    double heads = d->a / d->t, nope = m->qk_nope_head_dim;
    if (q > 0)
        gemm(out, d, d->dtype, "q_down", d->ns, d->h, q);
    gemm(out, d, d->dtype, "kv_down", d->ns, d->h, c + r);
    int up = out->n; /* from the latents' norms to RoPE: mla_up_proj */
    if (q > 0)
        norm_quantized(out, d, d->ns, q);
    else
        quantize(out, d, d->dtype, d->ns, d->h);
    norm_quantized(out, d, d->ns, c);
    matmul(out, d, d->dtype, q > 0 ? "q_up" : "q_proj", d->n, q > 0 ? q : d->h, d->hq / d->t);
    matmul(out, d, d->dtype, "kv_up", d->n, c, heads * (nope + d->head_v));
    add(out, "rope", 3 * d->n * heads * r, 4 * d->n * heads * r, 0);
    add(out, "rope_kv", 3 * d->n * heads * r,
        d->e16 * d->n * (heads * (nope + d->head_v) + r + d->hkv_t + d->hv_t), 0);
    tag(out, up, out->n, RECOMPUTE_MLA_UP_PROJ);
    if (sh.attention == ATTENTION_FLASH)
        flash_forward(out, d);
    else
        attention_core(out, d);
    gemm(out, d, d->dtype, "out_proj", d->n, d->ho / d->t, d->h);
}

/* A Mamba-2 mixer's widths on this GPU, heads and groups split over t
 * (Megatron-Core's MambaMixer: nheads_local_tp, ngroups_local_tp). */
typedef struct {
    double heads, inner; /* heads, d_inner = heads x head dim */
    double groups, bc;   /* groups, and B and C's columns together, 2 groups N */
    double conv;         /* channels the convolution runs over: x, B and C */
    double in;           /* in_proj's columns: z, x, B, C and dt */
} MambaDims;

static MambaDims mamba_dims(const ModelSpec *m, const Dims *d)
{
    MambaDims k = {.heads = m->mamba_heads / d->t, .groups = m->mamba_groups / d->t};
    k.inner = k.heads * m->mamba_head_dim;
    k.bc = 2 * k.groups * m->ssm_state;
    k.conv = k.inner + k.bc;
    k.in = 2 * k.inner + k.bc + k.heads;
    return k;
}

/* A Mamba-2 mixer between its norm and its dropout (Dao and Gu 2024, arXiv
 * 2405.21060, section 7; Megatron-Core's MambaMixer with mamba_ssm's fused
 * kernels; docs/model.md, "Hybrid models"), with P the head dimension, N
 * the state, Q the chunk (at most s), on this GPU's heads:
 * - in_proj, split by column, from the pre-norm fused into it;
 * - the causal depthwise conv1d over x, B and C with its SiLU: 2 FLOPs a
 *   tap and output element, read and write 2 bytes an element;
 * - the chunked SSD scan, its matrix multiplies a token: within its chunk
 *   C B^T (2 Q N a group) and the masked scores times X (2 Q P a head),
 *   the chunk's state B^T X (2 N P a head) and the output from the state
 *   passed in, C h (2 N P a head); the passing of the states from chunk to
 *   chunk is N P a head and chunk, left out. Its gate fused in
 *   (mamba_split_conv1d_scan_combined, as MambaMixer trains), it reads x,
 *   B, C, dt and z and writes y and y x silu(z) (2 bytes an element), and
 *   each chunk's fp32 state is written, read and written by the state
 *   passing and read again, 16 bytes an element of heads x P x N a chunk;
 * - the RMSNorm of each group's d_inner / n_groups columns, as the
 *   layers' norms;
 * - out_proj, split by row. */
static void mamba_ops(const ModelSpec *m, const Dims *d, OpList *out)
{
    MambaDims k = mamba_dims(m, d);
    double p = m->mamba_head_dim, n = m->ssm_state, q = MIN(m->chunk_size, d->s);
    matmul(out, d, d->dtype, "in_proj", d->n, d->h, k.in);
    add(out, "conv1d", 2 * m->conv_kernel * d->n * k.conv, 2 * d->e16 * d->n * k.conv, 0);
    add(out, "ssd_scan", d->n * (k.heads * (2 * q * p + 4 * n * p) + k.groups * 2 * q * n),
        d->e16 * d->n * (k.conv + k.heads + 3 * k.inner) + 16 * d->n / q * k.heads * p * n, 1);
    norm(out, "mamba_norm", d->n, k.inner);
    gemm(out, d, d->dtype, "out_proj", d->n, k.inner, d->h);
}

/* What a Mamba-2 mixer keeps for its backward beyond its norm's input and
 * in_proj's input: as mamba_ssm's mamba_split_conv1d_scan_combined saves
 * them, in_proj's output (z, x, B, C, dt in bf16; the convolution is
 * recomputed from it) and the scan's output y before its gate (bf16); the
 * group norm's input, y x silu(z) (bf16), and its fp32 1/rms a group; and
 * out_proj's input. */
static double mamba_kept_bytes(const ModelSpec *m, const Dims *d)
{
    MambaDims k = mamba_dims(m, d);
    return d->e16 * d->n * (k.in + 2 * k.inner) + 4 * d->n * k.groups + d->eg * d->n * k.inner;
}

void transformer_block_ops(const ModelSpec *m, Block block, Shard sh, OpList *out)
{
    Dims d = block_dims(m, block, sh);
    gboolean attends = transformer_block_attends(block), latent = attends && m->kv_lora_rank > 0;
    out->n = 0;
    if (block == BLOCK_MOE || latent) { /* a norm apart: layernorm's */
        norm(out, "norm", d.ns, d.h);
        tag(out, 0, out->n, RECOMPUTE_LAYERNORM);
    } else
        norm_quantized(out, &d, d.ns, d.h);
    if (latent) {
        latent_attention_ops(m, &d, sh, out);
    } else if (attends) {
        matmul(out, &d, d.dtype, "qkv", d.n, d.h, d.hq / d.t + 2 * d.hkv_t);
        /* Qwen3: RMSNorm of each head of Q and K (read and write 2 bytes
         * an element, 5 FLOPs as the other norms) */
        if (m->qk_norm)
            norm(out, "qk_norm", d.n, d.hq / d.t + d.hkv_t);
        /* Llama: rotary embedding of Q and K, Transformer Engine's fused
         * kernel (read and write 2 bytes an element, 3 FLOPs) */
        if (rotary(m))
            add(out, "rope", 3 * d.n * (d.hq / d.t + d.hkv_t), 4 * d.n * (d.hq / d.t + d.hkv_t), 0);
        if (sh.attention == ATTENTION_FLASH)
            flash_forward(out, &d);
        else
            attention_core(out, &d);
        gemm(out, &d, d.dtype, "out_proj", d.n, d.hq / d.t, d.h);
    } else if (block == BLOCK_MOE) {
        moe_ops(m, &d, sh, out);
    } else if (block == BLOCK_MAMBA) {
        mamba_ops(m, &d, out);
    } else {
        double up = gated(m) ? 2 * d.f : d.f; /* SwiGLU: gate and up */
        matmul(out, &d, d.dtype, "mlp_up", d.n, d.h, up / d.t);
        /* Megatron's fused bias and GeLU (read 2, write 2 bytes an element
         * of n x f/t), or fused SwiGLU (read gate and up, 4; write 2) */
        add(out, "activation", 8 * d.n * d.f / d.t,
            gated(m) ? 6 * d.n * d.f / d.t : 4 * d.n * d.f / d.t, 0);
        gemm(out, &d, d.dtype, "mlp_down", d.n, d.f / d.t, d.h);
    }
    dropout_residual(out, &d, d.ns, d.h);
}

void transformer_moe_apart_ops(const ModelSpec *m, Shard sh, OpList *out)
{
    Dims d = block_dims(m, BLOCK_MOE, sh);
    out->n = 0;
    if (sh.moe_shared_apart)
        shared_expert_ops(m, &d, out);
}

void transformer_block_replay_split(const ModelSpec *m, Block block, Shard sh, Recompute rc,
                                    OpList *replay, OpList *rest)
{
    Dims d = block_dims(m, block, sh);
    gboolean flash = sh.attention == ATTENTION_FLASH, attends = transformer_block_attends(block);
    replay->n = rest->n = 0;
    int modules = replayed_modules(sh, rc);
    if (rc == RECOMPUTE_FULL) {
        transformer_block_ops(m, block, sh, replay);
    } else if (modules) { /* the forward's operations of the modules, in order */
        OpList forward;
        transformer_block_ops(m, block, sh, &forward);
        for (int i = 0; i < forward.n; i++)
            if (forward.module[i] & modules) {
                replay->module[replay->n] = forward.module[i];
                replay->ops[replay->n++] = forward.ops[i];
            }
    }
    /* FlashAttention has no core left to replay: it recomputes the scores
     * inside its backward, under any rc */
    if (attends && flash)
        flash_backward_rest(rest, &d);
}

void transformer_block_replay_ops(const ModelSpec *m, Block block, Shard sh, Recompute rc,
                                  OpList *out)
{
    OpList rest;
    transformer_block_replay_split(m, block, sh, rc, out, &rest);
    for (int i = 0; i < rest.n; i++) {
        g_assert(out->n < TRANSFORMER_MAX_OPS);
        out->ops[out->n++] = rest.ops[i];
    }
}

void transformer_embedding_ops(const ModelSpec *m, Shard sh, OpList *out)
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
    out->ops[out->n - 1].wgrad = 2; /* a scatter-add into the table */
    if (d.mask > 0)
        add(out, "embedding_dropout", d.ns * d.h, 5 * d.ns * d.h, 0);
}

/* The loss's cross-entropy over the logits, bytes per logit this GPU
 * holds, by implementation (docs/model.md, "The head"), and the softmax or
 * gradient it keeps for its backward.
 * - none, Megatron-Core's VocabParallelCrossEntropy
 *   (tensor_parallel/cross_entropy.py): forward, the cast to fp32 (read 2,
 *   write 4), the max (read 4), the max subtracted (read 4, write 4), exp
 *   in place (read 4, write 4), the sum (read 4), the division into the
 *   softmax it keeps (read 4, write 4); backward, the softmax times the
 *   loss's gradient in place (read 4, write 4), then cast to the bf16
 *   logits' gradient (read 4, write 2).
 * - native, the same jit-fused (fusions/fused_cross_entropy.py): the fp32
 *   copy with the max (read 2, write 4), subtraction, exp and sum in one
 *   pass (read 4, write 4), the division (read 4, write 4); backward one
 *   kernel from the fp32 softmax to the bf16 gradient (read 4, write 2).
 * - te, Transformer Engine's Triton kernels (pytorch/triton/cross_entropy.py,
 *   up to 2.17): an online softmax over the bf16 logits (read 2), then the
 *   loss with the gradient written over the logits (read 2, write 2);
 *   backward, that gradient times the loss's in place (read 2, write 2);
 *   it keeps the bf16 logits, 2 bytes, where the others keep the fp32
 *   softmax, 4. */
typedef struct {
    double forward_bytes, backward_bytes, kept_bytes;
} CrossEntropy;
static const CrossEntropy cross_entropy[] = {
    [CE_FUSION_NONE] = {.forward_bytes = 38, .backward_bytes = 14, .kept_bytes = 4},
    [CE_FUSION_NATIVE] = {.forward_bytes = 22, .backward_bytes = 6, .kept_bytes = 4},
    [CE_FUSION_TE] = {.forward_bytes = 6, .backward_bytes = 4, .kept_bytes = 2},
};

void transformer_head_ops(const ModelSpec *m, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    out->n = 0;
    norm(out, "final_norm", d.ns, d.h);
    /* bf16 logits, n x V/t: the output layer is not one of Transformer
     * Engine's, so bf16 in fp8 training too */
    gemm(out, &d, DTYPE_BF16, "logits", d.n, d.h, d.v / d.t);
    double logits = d.n * d.v / d.t;
    const CrossEntropy *ce = &cross_entropy[d.ce_fusion];
    add(out, "loss", 5 * logits, ce->forward_bytes * logits, 0);
    out->ops[out->n - 1].backward = ce->backward_bytes / ce->forward_bytes;
    if (sh.mtp == 0)
        return;
    /* each MTP layer's logits by the shared output layer and its loss
     * (Megatron-Core's process_mtp_loss: output_layer, then the language
     * model's loss, one per MTP layer) */
    grouped_gemm(out, &d, DTYPE_BF16, "mtp_logits", sh.mtp, d.n, d.h, d.v / d.t);
    add(out, "mtp_loss", sh.mtp * 5 * logits, sh.mtp * ce->forward_bytes * logits, 0);
    out->ops[out->n - 1].backward = ce->backward_bytes / ce->forward_bytes;
}

/* A multi-token-prediction module's own operations (Megatron-Core's
 * MultiTokenPredictionLayer, transformer/multi_token_prediction.py): the
 * shared embedding's lookup of the tokens one further on (as the
 * embedding's), the RMSNorms of that embedding (enorm) and of the hidden
 * states (hnorm), their concatenation's projection eh_proj, 2h x h split
 * by column (its input cast on this GPU's rows, as a column-parallel
 * linear does), and the norm after its transformer layer (final_layernorm),
 * costed here before it. */
void transformer_mtp_ops(const ModelSpec *m, Shard sh, OpList *out)
{
    Dims d = dims(m, sh);
    transformer_embedding_ops(m, sh, out);
    norm(out, "enorm", d.ns, d.h);
    norm(out, "hnorm", d.ns, d.h);
    quantize(out, &d, d.dtype, d.ns, 2 * d.h);
    matmul(out, &d, d.dtype, "eh_proj", d.n, 2 * d.h, d.h / d.t);
    norm(out, "mtp_norm", d.ns, d.h);
}

double transformer_mtp_activation_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    /* the embedding's dropout mask, the two norms' inputs (bf16), the
     * projection's input (2h a token, a GEMM's), the final norm's input */
    return d.mask * d.ns * d.h + 2 * d.e16 * d.ns * d.h + d.eg * d.ns * 2 * d.h +
           d.e16 * d.ns * d.h;
}

/* Adam's states a parameter by how they are kept, and the bytes its step
 * moves a parameter: the bf16 gradient read (2), the states read and
 * written, and the bf16 parameter written (2), or read and written where
 * it is part of the main weight (4).
 * - fp32: main weight, momentum and variance, 4 each: 2 + 24 + 2 = 28;
 * - remainders: the main weight as the bf16 parameter and a 16-bit
 *   remainder (Apex's and Megatron-Core's store_param_remainders), fp32
 *   momentum and variance: 10; 2 + 20 + 4 = 26;
 * - bf16: bf16 momentum and variance updating the bf16 parameter (Apex's
 *   DistributedFusedAdam with dtype bf16, store_params off): 4;
 *   2 + 8 + 4 = 14;
 * - bf16_moments: fp32 main weight, bf16 momentum and variance
 *   (DeepSeek-V3, arXiv 2412.19437, section 3.3.3; Megatron-Core's
 *   precision-aware optimizer, exp_avg_dtype and exp_avg_sq_dtype bf16):
 *   8; 2 + 16 + 2 = 20. */
static const struct {
    double state_bytes, step_bytes;
} optimizer_states[] = {
    [OPTIMIZER_STATES_FP32] = {.state_bytes = 12, .step_bytes = 28},
    [OPTIMIZER_STATES_REMAINDERS] = {.state_bytes = 10, .step_bytes = 26},
    [OPTIMIZER_STATES_BF16] = {.state_bytes = 4, .step_bytes = 14},
    [OPTIMIZER_STATES_BF16_MOMENTS] = {.state_bytes = 8, .step_bytes = 20},
};

double transformer_optimizer_state_bytes(OptimizerStates how)
{
    return optimizer_states[how].state_bytes;
}

void transformer_optimizer_ops(double params, OptimizerStates how, OpList *out)
{
    out->n = 0;
    /* the gradients' norm for clipping, before the step: Megatron-LM's
     * multi-tensor L2 norm reads each fp32 gradient once (2 FLOPs); the
     * rescale by the clipping factor runs only when the norm is over the
     * threshold, and is not counted */
    add(out, "grad_norm", 2 * params, 4 * params, 0);
    add(out, "adam", 12 * params, optimizer_states[how].step_bytes * params, 0);
}

double transformer_op_s(const GpuSpec *gpu, const Op *op)
{
    double flash = flash_s(gpu, op);
    return flash >= 0 ? flash : roofline_s(gpu, op);
}

double transformer_ops_s(const GpuSpec *gpu, const OpList *ops)
{
    double s = 0;
    for (int i = 0; i < ops->n; i++)
        s += transformer_op_s(gpu, &ops->ops[i]);
    return s;
}

/* Op.backward, 2 when unset. */
static double backward_factor(const Op *op)
{
    return op->backward > 0 ? op->backward : 2;
}

double transformer_op_backward_s(const GpuSpec *gpu, const Op *op)
{
    return backward_factor(op) * transformer_op_s(gpu, op);
}

double transformer_ops_backward_s(const GpuSpec *gpu, const OpList *ops)
{
    double s = 0;
    for (int i = 0; i < ops->n; i++)
        s += transformer_op_backward_s(gpu, &ops->ops[i]);
    return s;
}

KernelClass transformer_op_class(const Op *op)
{
    static const char *const attention[] = {
        FLASH_FORWARD, FLASH_BACKWARD_REST, "scores", "softmax", "attn_dropout", "attn_v", NULL};
    for (const char *const *a = attention; *a; a++)
        if (strcmp(op->name, *a) == 0)
            return KERNEL_ATTENTION;
    return op->gemm ? KERNEL_GEMM : KERNEL_MEMORY;
}

gboolean transformer_op_launches(const Op *op)
{
    return strcmp(op->name, FLASH_BACKWARD_REST) != 0;
}

double transformer_ops_flops(const OpList *ops, gboolean gemm_only)
{
    double f = 0;
    for (int i = 0; i < ops->n; i++)
        if (ops->ops[i].gemm || !gemm_only)
            f += ops->ops[i].flops;
    return f;
}

static double hardware_flops(const Op *op)
{
    return op->gemm ? op->flops * (1 - op->idle) : 0;
}

double transformer_ops_hardware_flops(const OpList *ops)
{
    double f = 0;
    for (int i = 0; i < ops->n; i++)
        f += hardware_flops(&ops->ops[i]);
    return f;
}

OpsWork transformer_ops_work(const GpuSpec *gpu, const OpList *ops)
{
    OpsWork w = {0};
    for (int i = 0; i < ops->n; i++) {
        const Op *op = &ops->ops[i];
        double s = transformer_op_s(gpu, op), f = hardware_flops(op);
        w.seconds += s;
        w.flops += f;
        w.backward_seconds += backward_factor(op) * s;
        w.backward_flops += 2 * f;
        w.wgrad_seconds += op->wgrad * s;
        w.wgrad_flops += op->wgrad * f;
    }
    return w;
}

/* DeepSeek-V2's latent attention's weights on one GPU (arXiv 2405.04434,
 * section 2.1.2 and Appendix C): Q's down-projection and norm (with
 * q_lora_rank) and up-projection, the joint KV down-projection with the
 * shared rotary key, its norm, the KV up-projection and the output
 * projection; down-projections and norms replicated over tp. */
static double latent_attention_params(const ModelSpec *m, double t)
{
    double h = m->hidden_size, a = m->attention_heads, q = m->q_lora_rank;
    double qk = m->qk_nope_head_dim + m->qk_rope_head_dim, kv = m->kv_lora_rank;
    double q_proj = q > 0 ? h * q + q + q * a * qk / t : h * a * qk / t;
    return q_proj + h * (kv + m->qk_rope_head_dim) + kv +
           kv * a * (m->qk_nope_head_dim + m->v_head_dim) / t + a * m->v_head_dim * h / t;
}

double transformer_layer_params(const ModelSpec *m, int tp)
{
    Dims d = dims(m, (Shard){.micro_batch = 1, .tp = tp});
    double qkv = d.hq / d.t + 2 * d.hkv_t; /* columns of the QKV weight on this GPU */
    double attention =
        m->kv_lora_rank > 0 ? latent_attention_params(m, d.t) : d.h * qkv + d.hq / d.t * d.h;
    /* GPT-OSS's sink logit a head, split with the heads (Megatron-Core's
     * softmax_offset, num_attention_heads_per_partition of them) */
    attention += m->attention_sinks ? d.a / d.t : 0;
    double mlp = (gated(m) ? 3 : 2) * d.h * d.f / d.t;
    /* GPT: biases of qkv and fc1 split by column, of the projection and
     * fc2 replicated; two LayerNorms (weight, bias). Llama: two RMSNorm
     * weights; Qwen2's bias of qkv (split), Llama's optional biases (qkv's
     * split, the output projection's replicated; gate's and up's split,
     * down's replicated), Qwen3's RMSNorm of a head's width for Q and one
     * for K. Norms are replicated. */
    if (gpt_style(m))
        return attention + mlp + qkv + d.h + d.f / d.t + d.h + 4 * d.h;
    return attention + mlp + 2 * d.h + (m->qkv_bias ? qkv : 0) + (m->out_bias ? d.h : 0) +
           (m->mlp_bias ? (gated(m) ? 2 : 1) * d.f / d.t + d.h : 0) +
           (m->qk_norm ? 2 * transformer_head_dim(m) : 0);
}

/* An expert's weights on one GPU (f_e split over t): GPT's with fc1's
 * split bias and fc2's replicated one, SwiGLU's (gate and up) or squared
 * ReLU's with mlp_bias's. */
static double expert_params(const ModelSpec *m, double t)
{
    double h = m->hidden_size, fe_t = m->moe_ffn_hidden_size / t, ups = gated(m) ? 2 : 1;
    if (gpt_style(m))
        return 2 * h * fe_t + fe_t + h;
    return (ups + 1) * h * fe_t + (m->mlp_bias ? ups * fe_t + h : 0);
}

double transformer_layer_expert_params(const ModelSpec *m, int etp, int ep)
{
    return m->experts / ep * expert_params(m, etp);
}

/* A MoE layer's parameters on one GPU that holds `held` routed experts,
 * each split over etp. */
static double moe_layer_params(const ModelSpec *m, int tp, int etp, int held)
{
    /* the dense layer without its MLP: the same model with an empty FFN
     * (whose GPT fc2 bias, h, the experts' own biases replace) */
    ModelSpec attention_only = *m;
    attention_only.ffn_hidden_size = 0;
    double router = ((double)m->hidden_size + (m->router_bias ? 1 : 0)) * m->experts;
    double fc2_bias = gpt_style(m) || m->mlp_bias ? m->hidden_size : 0;
    return transformer_layer_params(&attention_only, tp) - fc2_bias + router +
           m->shared_experts * expert_params(m, tp) + held * expert_params(m, etp);
}

double transformer_moe_layer_params(const ModelSpec *m, int tp, int etp, int ep)
{
    return moe_layer_params(m, tp, etp, m->experts / ep);
}

/* A Mamba-2 mixer layer's parameters on one GPU of tp (Megatron-Core's
 * ssm/mamba_mixer.py, MambaMixer, and transformers' NemotronHMamba2Mixer;
 * docs/model.md, "Hybrid models"), heads and groups split over tp:
 * in_proj, h to z and x (d_inner each), B and C (n_groups x N each) and
 * dt (a value a head), column-parallel, with its bias if any; the
 * depthwise conv1d over x, B and C, conv_kernel taps a channel and its
 * bias; dt_bias, A_log and D, one a head; the gated RMSNorm's weight over
 * d_inner; out_proj, d_inner to h, row-parallel (its bias replicated); the
 * layer's pre-norm (replicated). */
static double mamba_layer_params(const ModelSpec *m, double t)
{
    double h = m->hidden_size, heads = m->mamba_heads / t, inner = heads * m->mamba_head_dim;
    double bc = 2.0 * m->mamba_groups / t * m->ssm_state, in = 2 * inner + bc + heads;
    double conv = (inner + bc) * (m->conv_kernel + (m->conv_bias ? 1 : 0));
    return h * in + (m->mamba_bias ? in + h : 0) + conv + 3 * heads + inner + inner * h + h;
}

/* A hybrid model's attention layer on one GPU of tp: the transformer
 * layer's without its MLP, its bias or its norm (one RMSNorm weight). */
static double hybrid_attention_params(const ModelSpec *m, int tp)
{
    ModelSpec attention_only = *m;
    attention_only.ffn_hidden_size = 0;
    attention_only.mlp_bias = FALSE;
    return transformer_layer_params(&attention_only, tp) - m->hidden_size;
}

/* Layer `layer`'s parameters on one GPU of tp, with `held` routed experts
 * each split over etp in a MoE layer. A hybrid model's layer is one
 * block with its norm: a Mamba mixer's, an attention layer's, or the
 * transformer layer's (dense or MoE) less the attention layer's. */
static double layer_params(const ModelSpec *m, int layer, int tp, int etp, int held)
{
    gboolean moe = transformer_layer_moe(m, layer);
    double transformer = moe ? moe_layer_params(m, tp, etp, held) : transformer_layer_params(m, tp);
    if (!m->hybrid_layers)
        return transformer;
    switch ((HybridLayer)m->hybrid_layers[kind_of(m, layer)]) {
    case HYBRID_MAMBA:
        return mamba_layer_params(m, tp);
    case HYBRID_ATTENTION:
        return hybrid_attention_params(m, tp);
    default: /* the MLP's or MoE's */
        return transformer - hybrid_attention_params(m, tp);
    }
}

double transformer_layer_params_at(const ModelSpec *m, int layer, int tp, int etp, int ep)
{
    return layer_params(m, layer, tp, etp, m->experts / MAX(ep, 1));
}

double transformer_layer_expert_params_at(const ModelSpec *m, int layer, int etp, int ep)
{
    return transformer_layer_moe(m, layer) ? transformer_layer_expert_params(m, etp, ep) : 0;
}

/* Parameters of the whole model with `routed` of each MoE layer's experts. */
static double model_params(const ModelSpec *m, int routed)
{
    double layers = 0;
    for (int i = 0; i < m->layers; i++)
        layers += layer_params(m, i, 1, 1, routed);
    return layers + transformer_embedding_params(m, 1) + transformer_head_params(m, 1);
}

double transformer_active_params(const ModelSpec *m)
{
    return model_params(m, m->experts_per_token);
}

double transformer_embedding_params(const ModelSpec *m, int tp)
{
    double words = (double)m->vocab_size * m->hidden_size / tp; /* vocabulary-parallel */
    return gpt_style(m) ? words + (double)m->seq_length * m->hidden_size : words;
}

double transformer_head_params(const ModelSpec *m, int tp)
{
    double h = m->hidden_size;
    double final_norm = gpt_style(m) ? 2 * h : h;
    return final_norm + (m->tied_embeddings ? 0 : (double)m->vocab_size * h / tp);
}

double transformer_mtp_params(const ModelSpec *m, int tp)
{
    double h = m->hidden_size, norm = gpt_style(m) ? 2 * h : h;
    return 2 * h * h / tp + 3 * norm;
}

double transformer_mtp_layers_params(const ModelSpec *m, int mtp_layers)
{
    return mtp_layers *
           (transformer_mtp_params(m, 1) + transformer_layer_params_at(m, m->layers, 1, 1, 1));
}

double transformer_params(const ModelSpec *m)
{
    if (!transformer_moe(m) && !m->hybrid_layers) /* summed as it always was, to the last bit */
        return m->layers * transformer_layer_params(m, 1) + transformer_embedding_params(m, 1) +
               transformer_head_params(m, 1);
    return model_params(m, m->experts);
}

/* What multi-head latent attention keeps beyond a standard attention
 * block of its Q, K, V and output, as Megatron-Core's MLA saves it: in
 * fp8 the second down-projection's own cast of the norm's output (each
 * TELinear keeps its input; in bf16 both keep the one tensor), and each
 * latent's norm input (bf16) and normalized input of its up-projection
 * (this GPU's rows, gathered again for the weight gradient). */
static double latent_kept_bytes(const ModelSpec *m, const Dims *d)
{
    double latents = (double)m->q_lora_rank + m->kv_lora_rank;
    return (d->dtype == DTYPE_BF16 ? 0 : d->eg * d->ns * d->h) +
           (d->e16 + d->eg) * d->ns * latents;
}

double transformer_block_activation_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc)
{
    Dims d = block_dims(m, block, sh);
    /* the layer's input: the attention block's, or in a hybrid model each
     * block's, each a layer */
    if (rc == RECOMPUTE_FULL)
        return transformer_block_attends(block) || m->hybrid_layers ? d.e16 * d.n * d.h : 0;
    /* norm input (bf16), the first GEMM's input (the norm's output) and
     * the closing dropout mask; a norm apart from its GEMMs (a MoE
     * block's, latent attention's), replayed, keeps no output
     * (transformer_block_ops: layernorm's); a norm that keeps its output
     * keeps no input where its GEMM keeps that output, in bf16 */
    int modules = replayed_modules(sh, rc);
    gboolean latent = transformer_block_attends(block) && m->kv_lora_rank > 0;
    gboolean norm_replayed = (block == BLOCK_MOE || latent) && (modules & 1 << RECOMPUTE_LAYERNORM);
    gboolean input_freed = sh.norm_keeps_output && !norm_replayed && d.eg == d.e16;
    double replicated = (input_freed ? 0 : d.e16 * d.ns * d.h) +
                        (norm_replayed ? 0 : d.eg * d.ns * d.h) + d.mask * d.ns * d.h;
    if (block == BLOCK_MOE) {
        /* moe_act: not the routed experts' down GEMM input */
        double act = modules & 1 << RECOMPUTE_MOE_ACT
                         ? d.eg * expert_rows(m, &d, sh) * (m->moe_ffn_hidden_size / d.et)
                         : 0;
        return replicated + moe_kept_bytes(m, &d, sh) - act;
    }
    if (block == BLOCK_MAMBA)
        return replicated + mamba_kept_bytes(m, &d);
    if (block == BLOCK_MLP) {
        /* GeLU input, fc2 input; or gate, up, down input; all bf16 but
         * fc2's (down's), a GEMM input */
        int kept = gated(m) ? 3 : 2;
        return replicated + kept * d.e16 * d.n * d.f / d.t - (d.e16 - d.eg) * d.n * d.f / d.t;
    }
    /* Q and K, V (bf16: attention's; none replayed by mla_up_proj),
     * projection input (a GEMM's) */
    gboolean qkv = !(latent && (modules & 1 << RECOMPUTE_MLA_UP_PROJ));
    double sharded = (qkv ? d.e16 * d.n * (d.hq / d.t + d.hkv_t + d.hv_t) : 0) +
                     d.eg * d.n * d.ho / d.t;
    /* FlashAttention: the fp32 logsumexp of each head and token; else the
     * softmax output (2), and with dropout its mask (1) and output (2), per
     * score */
    double per_score = d.attention_dropout ? 5 : 2;
    double core = sh.attention == ATTENTION_FLASH           ? 4 * d.n * d.a / d.t
                  : modules & 1 << RECOMPUTE_CORE_ATTN ? 0
                                                      : per_score * d.a * d.sq * d.keys * d.b / d.t;
    return replicated + sharded + core + (latent ? latent_kept_bytes(m, &d) : 0);
}

double transformer_block_replay_bytes(const ModelSpec *m, Block block, Shard sh, Recompute rc)
{
    return transformer_block_activation_bytes(m, block, sh, RECOMPUTE_NONE) -
           transformer_block_activation_bytes(m, block, sh, rc);
}

double transformer_embedding_activation_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    return d.mask * d.ns * d.h;
}

double transformer_head_activation_bytes(const ModelSpec *m, Shard sh)
{
    Dims d = dims(m, sh);
    double logits = cross_entropy[d.ce_fusion].kept_bytes * d.n * d.v / d.t;
    /* the final norm's input, unless it keeps its output, which the
     * logits' bf16 GEMM keeps; and each MTP layer's logits' input and
     * what its loss keeps */
    double norm_input = sh.norm_keeps_output ? 0 : d.e16 * d.ns * d.h;
    return norm_input + d.e16 * d.ns * d.h + logits + sh.mtp * (2 * d.ns * d.h + logits);
}

/* What Megatron-LM's and Megatron-Bridge's model FLOPs count of latent
 * attention's norms, one layer's forward of a sequence: 2 FLOPs an
 * element of each latent (the "+ 1" of their q_lora_rank and kv_lora_rank
 * terms: num_floating_point_operations in megatron/training/training.py
 * and in Megatron-Bridge's training/utils/flop_utils.py). */
static double latent_norm_flops(const ModelSpec *m)
{
    if (m->kv_lora_rank == 0)
        return 0;
    return 2.0 * m->seq_length * ((double)m->q_lora_rank + m->kv_lora_rank);
}

/* One sequence's forward matrix-multiply FLOPs through a block of kind
 * `block`, the causal share of attention's (FlashAttention's, Op.idle)
 * when `causal`, else all; a MoE block at uniform routing, no padding: k
 * experts per token. */
static double block_flops(const ModelSpec *m, Block block, gboolean causal)
{
    Shard one = {.micro_batch = 1, .tp = 1}; /* the same matrix multiplies */
    OpList ops;
    transformer_block_ops(m, block, one, &ops);
    return causal ? transformer_ops_hardware_flops(&ops) : transformer_ops_flops(&ops, TRUE);
}

/* The forward's matrix-multiply FLOPs of one sequence (block_flops). */
static double forward_flops(const ModelSpec *m, gboolean causal)
{
    Shard one = {.micro_batch = 1, .tp = 1};
    OpList ops;
    double forward = 0;
    /* each kind of block times the layers that have it */
    int layers[TRANSFORMER_BLOCK_KINDS];
    transformer_block_counts(m, layers);
    for (int b = 0; b < TRANSFORMER_BLOCK_KINDS; b++)
        if (layers[b] > 0)
            forward += layers[b] * block_flops(m, (Block)b, causal);
    transformer_head_ops(m, one, &ops);
    return forward + transformer_ops_flops(&ops, TRUE) + m->layers * latent_norm_flops(m);
}

/* The same of one MTP module, as Megatron-LM and Megatron-Bridge count it
 * ("MTP norms and proj" and the logits' "(mtp_num_layers + 1)"): its
 * layer, of the last layer's kind, its projection, 2 FLOPs an element of
 * its three norms ("3 * hidden_size"), and the shared output layer's
 * logits, 2 s h V. */
static double mtp_forward_flops(const ModelSpec *m, gboolean causal)
{
    Shard one = {.micro_batch = 1, .tp = 1};
    OpList ops;
    double s = m->seq_length, h = m->hidden_size, forward = latent_norm_flops(m);
    for (int i = 0; i < transformer_layer_blocks(m, m->layers); i++)
        forward += block_flops(m, transformer_layer_block(m, m->layers, i), causal);
    transformer_mtp_ops(m, one, &ops);
    return forward + transformer_ops_flops(&ops, TRUE) + 2 * 3 * s * h + 2 * s * h * m->vocab_size;
}

double transformer_model_flops(const ModelSpec *m, double sequences)
{
    return 3 * forward_flops(m, FALSE) * sequences;
}

double transformer_causal_model_flops(const ModelSpec *m, double sequences)
{
    return 3 * forward_flops(m, TRUE) * sequences;
}

double transformer_mtp_model_flops(const ModelSpec *m, int mtp_layers, double sequences,
                                   gboolean causal)
{
    return mtp_layers > 0 ? 3 * mtp_layers * mtp_forward_flops(m, causal) * sequences : 0;
}
