/* check_model.c: roofline arithmetic and the
 * transformer's parameters, FLOPs and activation bytes against the closed
 * forms of docs/model.md ("Compute", "Memory") and their papers. */
#include <math.h>

#include "cost/roofline.h"
#include "cost/transformer.h"
#include "testutil.h"

START_TEST(roofline_takes_the_slower_bound)
{
    GpuSpec gpu = {.peak_flops = 100e12,
                   .memory_Bps = 1e12,
                   .compute_efficiency = 0.5,
                   .memory_efficiency = 0.8,
                   .launch_s = 3e-6};
    /* compute: 1e12 / (100e12 x 0.5) = 0.02 s; memory: 1e9 / (1e12 x 0.8) =
     * 1.25 ms; plus 3 us launch */
    Op gemm = {.name = "gemm", .flops = 1e12, .bytes = 1e9, .gemm = 1};
    ck_assert_rel(roofline_s(&gpu, &gemm), 0.02 + 3e-6, 1e-15);
    /* memory-bound: 8e9 bytes / 0.8e12 = 0.01 s > 1e9 / 50e12 */
    Op copy = {.name = "copy", .flops = 1e9, .bytes = 8e9};
    ck_assert_rel(roofline_s(&gpu, &copy), 0.01 + 3e-6, 1e-15);
}
END_TEST

/* Narayanan et al. SC'21 eq. 2: Psi = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h))
 * for a GPT with tied embeddings and learned positions; plansim also counts
 * the final LayerNorm (2h), which eq. 2 leaves out. */
START_TEST(gpt_parameters_match_narayanan_eq2)
{
    int l = 96, h = 12288, V = 51200, s = 2048;
    ModelSpec *m = test_gpt(l, h, 96, V, s);
    double eq2 = 12.0 * l * h * h * (1 + 13.0 / (12.0 * h) + (V + s) / (12.0 * l * h));
    ck_assert_rel(transformer_params(m), eq2 + 2.0 * h, 1e-15);
    ck_assert_rel(transformer_layer_params(m, 1), 12.0 * h * h + 13.0 * h,
                  1e-15); /* docs/model.md */
    model_spec_free(m);
}
END_TEST

/* Llama 2 7B: 6,738,415,616 parameters (the count Hugging Face reports). */
START_TEST(llama_parameters)
{
    ModelSpec m = test_llama(32, 4096, 32, 32, 11008, 32000, 4096);
    ck_assert_double_eq(transformer_params(&m), 6738415616.0);
}
END_TEST

/* Hugging Face configs of released checkpoints count their parameters
 * exactly: the totals of their safetensors files, as the Hub shows them,
 * each checked by hand from its config (per layer: Q h x a d, K and V
 * h x kv d, O a d x h, SwiGLU 3 h f, two RMSNorms of h; then the input
 * and output embeddings V h and the final norm h):
 *   - Llama 3 8B: 32 x 218,112,000 + 2 x 525,336,576 + 4,096;
 *   - Qwen2-7B, with a bias on Q, K and V (a d + 2 kv d):
 *     28 x 233,057,792 + 2 x 544,997,376 + 3,584;
 *   - Qwen3-8B, head_dim 128 (a d = 4,096 = h) and a Q and a K RMSNorm of
 *     128: 36 x 192,946,432 + 2 x 622,329,856 + 4,096;
 *   - Mistral-NeMo-Base-2407, head_dim 128 where h / a is 160:
 *     40 x 272,640,000 + 2 x 671,088,640 + 5,120;
 *   - Mistral-7B-v0.1, its sliding window changing no weight (Llama 3 8B's
 *     layer with its vocabulary of 32,000): 32 x 218,112,000 +
 *     2 x 131,072,000 + 4,096;
 * and the shipped models/hf configs, their published counts (each model
 * card's) rounded from these, active ones counting both embeddings:
 *   - Qwen3-30B-A3B, every layer a MoE of 128 experts of 768 and a router
 *     h x 128, head_dim 128: 48 x 623,120,640 + 2 x 311,164,928 + 2,048,
 *     and 48 x (19,140,864 + 8 x 4,718,592) + 622,331,904 = 3,353,032,704
 *     of them active (8 experts a token): "30.5B in total and 3.3B
 *     activated", 29.9B without the embeddings;
 *   - Qwen3-235B-A22B, 94 MoE layers of h 4096, 64 heads of 128 and 4 KV
 *     heads: Q and O 2 x 33,554,432, K and V 2 x 2,097,152, the Q and K
 *     norms 256, two RMSNorms 8,192, the router 4096 x 128 = 524,288 and
 *     128 experts of 3 x 4096 x 1536 = 18,874,368: 2,487,755,008 a layer;
 *     94 x 2,487,755,008 + 2 x 622,329,856 (151,936 x 4096) + 4,096 =
 *     235,093,634,560, and with 8 experts a token 94 x 222,830,848 +
 *     1,244,663,808 = 22,190,763,520 active: "235B in total and 22B
 *     activated", 234B without the embeddings;
 *   - GPT-OSS 120B, 36 MoE layers of h 2880, 64 heads of 64 and 8 KV
 *     heads: Q and O 2 x 11,796,480 and K and V 2 x 1,474,560, their
 *     biases 4,096 + 2 x 512 + 2,880 and 64 sink logits (26,550,144), two
 *     RMSNorms 5,760, the router 2880 x 128 with its bias of 128 (368,768)
 *     and 128 experts of gate and up 2880 x 5760 with their bias of 5,760
 *     and down 2880 x 2880 with its bias of 2,880 (24,891,840 each):
 *     3,213,080,192 a layer; 36 x 3,213,080,192 + 2 x 579,133,440
 *     (201,088 x 2880) + 2,880 = 116,829,156,672, and with 4 experts a
 *     token 36 x 126,492,032 + 2,880 + 1,158,266,880 = 5,711,982,912
 *     active. The gpt-oss model card (OpenAI, August 2025, Table 1) gives
 *     116.83B in all (MLP 114.71B, attention 0.96B, embedding and
 *     unembedding 1.16B) and 5.13B active, which counts the unembedding
 *     but not the embedding: 5,711,982,912 - 579,133,440 = 5,132,849,472. */
START_TEST(hugging_face_parameters)
{
    static const struct {
        const char *folder, *file;
        double params, active;
    } cases[] = {
        {"tests/data", "llama3-8b-hf.json", 8030261248.0, 8030261248.0},
        {"tests/data", "qwen2-7b-hf.json", 7615616512.0, 7615616512.0},
        {"tests/data", "qwen3-8b-hf.json", 8190735360.0, 8190735360.0},
        {"tests/data", "mistral-nemo-base-2407-hf.json", 12247782400.0, 12247782400.0},
        {"tests/data", "mistral-7b-v0.1-hf.json", 7241732096.0, 7241732096.0},
        {"models/hf", "qwen3-30b-a3b.json", 30532122624.0, 3353032704.0},
        {"models/hf", "qwen3-235b-a22b.json", 235093634560.0, 22190763520.0},
        {"models/hf", "gpt-oss-120b.json", 116829156672.0, 5711982912.0},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = test_shipped(cases[i].folder, cases[i].file);
        GError *error = NULL;
        g_autoptr(ModelSpec) m = model_spec_load(path, &error);
        ck_assert_msg(m, "%s: %s", cases[i].file, error ? error->message : "");
        ck_assert_msg(transformer_params(m) == cases[i].params,
                      "%s: %.0f parameters, expected %.0f", cases[i].file, transformer_params(m),
                      cases[i].params);
        ck_assert_msg(transformer_active_params(m) == cases[i].active,
                      "%s: %.0f active parameters, expected %.0f", cases[i].file,
                      transformer_active_params(m), cases[i].active);
    }
    /* the published figures, within a unit of their last digit (Qwen's
     * cards cut 3.35B to 3.3B, GPT-OSS's rounds); GPT-OSS's active count
     * leaves the input embedding out */
    static const struct {
        const char *file;
        double total, active; /* billions, given to `digits` decimals */
        int digits;
        gboolean embedding_active;
    } cards[] = {
        {"qwen3-30b-a3b.json", 30.5, 3.3, 1, TRUE},
        {"qwen3-235b-a22b.json", 235, 22, 0, TRUE},
        {"gpt-oss-120b.json", 116.83, 5.13, 2, FALSE},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cards); i++) {
        g_autoptr(ModelSpec) m = test_shipped_model("models/hf", cards[i].file);
        double unit = pow(10, -cards[i].digits);
        double embedding = cards[i].embedding_active ? 0 : (double)m->vocab_size * m->hidden_size;
        ck_assert(fabs(transformer_params(m) / 1e9 - cards[i].total) < unit);
        ck_assert(fabs((transformer_active_params(m) - embedding) / 1e9 - cards[i].active) < unit);
    }
}
END_TEST

/* DeepSeek-V3 (models/hf/deepseek-v3.json, its published config;
 * deepseek-ai/DeepSeek-V3's README_WEIGHTS.md: "Total parameters: 671B"
 * for the main model of 61 layers, and an MTP module of "11.5B unique
 * parameters", its embedding and output head shared), by hand from the
 * config: h 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, QK heads
 * of 128 + 64, V heads of 128, f 18,432, 256 routed experts and 1 shared
 * of f_e 2048, 8 a token, the first 3 layers dense, vocabulary 129,280,
 * untied:
 *   - MLA: h q + q + q a (128 + 64) + h (512 + 64) + 512 + 512 a (128 +
 *     128) + a 128 h = 187,107,328; two RMSNorms 2h;
 *   - a dense layer: MLA, norms, 3 h f = 396,361,728: 583,483,392;
 *   - a MoE layer: MLA, norms, the router h x 256, 257 experts of 3 h f_e
 *     = 44,040,192: 11,507,286,016 (8 + 1 experts of them active:
 *     585,318,400);
 *   - both embeddings 2 V h = 1,853,358,080 and the final norm h:
 *     3 x 583,483,392 + 58 x 11,507,286,016 + 1,853,358,080 + 7,168 =
 *     671,026,404,352 (the checkpoint's also has the router's 256
 *     correction biases a MoE layer, e_score_correction_bias, which
 *     Megatron-Core keeps as a buffer, not a trained parameter);
 *   - active: 3 x 583,483,392 + 58 x 585,318,400 + 1,853,358,080 + 7,168
 *     = 37,552,282,624, against the 36.7B published (which this count does
 *     not reproduce);
 *   - the MTP module: a MoE layer, eh_proj 2h^2 = 102,760,448 and its
 *     three norms 3h: 11,610,067,968, the 11.5B published. */
START_TEST(deepseek_v3_parameters)
{
    g_autoptr(ModelSpec) m = test_shipped_model("models/hf", "deepseek-v3.json");
    double h = 7168, a = 128, q = 1536, c = 512, f = 18432, fe = 2048, v = 129280;
    double mla =
        h * q + q + q * a * (128 + 64) + h * (c + 64) + c + c * a * (128 + 128) + a * 128 * h;
    double dense = mla + 2 * h + 3 * h * f, expert = 3 * h * fe;
    double moe = mla + 2 * h + h * 256 + 257 * expert,
           moe_active = mla + 2 * h + h * 256 + 9 * expert;
    ck_assert_double_eq(mla, 187107328);
    ck_assert_double_eq(moe, 11507286016);
    ck_assert_int_eq(m->mtp_layers, 1);
    ck_assert_int_eq(m->router_groups, 8); /* n_group: group-limited routing */
    ck_assert_int_eq(m->router_topk_groups, 4);
    ck_assert_double_eq(transformer_params(m), 3 * dense + 58 * moe + 2 * v * h + h);
    ck_assert_double_eq(transformer_params(m), 671026404352);
    ck_assert_double_eq(transformer_active_params(m), 3 * dense + 58 * moe_active + 2 * v * h + h);
    ck_assert_double_eq(transformer_active_params(m), 37552282624);
    ck_assert_double_eq(transformer_mtp_layers_params(m, 1), moe + 2 * h * h + 3 * h);
    ck_assert_double_eq(transformer_mtp_layers_params(m, 1), 11610067968);
}
END_TEST

/* Llama's attention_bias and mlp_bias, by hand on a small config (h 64,
 * 4 heads of 16, 2 KV heads, f 128, 2 layers, vocabulary 100): biases of
 * Q, K, V (64 + 2 x 32) and of the output (64); of gate and up (2 x 128)
 * and down (64): 512 a layer over the 2 x (64 x 128 + 2 x 64 x 32 + 3 x 64
 * x 128 + 128) + 2 x 6,400 + 64 without them. */
START_TEST(llama_biases_by_hand)
{
    static const char config[] =
        "{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4,"
        " \"num_key_value_heads\": 2, \"intermediate_size\": 128, \"vocab_size\": 100,"
        " \"max_position_embeddings\": 256, \"hidden_act\": \"silu\", \"model_type\": \"llama\","
        " \"tie_word_embeddings\": false, \"attention_bias\": %s, \"mlp_bias\": %s}";
    double plain = 2 * (64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128 + 128) + 2 * 6400 + 64;
    const char *words[] = {"false", "true"};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            g_autofree char *text = g_strdup_printf(config, words[a], words[b]);
            g_autofree char *path = test_write_tmp(text);
            GError *error = NULL;
            ModelSpec *m = model_spec_load(path, &error);
            ck_assert_msg(m, "%s", error ? error->message : "");
            double expected = plain + 2 * (a * (64 + 2 * 32 + 64) + b * (2 * 128 + 64));
            ck_assert_double_eq(transformer_params(m), expected);
            model_spec_free(m);
            test_remove(g_steal_pointer(&path));
        }
}
END_TEST

/* Korthikanti et al. 2022 eq. 7: F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). */
START_TEST(model_flops_match_korthikanti_eq7)
{
    int l = 24, h = 2048, V = 51200, s = 2048;
    double B = 512;
    ModelSpec *m = test_gpt(l, h, 16, V, s);
    double eq7 = 72.0 * B * s * l * h * h * (1 + s / (6.0 * h) + V / (12.0 * l * h));
    ck_assert_rel(transformer_model_flops(m, B), eq7, 1e-14);
    model_spec_free(m);
}
END_TEST

/* Korthikanti et al. 2022, section 4, bytes per layer per micro-batch. */
static double layer_bytes(const ModelSpec *m, Shard sh, Recompute rc)
{
    return transformer_block_activation_bytes(m, BLOCK_ATTENTION, sh, rc) +
           transformer_block_activation_bytes(m, BLOCK_MLP, sh, rc);
}

START_TEST(activations_match_korthikanti_table)
{
    double s = 2048, b = 4, h = 4096, a = 32, t = 8;
    ModelSpec *m = test_gpt(8, (int)h, (int)a, 50000, (int)s);
    /* the table's attention keeps the s x s scores: standard attention */
    Shard none = {.micro_batch = (int)b, .tp = 1, .attention = ATTENTION_STANDARD},
          tp = {.micro_batch = (int)b, .tp = (int)t, .attention = ATTENTION_STANDARD},
          sp = {.micro_batch = (int)b,
                .tp = (int)t,
                .sequence_parallel = TRUE,
                .attention = ATTENTION_STANDARD};
    double sbh = s * b * h;
    ck_assert_rel(layer_bytes(m, none, RECOMPUTE_NONE), sbh * (34 + 5 * a * s / h), 1e-15);
    ck_assert_rel(layer_bytes(m, tp, RECOMPUTE_NONE), sbh * (10 + 24 / t + 5 * a * s / (h * t)),
                  1e-15);
    ck_assert_rel(layer_bytes(m, sp, RECOMPUTE_NONE), sbh * (34 / t + 5 * a * s / (h * t)), 1e-15);
    ck_assert_rel(layer_bytes(m, tp, RECOMPUTE_SELECTIVE), sbh * (10 + 24 / t), 1e-15);
    ck_assert_rel(layer_bytes(m, sp, RECOMPUTE_SELECTIVE), 34 * sbh / t, 1e-15);
    ck_assert_rel(layer_bytes(m, tp, RECOMPUTE_FULL), 2 * sbh, 1e-15);
    model_spec_free(m);
}
END_TEST

/* FlashAttention (docs/model.md, "FlashAttention"): a GPT layer (f = 4h,
 * as many KV heads as heads) keeps Korthikanti's
 * sbh (34 + 5as/h), sbh (10 + 24/t + 5as/(ht)), sbh (34/t + 5as/(ht)) with
 * the s^2 term replaced by the logsumexp, 4asb/t; selective recomputation
 * keeps the same; full keeps the layer input. */
START_TEST(flash_layer_activations_by_hand)
{
    double s = 2048, b = 4, h = 4096, a = 32, t = 8;
    ModelSpec *m = test_gpt(8, (int)h, (int)a, 50000, (int)s);
    Shard none = {.micro_batch = (int)b, .tp = 1, .attention = ATTENTION_FLASH},
          tp = {.micro_batch = (int)b, .tp = (int)t, .attention = ATTENTION_FLASH},
          sp = {.micro_batch = (int)b,
                .tp = (int)t,
                .sequence_parallel = TRUE,
                .attention = ATTENTION_FLASH};
    double sbh = s * b * h, lse = 4 * a * s * b;
    ck_assert_rel(layer_bytes(m, none, RECOMPUTE_NONE), 34 * sbh + lse, 1e-15);
    ck_assert_rel(layer_bytes(m, tp, RECOMPUTE_NONE), sbh * (10 + 24 / t) + lse / t, 1e-15);
    ck_assert_rel(layer_bytes(m, sp, RECOMPUTE_NONE), 34 * sbh / t + lse / t, 1e-15);
    Shard shards[] = {none, tp, sp};
    for (gsize i = 0; i < G_N_ELEMENTS(shards); i++) {
        ck_assert_double_eq(layer_bytes(m, shards[i], RECOMPUTE_SELECTIVE),
                            layer_bytes(m, shards[i], RECOMPUTE_NONE));
        ck_assert_double_eq(
            transformer_block_replay_bytes(m, BLOCK_ATTENTION, shards[i], RECOMPUTE_SELECTIVE), 0);
    }
    ck_assert_rel(layer_bytes(m, tp, RECOMPUTE_FULL), 2 * sbh, 1e-15);
    /* against standard: exactly the 5as^2b/t term less the logsumexp */
    Shard tp_standard = tp;
    tp_standard.attention = ATTENTION_STANDARD;
    ck_assert_rel(layer_bytes(m, tp_standard, RECOMPUTE_NONE) - layer_bytes(m, tp, RECOMPUTE_NONE),
                  5 * a * s * s * b / t - lse / t, 1e-12);
    model_spec_free(m);
}
END_TEST

/* Grouped-query attention with a SwiGLU MLP (Llama-style, 8 KV heads of
 * 32, t = 4): the attention block keeps its norm's input, the QKV input
 * and the dropout mask (5sbh), Q (2sbh/t), K and V (2 x 2 s b h_kv / t),
 * the output (2sbh/t) and the logsumexp (4asb/t); the MLP its 5sbh and the
 * gate, up and down inputs (3 x 2sbf/t). */
START_TEST(flash_gqa_swiglu_activations_by_hand)
{
    double s = 4096, b = 1, h = 4096, a = 32, kv = 8, f = 14336, t = 4, hkv = kv * h / a;
    ModelSpec m = test_llama(2, (int)h, (int)a, (int)kv, (int)f, 128256, (int)s);
    Shard sh = {.micro_batch = (int)b, .tp = (int)t, .attention = ATTENTION_FLASH};
    double sbh = s * b * h;
    ck_assert_rel(transformer_block_activation_bytes(&m, BLOCK_ATTENTION, sh, RECOMPUTE_NONE),
                  5 * sbh + 2 * sbh / t + 4 * s * b * hkv / t + 2 * sbh / t + 4 * a * s * b / t,
                  1e-15);
    ck_assert_rel(transformer_block_activation_bytes(&m, BLOCK_MLP, sh, RECOMPUTE_NONE),
                  5 * sbh + 6 * s * b * f / t, 1e-15);
}
END_TEST

/* Backward matrix multiplies do twice the forward's FLOPs, so a layer's
 * forward GEMM FLOPs are docs/model.md's (Compute): QKV 2bsh(h + 2h_kv),
 * scores and score x V 2bs^2h each, projection 2bsh^2, MLP 4bshf (GeLU) or
 * 6bshf (SwiGLU). */
START_TEST(layer_gemm_flops)
{
    double s = 1024, b = 2, h = 1024, f = 2816, kv = 4, a = 16;
    double hkv = kv * h / a;
    ModelSpec m = test_llama(2, (int)h, (int)a, (int)kv, (int)f, 1000, (int)s);
    for (int att = 0; att < 2; att++) { /* the same FLOPs with either attention */
        Shard sh = {.micro_batch = (int)b, .tp = 1, .attention = (Attention)att};
        OpList ops;
        transformer_block_ops(&m, BLOCK_ATTENTION, sh, &ops);
        ck_assert_rel(transformer_ops_flops(&ops, TRUE),
                      2 * b * s * h * (h + 2 * hkv) + 4 * b * s * s * h + 2 * b * s * h * h, 1e-15);
        transformer_block_ops(&m, BLOCK_MLP, sh, &ops);
        ck_assert_rel(transformer_ops_flops(&ops, TRUE), 6 * b * s * h * f, 1e-15);
    }
}
END_TEST

Suite *suite_model(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("closed forms");
    tcase_add_test(tc, roofline_takes_the_slower_bound);
    tcase_add_test(tc, gpt_parameters_match_narayanan_eq2);
    tcase_add_test(tc, llama_parameters);
    tcase_add_test(tc, hugging_face_parameters);
    tcase_add_test(tc, deepseek_v3_parameters);
    tcase_add_test(tc, llama_biases_by_hand);
    tcase_add_test(tc, model_flops_match_korthikanti_eq7);
    tcase_add_test(tc, activations_match_korthikanti_table);
    tcase_add_test(tc, flash_layer_activations_by_hand);
    tcase_add_test(tc, flash_gqa_swiglu_activations_by_hand);
    tcase_add_test(tc, layer_gemm_flops);
    suite_add_tcase(s, tc);
    return s;
}
