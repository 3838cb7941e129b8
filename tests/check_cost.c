/* check_cost.c: the cost of one GPU operation (src/cost/roofline.c,
 * docs/model.md "Compute"): GEMM tiles and waves by hand, the efficiency
 * curve, the memory roofline, and the shipped GPUs' curves against the
 * shapes cuBLAS measurements rank (small and skinny GEMMs slower per FLOP
 * than large square ones). */
#include <math.h>
#include <string.h>

#include "cost/roofline.h"
#include "cost/transformer.h"
#include "testutil.h"

/* A GPU with 4 SMs, a 100 TFLOPS peak at 50 % and memory fast enough that
 * GEMMs are compute-bound, no launch cost, and its GEMMs' epilogues under
 * the next tiles' math (their own test: epilogues_by_hand). */
static GpuSpec four_sms(void)
{
    return (GpuSpec){.peak_flops = 100e12,
                     .memory_Bps = 1e18,
                     .compute_efficiency = 0.5,
                     .memory_efficiency = 1,
                     .sm_count = 4,
                     .gemm_epilogue_overlap = TRUE};
}

static Op gemm_op(double batch, double m, double n, double k)
{
    return (Op){.name = "gemm",
                .flops = 2 * batch * m * n * k,
                .bytes = 2 * batch * (m * k + k * n + m * n),
                .gemm = 1,
                .m = m,
                .n = n,
                .k = k,
                .batch = batch};
}

/* One wave of 4 tiles of 128 x 128 over k = 1024 is 4 x 2 x 128 x 128 x
 * 1024 FLOPs at 50 TFLOPS. A 256 x 256 output is 4 tiles: one wave. A
 * 128 x 640 output is 5 tiles, sm_count + 1: two waves, twice the time for
 * 1.25 times the FLOPs. */
START_TEST(wave_quantisation_by_hand)
{
    GpuSpec gpu = four_sms();
    double wave_s = 4 * 2 * 128.0 * 128 * 1024 / 50e12;
    Op full = gemm_op(1, 256, 256, 1024), one_more = gemm_op(1, 128, 640, 1024);
    ck_assert_double_eq(gemm_waves(&gpu, &full), 1);
    ck_assert_rel(roofline_s(&gpu, &full), wave_s, 1e-12);
    ck_assert_double_eq(gemm_waves(&gpu, &one_more), 2);
    ck_assert_rel(roofline_s(&gpu, &one_more), 2 * wave_s, 1e-12);
    /* a batch of 5 single tiles: the same two waves */
    Op batched = gemm_op(5, 128, 128, 1024);
    ck_assert_double_eq(gemm_waves(&gpu, &batched), 2);
    ck_assert_rel(roofline_s(&gpu, &batched), 2 * wave_s, 1e-12);
    /* tile quantisation: 257 rows need a third row of tiles, 6 in all */
    Op ragged = gemm_op(1, 257, 256, 1024);
    ck_assert_double_eq(gemm_waves(&gpu, &ragged), 2);
    ck_assert_rel(roofline_s(&gpu, &ragged), 2 * wave_s, 1e-12);
}
END_TEST

/* A dimension shorter than the tile cuts it to the dimension rounded up
 * to 64: 16 rows by 512 columns is 4 tiles of 64 x 128, one wave of
 * 4 x 2 x 64 x 128 x k FLOPs, half a wave of full tiles. */
START_TEST(short_dimensions_cut_the_tile)
{
    GpuSpec gpu = four_sms();
    Op skinny = gemm_op(1, 16, 512, 1024);
    ck_assert_double_eq(gemm_waves(&gpu, &skinny), 1);
    ck_assert_rel(roofline_s(&gpu, &skinny), 4 * 2 * 64.0 * 128 * 1024 / 50e12, 1e-12);
}
END_TEST

/* A wave's epilogue: each of the 4 SMs writes its tile's bf16 outputs at
 * a quarter of 1 TB/s x 0.5 before its next tile, 4 x 128 x 128 x 2 bytes
 * a wave in 262.144 ns, after the wave's math. 128 x 640 is two waves,
 * 5.369 us of math (wave_quantisation_by_hand) and 0.524 us of epilogues;
 * its 1.7 MB of operands take 3.5 us, compute-bound. 16 x 512 is one wave
 * of tiles cut to 64 x 128 (short_dimensions_cut_the_tile): 64 x 128 x 2
 * bytes an SM, half a full tile's. A GPU that overlaps them (Blackwell's)
 * has none, and a GEMM without waves neither. */
START_TEST(epilogues_by_hand)
{
    GpuSpec gpu = four_sms();
    gpu.memory_Bps = 1e12;
    gpu.memory_efficiency = 0.5;
    gpu.gemm_epilogue_overlap = FALSE;
    double wave_s = 4 * 2 * 128.0 * 128 * 1024 / 50e12, epilogue_s = 4 * 128 * 128 * 2 / 5e11;
    Op two = gemm_op(1, 128, 640, 1024), skinny = gemm_op(1, 16, 512, 1024);
    ck_assert_rel(gemm_epilogue_s(&gpu, &two), 2 * 262.144e-9, 1e-12);
    ck_assert_rel(roofline_s(&gpu, &two), 2 * wave_s + 2 * epilogue_s, 1e-12);
    ck_assert_rel(gemm_epilogue_s(&gpu, &skinny), epilogue_s / 2, 1e-12);
    gpu.gemm_epilogue_overlap = TRUE;
    ck_assert_double_eq(gemm_epilogue_s(&gpu, &two), 0);
    ck_assert_rel(roofline_s(&gpu, &two), 2 * wave_s, 1e-12);
    gpu.gemm_epilogue_overlap = FALSE;
    gpu.sm_count = 0;
    ck_assert_double_eq(gemm_epilogue_s(&gpu, &two), 0);
}
END_TEST

/* Without an SM count, or without a shape, a GEMM takes flops / (peak x
 * efficiency): the single-efficiency roofline the closed-form tests of
 * the other suites (test_cluster) rely on. */
START_TEST(no_sm_count_no_waves)
{
    GpuSpec gpu = four_sms();
    Op one_more = gemm_op(1, 128, 640, 1024);
    gpu.sm_count = 0;
    ck_assert_double_eq(gemm_waves(&gpu, &one_more), 0);
    ck_assert_rel(roofline_s(&gpu, &one_more), one_more.flops / 50e12, 1e-12);
    gpu.sm_count = 4;
    Op shapeless = {.name = "gemm", .flops = one_more.flops, .bytes = one_more.bytes, .gemm = 1};
    ck_assert_rel(roofline_s(&gpu, &shapeless), one_more.flops / 50e12, 1e-12);
}
END_TEST

/* The curve is linear in log(intensity) between its points, flat beyond
 * them; compute_efficiency without one. */
START_TEST(efficiency_curve_by_hand)
{
    GpuSpec gpu = four_sms();
    ck_assert_double_eq(gemm_efficiency_at(&gpu, 300), 0.5);
    gpu.gemm.n = 3;
    double x[] = {100, 800, 1600}, e[] = {0.4, 0.88, 0.8};
    for (int i = 0; i < 3; i++) {
        gpu.gemm.x[i] = x[i];
        gpu.gemm.y[i] = e[i];
    }
    ck_assert_double_eq(gemm_efficiency_at(&gpu, 10), 0.4);
    ck_assert_double_eq(gemm_efficiency_at(&gpu, 100), 0.4);
    ck_assert_rel(gemm_efficiency_at(&gpu, 100 * sqrt(8)), 0.64, 1e-12); /* half way in log */
    ck_assert_double_eq(gemm_efficiency_at(&gpu, 800), 0.88);
    ck_assert_rel(gemm_efficiency_at(&gpu, 800 * sqrt(2)), 0.84, 1e-12);
    ck_assert_double_eq(gemm_efficiency_at(&gpu, 1e6), 0.8);
    /* a GEMM's intensity is its flops / bytes: 256 x 256 x 1024 gives
     * 256 x 256 x 1024 / (2 x 256 x 1024 + 256 x 256) = 113.8; one wave */
    Op full = gemm_op(1, 256, 256, 1024);
    double f = log(full.flops / full.bytes / 100) / log(8);
    double wave_s = 4 * 2 * 128.0 * 128 * 1024 / (100e12 * (0.4 + f * 0.48));
    ck_assert_rel(roofline_s(&gpu, &full), wave_s, 1e-12);
}
END_TEST

/* The memory roofline: 4 GB at 2 TB/s x 0.8 is 2.5 ms, slower than 1 GFLOP
 * of an elementwise kernel at 100 TFLOPS x 0.5; plus the launch. A GEMM
 * whose bytes take longer than its waves is memory-bound too. */
START_TEST(memory_roofline_by_hand)
{
    GpuSpec gpu = {.peak_flops = 100e12,
                   .memory_Bps = 2e12,
                   .compute_efficiency = 0.5,
                   .memory_efficiency = 0.8,
                   .launch_s = 3e-6,
                   .sm_count = 4,
                   .gemm_epilogue_overlap = TRUE};
    Op copy = {.name = "copy", .flops = 1e9, .bytes = 4e9};
    ck_assert_rel(roofline_s(&gpu, &copy), 2.5e-3 + 3e-6, 1e-12);
    /* 16 x 2^22 by 2^22 x 16: one tile of 64 x 64 (the tile cut to the
     * dimensions), one wave of 4 x 2 x 64 x 64 x 2^22 FLOPs, 2.7 ms at 50
     * TFLOPS, against 0.27 GB of operands, 0.17 ms at 1.6 TB/s */
    Op skinny = gemm_op(1, 16, 16, 1 << 22);
    double memory_s = skinny.bytes / 1.6e12;
    double compute_s = 4 * 2 * 64.0 * 64 * (1 << 22) / 50e12;
    ck_assert_msg(memory_s < compute_s, "compute-bound by construction");
    ck_assert_rel(roofline_s(&gpu, &skinny), compute_s + 3e-6, 1e-12);
    Op wide = gemm_op(1, 16, 16, 1 << 22);
    wide.bytes *= 1000; /* as if the operands were read 1000 times: 168 ms */
    ck_assert_rel(roofline_s(&gpu, &wide), wide.bytes / 1.6e12 + 3e-6, 1e-12);
}
END_TEST

/* Achieved FLOP/s of one GEMM, launch included. */
static double rate(const GpuSpec *gpu, double batch, double m, double n, double k)
{
    Op op = gemm_op(batch, m, n, k);
    return op.flops / roofline_s(gpu, &op);
}

/* On every shipped GPU, as in cuBLAS measurements (topologies/SOURCES.md):
 * large square GEMMs reach most of the peak (over 70 %: the A100's curve
 * is its sustained training rate, 0.84 of a microbenchmark's 0.88), small ones and skinny ones
 * (a few rows, or an attention-like k of 128) much less; and a transformer
 * GEMM lands in between. The curves as a microbenchmark runs them: the
 * H100 and H200 profiles' gemm_sustained (their share in training) is
 * left out. */
START_TEST(small_and_skinny_gemms_are_slower)
{
    const char *files[] = {"dgx-a100-80gb.json", "dgx-h100.json", "dgx-h200.json"};
    for (int i = 0; i < 3; i++) {
        ClusterSpec *c = test_shipped_cluster(files[i], 0);
        GpuSpec alone = c->gpu;
        alone.gemm_sustained = 1;
        const GpuSpec *gpu = &alone;
        ck_assert_int_gt(gpu->sm_count, 0);
        ck_assert_int_gt(gpu->gemm.n, 1);
        double peak = gpu->peak_flops;
        double square = rate(gpu, 1, 8192, 8192, 8192);
        double small = rate(gpu, 1, 512, 512, 512);
        double skinny = rate(gpu, 1, 16, 8192, 8192);
        double attention = rate(gpu, 96, 2048, 2048, 128);
        double qkv = rate(gpu, 1, 2048, 4608, 12288); /* GPT-3 175B at tp 8 */
        ck_assert_msg(square > 0.70 * peak && square < peak, "%s: square %g", files[i], square);
        ck_assert_msg(small < 0.25 * square, "%s: small %g", files[i], small);
        ck_assert_msg(skinny < 0.25 * square, "%s: skinny %g", files[i], skinny);
        ck_assert_msg(attention < 0.6 * square, "%s: attention %g", files[i], attention);
        ck_assert_msg(qkv < square && qkv > attention, "%s: qkv %g", files[i], qkv);
        cluster_spec_free(c);
    }
}
END_TEST

/* A cluster file's curves: pairs with increasing x and y in (0, 1] (the
 * GEMM efficiencies) or (0, 4] (the attention's head-dimension factors);
 * anything else names the key. */
START_TEST(curve_is_validated)
{
    const char *bad[] = {
        "[]",         "[[100, 0.5], [100, 0.6]]", "[[100, 1.5]]", "[[0, 0.5]]", "[[100]]",
        "[100, 0.5]", "[[100, 0.5, 1]]",          "{}",           "[[64, 0]]",  "[[64, 5]]"};
    for (gsize i = 0; i < 2 * G_N_ELEMENTS(bad); i++) {
        const char *key = i % 2 ? "attention_head_dim_factor" : "gemm_efficiency";
        if (i % 2 && strcmp(bad[i / 2], "[[100, 1.5]]") == 0)
            continue; /* a factor may exceed 1 */
        g_autofree char *text = g_strdup_printf(
            "{\"name\": \"c\", \"nodes\": 1, \"gpus_per_node\": 8, \"gpu\": {\"peak_tflops\": "
            "312, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2039, \"sm_count\": 108, "
            "\"%s\": %s}, \"intra_node\": {\"bandwidth_GBps\": 300}, "
            "\"inter_node\": {\"bandwidth_GBps\": 25}}",
            key, bad[i / 2]);
        char *path = test_write_tmp(text);
        GError *error = NULL;
        ClusterSpec *c = cluster_spec_load(path, 0, &error);
        ck_assert_msg(!c, "accepted %s: %s", key, bad[i / 2]);
        ck_assert_msg(strstr(error->message, key), "%s", error->message);
        g_clear_error(&error);
        test_remove(path);
    }
}
END_TEST

/* Every operation list of a Llama layer has the rotary embedding; the
 * cross-entropy moves 38 bytes a logit unfused (docs/model.md). */
START_TEST(memory_bound_kernels)
{
    ModelSpec m = test_llama(2, 1024, 16, 16, 2816, 32000, 512);
    Shard sh = {.micro_batch = 2, .tp = 2};
    OpList ops;
    transformer_block_ops(&m, BLOCK_ATTENTION, sh, &ops);
    double n = 512 * 2, qk = 1024 / 2 + 1024 / 2;
    gboolean rope = FALSE;
    for (int i = 0; i < ops.n; i++)
        if (strcmp(ops.ops[i].name, "rope") == 0) {
            rope = TRUE;
            ck_assert_double_eq(ops.ops[i].bytes, 4 * n * qk);
        }
    ck_assert(rope);
    transformer_head_ops(&m, sh, &ops);
    ck_assert_str_eq(ops.ops[2].name, "loss");
    ck_assert_double_eq(ops.ops[2].bytes, 38 * n * 32000 / 2);
    ck_assert_double_eq(ops.ops[1].m, n); /* the logits GEMM has its shape */
    ck_assert_double_eq(ops.ops[1].n, 32000 / 2);
}
END_TEST

/* The time of a block's FlashAttention forward on `gpu`. */
static double flash_forward_s(const GpuSpec *gpu, const ModelSpec *m)
{
    OpList ops;
    transformer_block_ops(m, BLOCK_ATTENTION, (Shard){.micro_batch = 1, .tp = 1}, &ops);
    for (int i = 0; i < ops.n; i++)
        if (strcmp(ops.ops[i].name, "flash_attention") == 0)
            return transformer_op_s(gpu, &ops.ops[i]);
    ck_abort_msg("no flash_attention");
    return 0;
}

/* attention_head_dim_factor scales both attention efficiencies at the
 * kernel's head dimension, linear in log(head_dim) between points (as the
 * GEMM curve): 16 and 8 heads of a 1,024-wide layer (head_dim 64 and 128)
 * count the same FLOPs, so with factors 0.7 at 64 and 1 at 128 the first
 * takes 1 / 0.7 of the second's time; 11.3 heads' worth (head_dim
 * sqrt(64 x 128), halfway in log) would take 1 / 0.85. No curve: 1. */
START_TEST(attention_by_head_dim)
{
    GpuSpec gpu = four_sms();
    ModelSpec narrow = test_llama(2, 1024, 16, 16, 2816, 32000, 512);
    ModelSpec wide = test_llama(2, 1024, 8, 8, 2816, 32000, 512);
    double plain = flash_forward_s(&gpu, &narrow);
    ck_assert_double_eq_tol(plain, flash_forward_s(&gpu, &wide), 1e-15);
    gpu.attention_head_dim = (Curve){.n = 2, .x = {64, 128}, .y = {0.7, 1}};
    ck_assert_double_eq_tol(flash_forward_s(&gpu, &wide), plain, 1e-15);
    ck_assert_double_eq_tol(flash_forward_s(&gpu, &narrow), plain / 0.7, 1e-15);
    ck_assert_double_eq_tol(gpu_curve_at(&gpu.attention_head_dim, sqrt(64 * 128), 1), 0.85, 1e-12);
    ck_assert_double_eq(gpu_curve_at(&gpu.attention_head_dim, 32, 1), 0.7);
    ck_assert_double_eq(gpu_curve_at(&gpu.attention_head_dim, 512, 1), 1);
}
END_TEST

/* The loss's cross-entropy by implementation (docs/model.md, "The
 * head"), bytes a logit of the n x V/t this GPU holds, forward and
 * backward (Megatron-Core's tensor_parallel/cross_entropy.py and
 * fusions/fused_cross_entropy.py; Transformer Engine's Triton kernels):
 *   none   forward 2 + 4 (cast), 4 (max), 4 + 4 (subtract), 4 + 4 (exp),
 *          4 (sum), 4 + 4 (divide) = 38; backward 4 + 4 (times the
 *          loss's gradient) and 4 + 2 (cast to bf16) = 14;
 *   native forward 2 + 4, 4 + 4, 4 + 4 = 22; backward 4 + 2 = 6;
 *   te     forward 2 (online softmax), 2 + 2 (loss and gradient in
 *          place) = 6; backward 2 + 2 = 4.
 * The backward's time is its bytes over the forward's, where every other
 * operation's is twice its forward; what the loss keeps for backward is
 * the fp32 softmax, 4 bytes a logit, or te's bf16 logits, 2. */
START_TEST(cross_entropy_kernels)
{
    ModelSpec m = test_llama(2, 1024, 16, 16, 2816, 32000, 512);
    GpuSpec gpu = four_sms();
    double n = 512 * 2, logits = n * 32000 / 2, h = 1024;
    static const struct {
        CeFusion how;
        double forward, backward, kept;
    } cases[] = {{CE_FUSION_NONE, 38, 14, 4}, {CE_FUSION_NATIVE, 22, 6, 4}, {CE_FUSION_TE, 6, 4, 2}};
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        Shard sh = {.micro_batch = 2, .tp = 2, .ce_fusion = cases[k].how};
        OpList ops;
        transformer_head_ops(&m, sh, &ops);
        const Op *loss = &ops.ops[2];
        ck_assert_str_eq(loss->name, "loss");
        ck_assert_double_eq(loss->bytes, cases[k].forward * logits);
        double fwd = transformer_op_s(&gpu, loss);
        ck_assert_double_eq_tol(transformer_op_backward_s(&gpu, loss),
                                fwd * cases[k].backward / cases[k].forward, 1e-15 * fwd);
        /* the logits GEMM's backward is twice its forward */
        ck_assert_double_eq(transformer_op_backward_s(&gpu, &ops.ops[1]),
                            2 * transformer_op_s(&gpu, &ops.ops[1]));
        ck_assert_double_eq(transformer_head_activation_bytes(&m, sh),
                            4 * n * h + cases[k].kept * logits);
    }
    /* the plan's field */
    g_autoptr(PlanSpec) plan = plan_spec_new();
    ck_assert_int_eq(transformer_shard(plan).ce_fusion, CE_FUSION_NONE);
    plan->cross_entropy_fusion = CE_FUSION_TE;
    ck_assert_int_eq(transformer_shard(plan).ce_fusion, CE_FUSION_TE);
}
END_TEST

/* attention_seq_factor scales both attention efficiencies at the
 * sequence the kernel runs, linear in log(length) as the head-dimension
 * factor: a 512-token model against one of 1,024 at factors 0.8 at 512
 * and 1 at 1,024 runs at 0.8 of the efficiency; under ring context
 * parallelism of 2 the longer model's kernels run chunks of 512, at 0.8
 * too, while all-to-all's run the whole sequence, at 1. */
START_TEST(attention_by_sequence)
{
    GpuSpec gpu = four_sms();
    ModelSpec m = test_llama(2, 1024, 8, 8, 2816, 32000, 512);
    double plain = flash_forward_s(&gpu, &m);
    gpu.attention_seq = (Curve){.n = 2, .x = {512, 1024}, .y = {0.8, 1}};
    ck_assert_double_eq_tol(flash_forward_s(&gpu, &m), plain / 0.8, 1e-15);
    ModelSpec longer = test_llama(2, 1024, 8, 8, 2816, 32000, 1024);
    for (int a2a = 0; a2a < 2; a2a++) {
        Shard sh = {.micro_batch = 1, .tp = 1, .cp = 2, .cp_all_to_all = a2a};
        OpList ops;
        transformer_block_ops(&longer, BLOCK_ATTENTION, sh, &ops);
        for (int i = 0; i < ops.n; i++)
            if (strcmp(ops.ops[i].name, "flash_attention") == 0) {
                ck_assert_double_eq(ops.ops[i].n, a2a ? 1024 : 512);
                GpuSpec flat = four_sms(); /* no curve: factor 1 */
                double at = transformer_op_s(&gpu, &ops.ops[i]);
                double one = transformer_op_s(&flat, &ops.ops[i]);
                ck_assert_double_eq_tol(at, one / (a2a ? 1 : 0.8), 1e-15 * at);
            }
    }
}
END_TEST

/* gemm_dtype_share: a dtype's GEMM at its peak times the curve, the
 * sustained share and its own share of bf16's fraction: an fp8 8192^3 on
 * a GPU without waves at 0.9 of bf16's fraction takes 1 / 0.9 of its time
 * at 1; bf16 keeps 1. Each key is a narrow dtype's, in (0, 1]; anything
 * else is refused naming $.gpu.gemm_dtype_share. */
START_TEST(gemm_dtype_share)
{
    GpuSpec gpu = {.peak_flops = 100e12,
                   .peak_fp8_flops = 200e12,
                   .memory_Bps = 1e18,
                   .compute_efficiency = 0.5,
                   .memory_efficiency = 1};
    Op op = gemm_op(1, 8192, 8192, 8192);
    op.dtype = DTYPE_FP8;
    double plain = gemm_compute_s(&gpu, &op);
    gpu.gemm_dtype_share[DTYPE_FP8] = 0.9;
    ck_assert_double_eq_tol(gemm_compute_s(&gpu, &op), plain / 0.9, 1e-15);
    op.dtype = DTYPE_BF16;
    ck_assert_double_eq_tol(gemm_compute_s(&gpu, &op), 2 * plain, 1e-15);
    const char *bad[] = {"0.5", "{\"bf16\": 0.9}", "{\"fp8\": 0}", "{\"fp8\": 1.5}",
                         "{\"fp16\": 0.9}", "{\"fp8\": \"x\"}"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *text = g_strdup_printf(
            "{\"name\": \"c\", \"nodes\": 1, \"gpus_per_node\": 8, \"gpu\": {\"peak_tflops\": "
            "312, \"memory_GiB\": 80, \"memory_bandwidth_GBps\": 2039, "
            "\"gemm_dtype_share\": %s}, \"intra_node\": {\"bandwidth_GBps\": 300}, "
            "\"inter_node\": {\"bandwidth_GBps\": 25}}",
            bad[i]);
        char *path = test_write_tmp(text);
        GError *error = NULL;
        ClusterSpec *c = cluster_spec_load(path, 0, &error);
        ck_assert_msg(!c, "accepted %s", bad[i]);
        ck_assert_msg(strstr(error->message, "gemm_dtype_share"), "%s", error->message);
        g_clear_error(&error);
        test_remove(path);
    }
}
END_TEST

Suite *suite_cost(void)
{
    Suite *s = suite_create("cost");
    TCase *tc = tcase_create("gemm and roofline");
    tcase_add_test(tc, wave_quantisation_by_hand);
    tcase_add_test(tc, short_dimensions_cut_the_tile);
    tcase_add_test(tc, epilogues_by_hand);
    tcase_add_test(tc, no_sm_count_no_waves);
    tcase_add_test(tc, efficiency_curve_by_hand);
    tcase_add_test(tc, memory_roofline_by_hand);
    tcase_add_test(tc, small_and_skinny_gemms_are_slower);
    tcase_add_test(tc, curve_is_validated);
    tcase_add_test(tc, memory_bound_kernels);
    tcase_add_test(tc, attention_by_head_dim);
    tcase_add_test(tc, cross_entropy_kernels);
    tcase_add_test(tc, attention_by_sequence);
    tcase_add_test(tc, gemm_dtype_share);
    suite_add_tcase(s, tc);
    return s;
}
