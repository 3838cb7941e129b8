/* check_hybrid.c: hybrid models of Mamba-2 mixers, attention and MLP
 * layers (docs/model.md, "Hybrid models"), held to hand counts on
 * Nemotron-H 8B (models/hf/nemotron-h-8b.json): h 4096, 52 layers of
 * pattern "M-M-M-M*-..." (24 Mamba-2 mixers, 4 attention layers, 24 MLPs),
 * Mamba-2 of 128 heads of 64 (d_inner 8192), 8 groups of state N 128, a
 * convolution of 4 taps with its bias, chunks of Q 256; attention of 32
 * heads of 128 and 8 KV heads; a squared-ReLU MLP of f 21,504; vocabulary
 * 131,072, untied; max_position_embeddings 8192 (the sequence a config
 * gives). */
#include <math.h>

#include "cost/transformer.h"
#include "app/simulate.h"
#include "testutil.h"

static ModelSpec *nemotron_h_8b(void)
{
    return test_shipped_model("models/hf", "nemotron-h-8b.json");
}

/* Its parameters, by hand, as transformers' NemotronH and Megatron-Core's
 * hybrid model hold them:
 *   - a Mamba-2 mixer layer: in_proj h x (2 x 8192 + 2 x 8 x 128 + 128) =
 *     4096 x 18,560 = 76,021,760; conv1d over 8192 + 2048 = 10,240
 *     channels, 4 taps and a bias: 51,200; dt_bias, A_log and D, 3 x 128;
 *     the gated norm 8192; out_proj 8192 x 4096 = 33,554,432; the pre-norm
 *     4096: 109,640,064;
 *   - an attention layer: QKV 4096 x (4096 + 2 x 1024) = 25,165,824, the
 *     output 16,777,216, the norm 4096: 41,947,136;
 *   - an MLP layer: up and down 2 x 4096 x 21,504 = 176,160,768, the norm
 *     4096: 176,164,864;
 *   - the embedding and the output layer 2 x 131,072 x 4096 =
 *     1,073,741,824, the final norm 4096:
 * 24 x 109,640,064 + 4 x 41,947,136 + 24 x 176,164,864 + 1,073,741,824 +
 * 4096 = 8,100,852,736, the count of the checkpoint's tensors (its 8.1B;
 * "Nemotron-H-8B-Base-8K: 8,100,852,736 parameters" in the published
 * analyses of its safetensors). On one GPU of tp 2 a Mamba layer holds
 * half of all but its pre-norm: 109,635,968 / 2 + 4096 = 54,822,080. */
START_TEST(nemotron_h_8b_parameters)
{
    g_autoptr(ModelSpec) m = nemotron_h_8b();
    double mamba = 4096.0 * 18560 + 10240 * 5 + 3 * 128 + 8192 + 8192.0 * 4096 + 4096;
    double attention = 4096.0 * 6144 + 4096.0 * 4096 + 4096;
    double mlp = 2 * 4096.0 * 21504 + 4096;
    ck_assert_double_eq(mamba, 109640064);
    ck_assert_int_eq(transformer_block_layers(m, BLOCK_MAMBA), 24);
    ck_assert_int_eq(transformer_block_layers(m, BLOCK_ATTENTION), 4);
    ck_assert_int_eq(transformer_block_layers(m, BLOCK_MLP), 24);
    ck_assert_int_eq(transformer_model_blocks(m), 52);
    ck_assert_double_eq(transformer_layer_params_at(m, 0, 1, 1, 1), mamba);
    ck_assert_double_eq(transformer_layer_params_at(m, 1, 1, 1, 1), mlp);
    ck_assert_double_eq(transformer_layer_params_at(m, 7, 1, 1, 1), attention); /* "M-M-M-M*" */
    ck_assert_double_eq(transformer_params(m),
                        24 * mamba + 4 * attention + 24 * mlp + 2 * 131072.0 * 4096 + 4096);
    ck_assert_double_eq(transformer_params(m), 8100852736);
    ck_assert_double_eq(transformer_active_params(m), 8100852736);
    ck_assert_double_eq(transformer_layer_params_at(m, 0, 2, 2, 1), 54822080);
}
END_TEST

/* Model FLOPs a token, 3 x the forward's matrix multiplies, by hand with
 * s 8192:
 *   - a Mamba layer: in_proj 2 x 4096 x 18,560 = 152,043,520; the SSD
 *     scan, 128 heads x (2 Q P + 4 N P) + 8 groups x 2 Q N = 128 x (32,768
 *     + 32,768) + 524,288 = 8,912,896; out_proj 2 x 8192 x 4096 =
 *     67,108,864: 228,065,280;
 *   - an attention layer: QKV 2 x 4096 x 6144 = 50,331,648, QK^T and score
 *     x V over the whole sequence 2 x 8192 x (4096 + 4096) = 134,217,728,
 *     the output 2 x 4096 x 4096 = 33,554,432: 218,103,808;
 *   - an MLP layer: 2 x 2 x 4096 x 21,504 = 352,321,536;
 *   - the logits: 2 x 4096 x 131,072 = 1,073,741,824;
 * 24 x 228,065,280 + 4 x 218,103,808 + 24 x 352,321,536 + 1,073,741,824
 * = 15,875,440,640 forward, 47,626,321,920 a token, 5.9 x the parameters
 * (the convolution and the norms are not matrix multiplies). With
 * attention's causal half, as Megatron-LM counts it (4 s h (h + h/4 +
 * s/2) an attention layer, 150,994,944 a token): 15,607,005,184 forward,
 * Megatron-LM's count (its scan 7 x 8192 x 128 = 7,340,032 a Mamba layer
 * and token, 15,569,256,448) but for the scan. */
START_TEST(nemotron_h_8b_model_flops)
{
    g_autoptr(ModelSpec) m = nemotron_h_8b();
    double forward = 24 * 228065280.0 + 4 * 218103808.0 + 24 * 352321536.0 + 1073741824.0;
    ck_assert_double_eq(forward, 15875440640);
    ck_assert_int_eq(m->seq_length, 8192);
    ck_assert_double_eq(transformer_model_flops(m, 1), 3 * 8192 * forward);
    ck_assert_double_eq(transformer_model_flops(m, 1) / 8192, 47626321920);
    double causal = forward - 4 * 67108864.0, megatron = causal - 24 * (8912896.0 - 7340032.0);
    ck_assert_double_eq(causal, 15607005184);
    ck_assert_double_eq(megatron, 15569256448);
    ck_assert_double_eq(transformer_causal_model_flops(m, 1), 3 * 8192 * causal);
}
END_TEST

/* A Mamba layer's operations on one GPU of tp 2, one sequence of 8192:
 * in_proj 8192 x 4096 x (18,560 / 2), the scan half the heads' and
 * groups', out_proj's input 4096 wide; what it keeps, a token (bf16, no
 * dropout): the norm's input and in_proj's, 2 x 2 x 4096; in_proj's
 * output 2 x 9280, the scan's before and after its gate 2 x 2 x 4096; the
 * group norm's fp32 1/rms of 4 groups, 16; out_proj's input 2 x 4096:
 * 59,536 bytes; under full
 * recomputation, each layer of a hybrid model its input, 2 x 4096. */
START_TEST(mamba_layer_on_tp2_by_hand)
{
    g_autoptr(ModelSpec) m = nemotron_h_8b();
    Shard sh = {.micro_batch = 1, .tp = 2};
    double n = 8192;
    OpList ops;
    transformer_block_ops(m, BLOCK_MAMBA, sh, &ops);
    double gemm = 2 * n * 4096 * 9280 + 2 * n * 4096 * 4096 + n * 8912896 / 2;
    ck_assert_double_eq(transformer_ops_flops(&ops, TRUE), gemm);
    ck_assert_double_eq(transformer_block_activation_bytes(m, BLOCK_MAMBA, sh, RECOMPUTE_NONE),
                        59536 * n);
    ck_assert_double_eq(transformer_block_activation_bytes(m, BLOCK_MLP, sh, RECOMPUTE_FULL),
                        2 * 4096 * n);
}
END_TEST

/* Nemotron-H 8B simulates on a DGX H100 with tp 2 and pp 2: 26 layers a
 * stage, as Megatron-Core splits a hybrid model's layers, it fits, and its
 * model FLOPs are the step's. */
START_TEST(nemotron_h_8b_on_dgx_h100_tp2_pp2)
{
    enum { GB = 16 };
    Run run = run_new(nemotron_h_8b(), test_shipped_cluster("dgx-h100.json", 1));
    run.plan->tp = 2;
    run.plan->pp = 2;
    run.plan->global_batch_size = GB;
    run_simulate(&run);
    const Metrics *mt = &run.rep.metrics;
    ck_assert_int_eq(mt->n_stages, 2);
    ck_assert_int_eq(mt->stages[0].layers, 26);
    ck_assert_int_eq(mt->stages[1].layers, 26);
    ck_assert(mt->fits);
    ck_assert_double_eq(mt->model_flops, transformer_model_flops(run.model, GB));
    ck_assert(mt->step_time_s > 0);
    run_free(&run);
}
END_TEST

Suite *suite_hybrid(void)
{
    Suite *s = suite_create("hybrid");
    TCase *tc = tcase_create("nemotron_h");
    tcase_add_test(tc, nemotron_h_8b_parameters);
    tcase_add_test(tc, nemotron_h_8b_model_flops);
    tcase_add_test(tc, mamba_layer_on_tp2_by_hand);
    tcase_add_test(tc, nemotron_h_8b_on_dgx_h100_tp2_pp2);
    suite_add_tcase(s, tc);
    return s;
}
