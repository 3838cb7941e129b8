/* check_deepseek.c: DeepSeek's layers (docs/model.md, "Multi-head latent
 * attention" and "Multi-token prediction") held to closed forms by hand:
 *   - multi-head latent attention's operations, each a GEMM of its shape
 *     on a GPU of tp (Megatron-Core's MLASelfAttention: down-projections
 *     replicated on the GPU's rows, up-projections split by column, the
 *     output projection by row; DeepSeek-V2, arXiv 2405.04434, section
 *     2.1 and appendix C), its FlashAttention over QK and V head widths that
 *     differ (the cuDNN frontend's SDPA benchmark counts 2 and 5 products,
 *     U (d_qk + d_v) forward and U (3 d_qk + 2 d_v) backward), what it
 *     keeps for backward, and its tensor-parallel gathers of the latents;
 *   - DeepSeek-V3's model FLOPs as Megatron-Bridge's
 *     num_floating_point_operations counts them, MLA and MTP included;
 *   - multi-token-prediction layers: where the pipeline puts them, their
 *     parameters and their embedding's copy, what Megatron-Core refuses;
 *   - DeepSeek-V3 in Megatron-Bridge's recipe (PP 16, EP 64) on 1,024
 *     H100s: it runs and fits, its model states by hand. */
#include <string.h>

#include "cost/transformer.h"
#include "layout/chunks.h"
#include "strategy/states.h"
#include "strategy/strategy.h"
#include "testutil.h"

/* A small DeepSeek-shaped Hugging Face config: h 256, 8 heads, q_lora_rank
 * 96, kv_lora_rank 64, QK heads of 32 + 16, V heads of 24, 4 layers (the
 * first dense, f 512; then MoE of 8 experts of 128, 2 a token, 1 shared),
 * vocabulary 1000, 128 tokens, one MTP layer, `tied` embeddings or not. */
static const char small_config[] =
    "{\"num_hidden_layers\": 4, \"hidden_size\": 256, \"num_attention_heads\": 8,"
    " \"num_key_value_heads\": 8, \"intermediate_size\": 512, \"vocab_size\": 1000,"
    " \"max_position_embeddings\": 128, \"hidden_act\": \"silu\","
    " \"model_type\": \"deepseek_v3\", \"tie_word_embeddings\": %s,"
    " \"q_lora_rank\": 96, \"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32,"
    " \"qk_rope_head_dim\": 16, \"v_head_dim\": 24, \"n_routed_experts\": 8,"
    " \"num_experts_per_tok\": 2, \"n_shared_experts\": 1, \"moe_intermediate_size\": 128,"
    " \"first_k_dense_replace\": 1, \"num_nextn_predict_layers\": 1}";
enum { H = 256, A = 8, Q = 96, C = 64, NOPE = 32, ROPE = 16, DV = 24, DQK = NOPE + ROPE };
enum { L = 4, F = 512, V = 1000, S = 128, E = 8, K = 2, FE = 128 };

static ModelSpec *small(gboolean tied)
{
    g_autofree char *text = g_strdup_printf(small_config, tied ? "true" : "false");
    char *path = test_write_tmp(text);
    GError *error = NULL;
    ModelSpec *m = model_spec_load(path, &error);
    ck_assert_msg(m, "%s", error ? error->message : "");
    test_remove(path);
    return m;
}

static const Op *op_named(const OpList *ops, const char *name)
{
    for (int i = 0; i < ops->n; i++)
        if (strcmp(ops->ops[i].name, name) == 0)
            return &ops->ops[i];
    ck_abort_msg("no operation %s", name);
    return NULL;
}

static void assert_shape(const Op *op, double m, double k, double n)
{
    ck_assert_msg(op->m == m && op->k == k && op->n == n, "%s: %g x %g x %g, expected %g x %g x %g",
                  op->name, op->m, op->k, op->n, m, k, n);
    ck_assert_double_eq(op->flops, 2 * m * k * n);
}

/* On a GPU of tp 2 with sequence parallelism, b 1 (n = 128 tokens, n_s =
 * 64 on this GPU, 4 heads): the down-projections 64 x 256 x 96 and 64 x
 * 256 x (64 + 16), replicated; the up-projections 128 x 96 x 4 (32 + 16)
 * and 128 x 64 x 4 (32 + 24), by column; FlashAttention's 2 s^2 4 (48 +
 * 24) FLOPs over QK heads of 48 and V heads of 24; the output projection
 * 128 x 4 x 24 x 256, by row. Its RoPE rotates Q's 16 rotary columns of
 * each head in place (3 FLOPs and 4 bytes an element) and writes K and V
 * from the up-projected KV and the rotary key (2 bytes an element read
 * and written). */
START_TEST(mla_operations_by_hand)
{
    ModelSpec *m = small(FALSE);
    Shard sh = {.micro_batch = 1, .tp = 2, .sequence_parallel = TRUE};
    OpList ops;
    transformer_block_ops(m, BLOCK_ATTENTION, sh, &ops);
    const double n = S, ns = S / 2, heads = A / 2;
    assert_shape(op_named(&ops, "q_down"), ns, H, Q);
    assert_shape(op_named(&ops, "kv_down"), ns, H, C + ROPE);
    assert_shape(op_named(&ops, "q_up"), n, Q, heads * DQK);
    assert_shape(op_named(&ops, "kv_up"), n, C, heads * (NOPE + DV));
    assert_shape(op_named(&ops, "out_proj"), n, heads * DV, H);
    const Op *rope = op_named(&ops, "rope"), *rope_kv = op_named(&ops, "rope_kv");
    ck_assert_double_eq(rope->flops, 3 * n * heads * ROPE);
    ck_assert_double_eq(rope->bytes, 4 * n * heads * ROPE);
    ck_assert_double_eq(rope_kv->bytes,
                        2 * n * (heads * (NOPE + DV) + ROPE + heads * DQK + heads * DV));
    const Op *flash = op_named(&ops, "flash_attention");
    ck_assert_double_eq(flash->flops, 2.0 * S * S * heads * (DQK + DV));
    ck_assert_double_eq(flash->k, DQK);
    ck_assert_double_eq(flash->m, DV);
    /* Q, K, V read, the output and the fp32 logsumexp written */
    ck_assert_double_eq(flash->bytes,
                        2 * n * heads * (DQK + DQK + DV) + 2 * n * heads * DV + 4 * n * heads);
    model_spec_free(m);
}
END_TEST

/* FlashAttention's backward on top of twice its forward, with R the
 * recomputed QK^T's counted FLOPs, 2 s^2 a d_qk, and W = R / 2 / peak its
 * causal work: the backward kernel's five products, W (3 d_qk + 2 d_v) /
 * d_qk at the backward efficiency, less twice the forward's W (d_qk +
 * d_v) / d_qk at the forward one; the test GPU's defaults 0.6 and 0.5,
 * no curves. */
START_TEST(mla_flash_backward_by_hand)
{
    ModelSpec *m = small(FALSE);
    ClusterSpec *c = test_cluster(1, 1, 1e9, 1e9);
    Shard sh = {.micro_batch = 1, .tp = 1};
    OpList replay, rest;
    transformer_block_replay_split(m, BLOCK_ATTENTION, sh, RECOMPUTE_NONE, &replay, &rest);
    ck_assert_int_eq(replay.n, 0);
    ck_assert_int_eq(rest.n, 1);
    double r = 2.0 * S * S * A * DQK, w = r / 2 / c->gpu.peak_flops;
    ck_assert_double_eq(rest.ops[0].flops, r);
    double expected = w * ((3.0 * DQK + 2 * DV) / DQK / 0.5 - 2.0 * (DQK + DV) / DQK / 0.6);
    ck_assert_rel(transformer_op_s(&c->gpu, &rest.ops[0]), expected, 1e-12);
    cluster_spec_free(c);
    model_spec_free(m);
}
END_TEST

/* What the attention block keeps, tp 1 (n = 128, no dropout in a Hugging
 * Face config): the norm's input (bf16) and its output, the
 * down-projections' input (once in bf16, where both keep one tensor; a
 * cast each in fp8), each latent's norm input (bf16) and up-projection
 * input, Q and K (8 heads of 48) and V (of 24) in bf16, the output (8 x
 * 24) as the output projection's input and the fp32 logsumexp. */
START_TEST(mla_activations_by_hand)
{
    ModelSpec *m = small(FALSE);
    const double n = S;
    for (int fp8 = 0; fp8 < 2; fp8++) {
        Shard sh = {.micro_batch = 1, .tp = 1, .dtype = fp8 ? DTYPE_FP8 : DTYPE_BF16};
        double eg = fp8 ? 1 : 2, downs = fp8 ? 2 : 1;
        double expected = 2 * n * H + downs * eg * n * H + (2 + eg) * n * (Q + C) +
                          2 * n * A * (DQK + DQK + DV) + eg * n * A * DV + 4 * n * A;
        ck_assert_double_eq(
            transformer_block_activation_bytes(m, BLOCK_ATTENTION, sh, RECOMPUTE_NONE), expected);
    }
    model_spec_free(m);
}
END_TEST

/* Tensor parallelism (t 2) with sequence parallelism over the MLA model's
 * 4 layers, all dense here, 2 micro-batches, rings: as a standard layer's
 * 10 collectives of S = 2 b s h (check_strategies.c's
 * tp_collectives_per_layer) but for the latent attention's gathers before
 * its up-projections (forward, and again for their weight gradients) and
 * the sum of their input gradients, each of the latents, w = (q_lora_rank
 * + kv_lora_rank) / h of S: 7 + 3w a layer; 5 outside the layers. A ring
 * sends (t - 1)/t of each. */
START_TEST(mla_tensor_parallel_latents)
{
    const int mb = 2, t = 2;
    Run run = run_new(small(FALSE), test_cluster(1, t, 300e9, 25e9));
    run.model->experts = 0;
    run.plan->tp = t;
    run.plan->sequence_parallel = TRUE;
    run.plan->collective_algorithm = ALGORITHM_RING;
    run.plan->global_batch_size = mb;
    run_simulate(&run);
    const CommStat *c = run.rep.metrics.comm[TAG_TP];
    double w = (double)(Q + C) / H, s_bytes = 2.0 * S * H;
    ck_assert_rel(c[COLL_ALL_GATHER].bytes + c[COLL_REDUCE_SCATTER].bytes,
                  mb * (L * (7 + 3 * w) + 5) * (t - 1.0) / t * s_bytes, 1e-12);
    run_free(&run);
}
END_TEST

/* DeepSeek-V3's model FLOPs per sequence of 4,096 tokens with its MTP
 * layer, Megatron-Bridge's num_floating_point_operations (its
 * training/utils/flop_utils.py, transformer_flops, by hand): 3 x 2 x the
 * tokens x
 *   h (3 f x 3 dense layers + (3 f_e k + 3 f_e shared) x 59 MoE layers,
 *   the MTP layer being MoE as V3's last)
 *   + 62 x (q (h + a (d_nope + d_rope) + 1) + c (h + a (d_nope + d_v) + 1)
 *   + h d_rope + a d_v h + s a (d_nope + d_rope) / 2 + s a d_v / 2)
 *   + (3h + 2h^2) + h V (1 + 1),
 * the causal half of attention. plansim also counts the router, 2 h E a
 * token in each MoE layer, which Bridge leaves out. Without the causal
 * halving (transformer_model_flops) the attention terms are s a (d_nope +
 * d_rope) and s a d_v. */
START_TEST(deepseek_v3_model_flops_as_bridge)
{
    g_autoptr(ModelSpec) m = test_shipped_model("models/hf", "deepseek-v3.json");
    m->seq_length = 4096;
    double s = 4096, h = 7168, a = 128, q = 1536, c = 512, nope = 128, rope = 64, dv = 128;
    double f = 18432, fe = 2048, k = 8, v = 129280, e = 256;
    double mlp = h * (3 * f * 3 + (3 * fe * k + 3 * fe) * 59);
    double projections = q * (h + a * (nope + rope) + 1) + c * (h + a * (nope + dv) + 1) +
                         h * rope + a * dv * h;
    double core = s * a * (nope + rope) + s * a * dv;
    double rest = (3 * h + 2 * h * h) + h * v * 2 + h * e * 59;
    double causal = 6 * s * (mlp + 62 * (projections + core / 2) + rest);
    double whole = 6 * s * (mlp + 62 * (projections + core) + rest);
    ck_assert_rel(transformer_causal_model_flops(m, 1) + transformer_mtp_model_flops(m, 1, 1, TRUE),
                  causal, 1e-12);
    ck_assert_rel(transformer_model_flops(m, 1) + transformer_mtp_model_flops(m, 1, 1, FALSE),
                  whole, 1e-12);
}
END_TEST

/* A plan's MTP layer on the small model (4 layers, pp 2): Megatron-Core
 * puts it after the last layer, in the last chunk (layers_per_stage 2, 2 +
 * 1), which the plan's flags need not say; the last stage then holds 2
 * layers (a MoE layer each: attention's MLA, 2 norms, router, 8 + 1
 * experts of 3 h f_e), the MTP module (its
 * MoE layer, projection 2h x h, 3 norms, and the copy of the word
 * embedding V h that Megatron-Core keeps on the MTP layers' stage) and the
 * head (final norm, output layer V h). The copy's gradients are summed
 * with the first stage's: one all-reduce of 4 V h bytes (fp32), a ring of
 * 2 sending half of 2x that. */
START_TEST(mtp_layer_on_the_last_stage)
{
    Run run = run_new(small(FALSE), test_cluster(1, 2, 300e9, 25e9));
    run.plan->pp = 2;
    run.plan->mtp_num_layers = 1;
    run.plan->global_batch_size = 2;
    run.plan->collective_algorithm = ALGORITHM_RING;
    run_simulate(&run);
    ck_assert_int_eq(run.plan->layers_per_stage.n, 2);
    ck_assert_int_eq(run.plan->layers_per_stage.v[0], 2);
    ck_assert_int_eq(run.plan->layers_per_stage.v[1], 3);
    /* Megatron-Core places it so by itself: no layout among the flags */
    g_autofree char *flags = plan_spec_flags(run.plan);
    ck_assert_msg(!strstr(flags, "layout"), "%s", flags);
    double mla = H * Q + Q + Q * A * DQK + H * (C + ROPE) + C + C * A * (NOPE + DV) + A * DV * H;
    double moe = mla + 2 * H + H * E + (E + 1) * 3.0 * H * FE;
    double dense = mla + 2 * H + 3.0 * H * F;
    StageParams last = states_stage_params_of(run.model, run.plan, 1);
    ck_assert_double_eq(last.params, 3 * moe + (2.0 * H * H + 3 * H) + V * H + (H + V * H));
    StageParams first = states_stage_params_of(run.model, run.plan, 0);
    ck_assert_double_eq(first.params, V * H + dense + moe);
    ck_assert_double_eq(transformer_mtp_layers_params(run.model, 1), moe + 2.0 * H * H + 3 * H);
    const CommStat *x = &run.rep.metrics.comm[TAG_EMBEDDING][COLL_ALL_REDUCE];
    ck_assert_int_eq(x->count, 1);
    ck_assert_rel(x->bytes, 2 * 0.5 * 4.0 * V * H, 1e-12);
    run_free(&run);
}
END_TEST

/* A layout's m: "E|tt|tt|mL" puts the MTP layer alone in the last chunk
 * (stage 1's second, pp 2); "Et|t|t|tmL" with it after the last layer;
 * each written back in plansim's form. */
START_TEST(mtp_layouts)
{
    static const struct {
        const char *layout, *written;
        int last;
    } cases[] = {{"E|tt|tt|mL", "E|(t*2|)*2,mL", 1}, {"Et|t|t|tmL", "Et|(t|)*2,tmL", 2}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(ModelSpec) m = small(FALSE);
        g_autoptr(ClusterSpec) c = test_cluster(1, 2, 1e9, 1e9);
        g_autoptr(PlanSpec) plan = plan_spec_new();
        GError *error = NULL;
        plan->pp = 2;
        plan->global_batch_size = 2;
        ck_assert(plan_spec_set(plan, PLAN_MTP_NUM_LAYERS, "1", "--mtp-num-layers", &error));
        ck_assert(plan_spec_set(plan, PLAN_LAYOUT, cases[i].layout, "--layout", &error));
        ck_assert_msg(strategy_resolve(plan, m, c, &error), "%s", error ? error->message : "");
        ck_assert_int_eq(plan->layers_per_stage.v[3], cases[i].last);
        ck_assert_int_eq(chunks_of_layer(plan, L), 3);
        ck_assert_int_eq(states_embedding_copy_stage(m, plan), 1);
        g_autofree char *text = plan_field_text(plan, PLAN_LAYOUT);
        ck_assert_str_eq(text, cases[i].written);
    }
}
END_TEST

/* What Megatron-Core refuses of MTP layers, each in one line naming its
 * field: more than the model has, any for a model without them, a
 * layout's m other than mtp_num_layers, MTP layers off the last chunk of
 * their stage or split over chunks; and plansim's own rule for a tied
 * model, whose word embedding only the first and the last stage hold. */
START_TEST(mtp_refused)
{
    static const struct {
        gboolean tied;
        int pp, vp, mtp, model_mtp;
        const char *layout, *layers, *message;
    } cases[] = {
        {FALSE, 1, 1, 2, 1, NULL, NULL,
         "--mtp-num-layers: expected at most the model's 1 multi-token-prediction layers"},
        {FALSE, 1, 1, 1, 0, NULL, NULL,
         "--mtp-num-layers: expected 0: the model has no multi-token-prediction layers"},
        {FALSE, 2, 1, 0, 1, "E|tt|tt|mL", NULL,
         "--layout: expected mtp_num_layers = 0 multi-token-prediction layers m"},
        {FALSE, 2, 1, 1, 1, "Et|tm|t|tL", NULL, "every transformer layer t before"},
        {FALSE, 2, 1, 1, 1, "Et|t|t|mL", NULL,
         "--layout: expected the model's 4 transformer layers t"},
        {FALSE, 2, 1, 1, 1, "Et|tttm||L", NULL,
         "--layout: expected the multi-token-prediction layers in the last chunk of their stage"},
        {FALSE, 2, 2, 1, 1, NULL, "1,4,0,0",
         "--layers-per-stage: expected the multi-token-prediction layers in the last chunk of "
         "their stage"},
        {FALSE, 2, 1, 1, 1, NULL, "2,2",
         "--layers-per-stage: expected layer counts that add up to the model's 4 layers and the "
         "plan's multi-token-prediction layers"},
        {TRUE, 3, 1, 1, 1, "Et|t|t|t|m|L", NULL,
         "--layout: expected a tied model's multi-token-prediction layers on the first or the last "
         "stage"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(ModelSpec) m = small(cases[i].tied);
        m->mtp_layers = cases[i].model_mtp;
        g_autoptr(ClusterSpec) c = test_cluster(1, cases[i].pp, 1e9, 1e9);
        g_autoptr(PlanSpec) plan = plan_spec_new();
        GError *error = NULL;
        plan->pp = cases[i].pp;
        plan->virtual_stages = cases[i].vp;
        plan->schedule = cases[i].vp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        plan->global_batch_size = 6;
        g_autofree char *mtp = g_strdup_printf("%d", cases[i].mtp);
        gboolean ok =
            plan_spec_set(plan, PLAN_MTP_NUM_LAYERS, mtp, "--mtp-num-layers", &error) &&
            (!cases[i].layout ||
             plan_spec_set(plan, PLAN_LAYOUT, cases[i].layout, "--layout", &error)) &&
            (!cases[i].layers || plan_spec_set(plan, PLAN_LAYERS_PER_STAGE, cases[i].layers,
                                               "--layers-per-stage", &error)) &&
            strategy_resolve(plan, m, c, &error);
        ck_assert_msg(!ok, "case %d resolved", (int)i);
        ck_assert_msg(strstr(error->message, cases[i].message), "case %d: %s", (int)i,
                      error->message);
        g_error_free(error);
    }
}
END_TEST

/* DeepSeek-V3 (models/hf/deepseek-v3.json) in Megatron-Bridge's own
 * recipe (recipes/deepseek/deepseek_v3.py, deepseek_v3_pretrain_config):
 * TP 2, PP 16, EP 64 with expert tensor parallelism 1 (folded over a
 * stage's tp x dp = 64 ranks), sequence parallelism, its MTP layer
 * (mtp_num_layers 1), the layout it picks for pp 16 ([E + 4 t], 14 x
 * [4 t], [t + mtp + loss]), micro-batch 1, global batch 4,096 of 4,096
 * tokens, the distributed optimizer with bf16 gradients and its
 * precision-aware Adam (fp32 main weights, bf16 moments: 8 bytes a
 * parameter), selective recomputation; bf16. On 128 DGX H100 nodes
 * (1,024 GPUs: dp 32) it fits in 80 GiB. By hand, on one GPU:
 *   - a MoE layer's routed experts: 256 / 64 = 4, whole, each 3 h f_e =
 *     3 x 7168 x 2048 = 44,040,192: 176,160,768;
 *   - the rest of a MoE layer: MLA split over tp 2 (Q's down-projection h
 *     q and KV's h (c + r) replicated, with the latents' norms q + c; Q's
 *     up-projection q a (d_nope + d_rope) / 2, KV's c a (d_nope + d_v) /
 *     2, the output a d_v h / 2): 101,124,096; two RMSNorms 2h = 14,336;
 *     the router h E = 1,835,008 (replicated); the shared expert 3 h f_e
 *     / 2 = 22,020,096: 124,993,536;
 *   - a middle stage (4 MoE layers): experts 704,643,072, the rest
 *     499,974,144; bf16 parameters and gradients, 2 bytes each; Adam's 8
 *     bytes sharded over the rest's 32 data-parallel ranks and the
 *     experts' tp x dp / (etp x ep) = 1: 8 (704,643,072 + 499,974,144 /
 *     32) = 5,762,138,112 bytes;
 *   - the last stage: layer 60 and the MTP module's layer (MoE both), the
 *     module's eh_proj 2h^2 / 2 = 51,380,224 and 3 norms 3h = 21,504, the
 *     copy of the word embedding V h / 2 = 463,339,520 Megatron-Core
 *     keeps on the MTP layers' stage, the head's norm h and output layer V
 *     h / 2: 1,580,396,544. */
START_TEST(deepseek_v3_recipe_plan_fits)
{
    static const struct {
        PlanField field;
        const char *value;
    } recipe[] = {
        {PLAN_TP, "2"},
        {PLAN_PP, "16"},
        {PLAN_EP, "64"},
        {PLAN_ETP, "1"},
        {PLAN_SEQUENCE_PARALLEL, "true"},
        {PLAN_MTP_NUM_LAYERS, "1"},
        {PLAN_LAYOUT, "Et*4|(t*4|)*14,tmL"},
        {PLAN_MICRO_BATCH_SIZE, "1"},
        {PLAN_GLOBAL_BATCH_SIZE, "4096"},
        {PLAN_ZERO_STAGE, "1"},
        {PLAN_GRAD_ACCUM_DTYPE, "bf16"},
        {PLAN_OPTIMIZER_STATES, "bf16_moments"},
        {PLAN_RECOMPUTE, "selective"},
    };
    Run run = run_new(test_shipped_model("models/hf", "deepseek-v3.json"),
                      test_shipped_cluster("dgx-h100.json", 128));
    run.model->seq_length = 4096;
    for (gsize i = 0; i < G_N_ELEMENTS(recipe); i++)
        ck_assert(plan_spec_set(run.plan, recipe[i].field, recipe[i].value, "recipe", NULL));
    run_simulate(&run);
    const Metrics *mt = &run.rep.metrics;
    ck_assert_int_eq(run.plan->dp, 32);
    ck_assert_int_eq(mt->n_stages, 16);
    double expert = 3 * 7168.0 * 2048, experts = 4 * 4 * expert;
    double mla = 7168.0 * 1536 + 1536 + 1536 * 128 * 192 / 2 + 7168.0 * 576 + 512 +
                 512 * 128 * 256 / 2 + 128 * 128 * 7168.0 / 2;
    double rest_layer = mla + 2 * 7168 + 7168.0 * 256 + expert / 2;
    ck_assert_double_eq(mla, 101124096);
    ck_assert_double_eq(rest_layer, 124993536);
    const StageStat *mid = &mt->stages[1];
    ck_assert_int_eq(mid->layers, 4);
    ck_assert_double_eq(mid->peak_split[MEM_PARAMS], 2 * (experts + 4 * rest_layer));
    ck_assert_double_eq(mid->peak_split[MEM_GRADS], 2 * (experts + 4 * rest_layer));
    ck_assert_double_eq(mid->peak_split[MEM_OPTIMIZER], 8 * (experts + 4 * rest_layer / 32));
    ck_assert_double_eq(mid->peak_split[MEM_OPTIMIZER], 5762138112.0);
    double words = 129280 * 7168.0 / 2;
    StageParams last = states_stage_params_of(run.model, run.plan, 15);
    ck_assert_double_eq(last.params, 2 * (rest_layer + 4 * expert) + 2 * 7168.0 * 7168 / 2 +
                                         3 * 7168 + words + 7168 + words);
    ck_assert_double_eq(last.params, 1580396544);
    ck_assert(mt->stages[15].head && mt->stages[15].layers == 2);
    ck_assert(mt->fits);
    ck_assert_msg(mt->peak_bytes < 80 * 1073741824.0, "%.2f GiB", mt->peak_bytes / 1073741824.0);
    run_free(&run);
}
END_TEST

/* Selective recomputation by module (Megatron-Core's recompute_modules;
 * docs/model.md, "Recomputation by module"), tp 1, b 1 (n = 128 tokens),
 * FlashAttention, what each block no longer keeps, in bf16 (e 2 bytes a
 * GEMM input element) and fp8 (e 1, delayed scaling: no scale bytes):
 *   - layernorm: the output of a norm that stands apart from its GEMMs,
 *     latent attention's and a MoE block's, as their first GEMM keeps it,
 *     e n h; a dense MLP's norm is fused into its up GEMM (Transformer
 *     Engine's LayerNormLinear: Megatron-Core's pre_mlp_layernorm is then
 *     an IdentityOp, which layernorm leaves alone): nothing;
 *   - mla_up_proj: the up-projections' and RoPE's outputs, Q and K (8
 *     heads of 48) and V (of 24), in bf16 whatever the dtype: 2 n 8 (48 +
 *     48 + 24);
 *   - moe_act: the routed experts' activation output, the down GEMM's
 *     input, of the n k = 256 rows and f_e = 128: e 256 x 128;
 *   - core_attn: FlashAttention keeps no core: nothing. */
START_TEST(recompute_modules_keep_by_hand)
{
    ModelSpec *m = small(FALSE);
    const double n = S;
    const int ln = 1 << RECOMPUTE_LAYERNORM, up = 1 << RECOMPUTE_MLA_UP_PROJ,
              act = 1 << RECOMPUTE_MOE_ACT, core = 1 << RECOMPUTE_CORE_ATTN;
    for (int fp8 = 0; fp8 < 2; fp8++) {
        double e = fp8 ? 1 : 2, qkv = 2 * n * A * (DQK + DQK + DV);
        const struct {
            Block block;
            int modules;
            double dropped;
        } cases[] = {
            {BLOCK_ATTENTION, ln, e * n * H},
            {BLOCK_ATTENTION, up, qkv},
            {BLOCK_ATTENTION, core, 0},
            {BLOCK_ATTENTION, ln | up | act | core, e * n * H + qkv},
            {BLOCK_MOE, ln, e * n * H},
            {BLOCK_MOE, act, e * n * K * FE},
            {BLOCK_MOE, ln | act | up, e * n * H + e * n * K * FE},
            {BLOCK_MLP, ln | up | act, 0},
        };
        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
            Shard sh = {.micro_batch = 1,
                        .tp = 1,
                        .dtype = fp8 ? DTYPE_FP8 : DTYPE_BF16,
                        .recompute_modules = cases[i].modules};
            double none = transformer_block_activation_bytes(m, cases[i].block, sh, RECOMPUTE_NONE);
            ck_assert_double_eq(
                none - transformer_block_activation_bytes(m, cases[i].block, sh,
                                                          RECOMPUTE_SELECTIVE),
                cases[i].dropped);
            ck_assert_double_eq(
                transformer_block_replay_bytes(m, cases[i].block, sh, RECOMPUTE_SELECTIVE),
                cases[i].dropped);
        }
    }
    model_spec_free(m);
}
END_TEST

/* An operation's roofline on the test GPU (312 TFLOP/s at 0.75, 2,039
 * GB/s at 0.85, no SM count nor launch cost): the slower of its compute
 * and its HBM traffic. */
static double roofline_by_hand(double flops, double bytes)
{
    return MAX(flops / (312e12 * 0.75), bytes / (2039e9 * 0.85));
}

/* What each module replays before the block's backward, bf16, tp 1, n =
 * 128, the forward's operations in order, each timed at its roofline:
 *   - layernorm: the block's RMSNorm, 5 n h FLOPs, read and write 2 bytes
 *     an element;
 *   - mla_up_proj: the latents' norms (n x 96 and n x 64), the
 *     up-projections n x 96 x 8 (32 + 16) and n x 64 x 8 (32 + 24), each
 *     reading its input and weight and writing its output in bf16, Q's
 *     RoPE (3 FLOPs, 4 bytes a rotated element of 8 x 16) and K's and V's
 *     (reads the up-projected KV and the rotary key, writes K and V);
 *   - moe_act: SwiGLU over the n k = 256 rows of f_e = 128, 8 FLOPs an
 *     element, reading gate and up and writing its output (6 bytes); in
 *     fp8 the cast of its output follows (read 2, write the copy and its
 *     transpose, 1 byte each; 2 FLOPs an element). */
START_TEST(recompute_modules_replay_by_hand)
{
    ModelSpec *m = small(FALSE);
    ClusterSpec *c = test_cluster(1, 1, 1e9, 1e9);
    const double n = S, rows = n * K;
    const struct {
        Block block;
        RecomputeModule module;
        Dtype dtype;
        int ops;
        const char *names[6];
        double flops[6], bytes[6];
    } cases[] = {
        {BLOCK_ATTENTION, RECOMPUTE_LAYERNORM, DTYPE_BF16, 1, {"norm"}, {5 * n * H}, {4 * n * H}},
        {BLOCK_MOE, RECOMPUTE_LAYERNORM, DTYPE_BF16, 1, {"norm"}, {5 * n * H}, {4 * n * H}},
        {BLOCK_ATTENTION,
         RECOMPUTE_MLA_UP_PROJ,
         DTYPE_BF16,
         6,
         {"norm", "norm", "q_up", "kv_up", "rope", "rope_kv"},
         {5 * n * Q, 5 * n * C, 2 * n * Q * A * DQK, 2 * n * C * A * (NOPE + DV),
          3 * n * A * ROPE, 3 * n * A * ROPE},
         {4 * n * Q, 4 * n * C, 2 * (n * A * DQK + n * Q + Q * A * DQK),
          2 * (n * A * (NOPE + DV) + n * C + C * A * (NOPE + DV)), 4 * n * A * ROPE,
          2 * n * (A * (NOPE + DV) + ROPE + A * DQK + A * DV)}},
        {BLOCK_MOE, RECOMPUTE_MOE_ACT, DTYPE_BF16, 1, {"experts_activation"}, {8 * rows * FE},
         {6 * rows * FE}},
        {BLOCK_MOE,
         RECOMPUTE_MOE_ACT,
         DTYPE_FP8,
         2,
         {"experts_activation", "fp8_cast"},
         {8 * rows * FE, 2 * rows * FE},
         {6 * rows * FE, (2 + 2 * 1) * rows * FE}},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        Shard sh = {.micro_batch = 1,
                    .tp = 1,
                    .dtype = cases[i].dtype,
                    .recompute_modules = 1 << cases[i].module};
        OpList replay, rest;
        transformer_block_replay_split(m, cases[i].block, sh, RECOMPUTE_SELECTIVE, &replay, &rest);
        ck_assert_int_eq(replay.n, cases[i].ops);
        double seconds = 0;
        for (int j = 0; j < replay.n; j++) {
            ck_assert_str_eq(replay.ops[j].name, cases[i].names[j]);
            ck_assert_double_eq(replay.ops[j].flops, cases[i].flops[j]);
            ck_assert_double_eq(replay.ops[j].bytes, cases[i].bytes[j]);
            seconds += replay.ops[j].gemm
                           ? roofline_s(&c->gpu, &replay.ops[j]) /* its shape's: above */
                           : roofline_by_hand(cases[i].flops[j], cases[i].bytes[j]);
        }
        ck_assert_rel(transformer_ops_s(&c->gpu, &replay), seconds, 1e-12);
    }
    cluster_spec_free(c);
    model_spec_free(m);
}
END_TEST

/* The plan field: words of Megatron-Core's, in any order, written back in
 * the table's; an unknown one, or modules other than core_attn without
 * selective recomputation, refused in one line naming the field. */
START_TEST(recompute_modules_field)
{
    g_autoptr(PlanSpec) plan = plan_spec_new();
    GError *error = NULL;
    g_autofree char *fallback = plan_field_text(plan, PLAN_RECOMPUTE_MODULES);
    ck_assert_str_eq(fallback, "core_attn");
    ck_assert(plan_spec_set(plan, PLAN_RECOMPUTE_MODULES, "moe_act,layernorm,mla_up_proj",
                            "--recompute-modules", &error));
    g_autofree char *text = plan_field_text(plan, PLAN_RECOMPUTE_MODULES);
    ck_assert_str_eq(text, "layernorm,mla_up_proj,moe_act");
    /* Megatron's command line separates them by spaces */
    ck_assert(plan_spec_set(plan, PLAN_RECOMPUTE_MODULES, "moe_act mla_up_proj",
                            "--recompute-modules", &error));
    g_autofree char *spaced = plan_field_text(plan, PLAN_RECOMPUTE_MODULES);
    ck_assert_str_eq(spaced, "mla_up_proj,moe_act");
    ck_assert(!plan_spec_set(plan, PLAN_RECOMPUTE_MODULES, "layernorm,moe", "--recompute-modules",
                             &error));
    ck_assert_str_eq(error->message, "--recompute-modules: expected a list of "
                                     "\"core_attn\", \"layernorm\", \"mla_up_proj\", \"moe_act\", "
                                     "separated by commas or spaces, got \"layernorm,moe\"");
    g_clear_error(&error);
    g_autoptr(ModelSpec) m = small(FALSE);
    g_autoptr(ClusterSpec) c = test_cluster(1, 1, 1e9, 1e9);
    ck_assert(plan_spec_set(plan, PLAN_RECOMPUTE_MODULES, "layernorm", "--recompute-modules",
                            &error));
    plan->global_batch_size = 1;
    ck_assert(!strategy_resolve(plan, m, c, &error));
    ck_assert_str_eq(error->message, "--recompute-modules: expected core_attn unless recompute is "
                                     "selective (the modules it replays), got layernorm");
    g_clear_error(&error);
}
END_TEST

/* DeepSeek-V3's own plan (arXiv 2412.19437, section 3.1: PP 16, EP 64
 * over 2,048 H800s, ZeRO-1, no tensor parallelism), fp8, its MTP layer,
 * micro-batch 1 of 4,096 tokens and the report's 15,360 sequences a step.
 * Without recomputation the second stage, whose 4 MoE layers keep 15
 * micro-batches in flight (1F1B, pp - 1 = 15 ahead of it), needs more
 * than 80 GiB; recomputing its RMSNorms and MLA up-projections, as the
 * report's section 3.2.3 does, it fits: each layer and micro-batch no
 * longer keeps its attention's Q, K and V (2 x 4,096 x 128 x (192 + 192
 * + 128) bytes) nor its two norms' outputs (fp8, 4,096 x 7,168 bytes
 * each), but for the one layer whose replay, before its backward, has
 * made them again at the peak: 4 x 15 - 1 layers' worth fewer. */
START_TEST(deepseek_v3_own_plan_fits_with_modules)
{
    static const struct {
        PlanField field;
        const char *value;
    } own[] = {
        {PLAN_PP, "16"},
        {PLAN_EP, "64"},
        {PLAN_ZERO_STAGE, "1"},
        {PLAN_MICRO_BATCH_SIZE, "1"},
        {PLAN_GLOBAL_BATCH_SIZE, "15360"},
        {PLAN_MTP_NUM_LAYERS, "1"},
        {PLAN_DTYPE, "fp8"},
    };
    double peaks[2], stage1[2];
    for (int modules = 0; modules < 2; modules++) {
        Run run = run_new(test_shipped_model("models/hf", "deepseek-v3.json"),
                          test_shipped_cluster("dgx-h800.json", 256));
        run.model->seq_length = 4096;
        for (gsize i = 0; i < G_N_ELEMENTS(own); i++)
            ck_assert(plan_spec_set(run.plan, own[i].field, own[i].value, "own", NULL));
        if (modules) {
            ck_assert(plan_spec_set(run.plan, PLAN_RECOMPUTE, "selective", "own", NULL));
            ck_assert(plan_spec_set(run.plan, PLAN_RECOMPUTE_MODULES, "layernorm,mla_up_proj",
                                    "own", NULL));
        }
        run_simulate(&run);
        peaks[modules] = run.rep.metrics.peak_bytes;
        stage1[modules] = run.rep.metrics.stages[1].peak_split[MEM_ACTIVATIONS];
        ck_assert_int_eq(run.rep.metrics.fits, modules);
        run_free(&run);
    }
    double kept = 2 * 4096.0 * 128 * (192 + 192 + 128) + 2 * 4096.0 * 7168;
    ck_assert_rel(stage1[0] - stage1[1], (4 * 15 - 1) * kept, 1e-9);
    ck_assert_msg(peaks[1] < 80 * 1073741824.0, "%.2f GiB", peaks[1] / 1073741824.0);
}
END_TEST

Suite *suite_deepseek(void)
{
    Suite *s = suite_create("deepseek");
    TCase *tc = tcase_create("deepseek");
    tcase_add_test(tc, mla_operations_by_hand);
    tcase_add_test(tc, mla_flash_backward_by_hand);
    tcase_add_test(tc, mla_activations_by_hand);
    tcase_add_test(tc, mla_tensor_parallel_latents);
    tcase_add_test(tc, deepseek_v3_model_flops_as_bridge);
    tcase_add_test(tc, mtp_layer_on_the_last_stage);
    tcase_add_test(tc, mtp_layouts);
    tcase_add_test(tc, mtp_refused);
    tcase_add_test(tc, deepseek_v3_recipe_plan_fits);
    tcase_add_test(tc, recompute_modules_keep_by_hand);
    tcase_add_test(tc, recompute_modules_replay_by_hand);
    tcase_add_test(tc, recompute_modules_field);
    tcase_add_test(tc, deepseek_v3_own_plan_fits_with_modules);
    suite_add_tcase(s, tc);
    return s;
}
