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
    Op gemm = {"gemm", 1e12, 1e9, 1};
    ck_assert_rel(roofline_s(&gpu, &gemm), 0.02 + 3e-6, 1e-15);
    /* memory-bound: 8e9 bytes / 0.8e12 = 0.01 s > 1e9 / 50e12 */
    Op copy = {"copy", 1e9, 8e9, 0};
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
    ck_assert_rel(tf_params(m), eq2 + 2.0 * h, 1e-15);
    ck_assert_rel(tf_layer_params(m, 1), 12.0 * h * h + 13.0 * h, 1e-15); /* docs/model.md */
    model_spec_free(m);
}
END_TEST

/* Llama 2 7B: 6,738,415,616 parameters (the count Hugging Face reports). */
START_TEST(llama_parameters)
{
    ModelSpec m = {(char *)"llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, MLP_SWIGLU, FALSE};
    ck_assert_double_eq(tf_params(&m), 6738415616.0);
}
END_TEST

/* Korthikanti et al. 2022 eq. 7: F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). */
START_TEST(model_flops_match_korthikanti_eq7)
{
    int l = 24, h = 2048, V = 51200, s = 2048;
    double B = 512;
    ModelSpec *m = test_gpt(l, h, 16, V, s);
    double eq7 = 72.0 * B * s * l * h * h * (1 + s / (6.0 * h) + V / (12.0 * l * h));
    ck_assert_rel(tf_model_flops(m, B), eq7, 1e-14);
    model_spec_free(m);
}
END_TEST

/* Korthikanti et al. 2022, section 4, bytes per layer per micro-batch. */
static double layer_bytes(const ModelSpec *m, Shard sh, Recompute rc)
{
    return tf_block_activation_bytes(m, BLOCK_ATTENTION, sh, rc) +
           tf_block_activation_bytes(m, BLOCK_MLP, sh, rc);
}

START_TEST(activations_match_korthikanti_table)
{
    double s = 2048, b = 4, h = 4096, a = 32, t = 8;
    ModelSpec *m = test_gpt(8, (int)h, (int)a, 50000, (int)s);
    Shard none = {(int)b, 1, FALSE}, tp = {(int)b, (int)t, FALSE}, sp = {(int)b, (int)t, TRUE};
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

/* Backward matrix multiplies do twice the forward's FLOPs, so a layer's
 * forward GEMM FLOPs are docs/model.md's (Compute): QKV 2bsh(h + 2h_kv),
 * scores and score x V 2bs^2h each, projection 2bsh^2, MLP 4bshf (GeLU) or
 * 6bshf (SwiGLU). */
START_TEST(layer_gemm_flops)
{
    double s = 1024, b = 2, h = 1024, f = 2816, kv = 4, a = 16;
    double hkv = kv * h / a;
    ModelSpec m = {(char *)"gqa", 2,    (int)h, (int)a,     (int)kv,
                   (int)f,        1000, (int)s, MLP_SWIGLU, FALSE};
    Shard sh = {(int)b, 1, FALSE};
    OpList ops;
    tf_block_ops(&m, BLOCK_ATTENTION, sh, &ops);
    ck_assert_rel(tf_ops_flops(&ops, TRUE),
                  2 * b * s * h * (h + 2 * hkv) + 4 * b * s * s * h + 2 * b * s * h * h, 1e-15);
    tf_block_ops(&m, BLOCK_MLP, sh, &ops);
    ck_assert_rel(tf_ops_flops(&ops, TRUE), 6 * b * s * h * f, 1e-15);
}
END_TEST

Suite *suite_model(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("closed forms");
    tcase_add_test(tc, roofline_takes_the_slower_bound);
    tcase_add_test(tc, gpt_parameters_match_narayanan_eq2);
    tcase_add_test(tc, llama_parameters);
    tcase_add_test(tc, model_flops_match_korthikanti_eq7);
    tcase_add_test(tc, activations_match_korthikanti_table);
    tcase_add_test(tc, layer_gemm_flops);
    suite_add_tcase(s, tc);
    return s;
}
