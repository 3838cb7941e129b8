/* check_fp8.c: the precision recipes (docs/model.md, "Precision
 * recipes") against hand calculation: a large square GEMM at the FP8
 * peak, Transformer Engine's input casts in each recipe, the activations
 * it keeps quantized, each dtype's peak, MFU against the recipe's own
 * peak and Megatron-Bridge's model TFLOP/s, and the refusals of GPUs
 * without the format. */
#include <math.h>
#include <string.h>

#include "cost/roofline.h"
#include "cost/transformer.h"
#include "spec/grid.h"
#include "strategy/strategy.h"
#include "testutil.h"

/* An n x n x n GEMM as transformer.c costs it: inputs of `in` bytes an
 * element, a bf16 output. */
static Op square(double n, Dtype dtype)
{
    double in = dtype_bytes(dtype), out = dtype_bytes(DTYPE_BF16);
    return (Op){.name = "gemm",
                .flops = 2 * n * n * n,
                .bytes = 2 * in * n * n + out * n * n,
                .gemm = 1,
                .m = n,
                .n = n,
                .k = n,
                .batch = 1,
                .dtype = dtype};
}

/* 8192^3 on H100 SXM (topologies/dgx-h100.json): 64 x 64 = 4096 tiles of
 * 128 x 128 on 132 SMs, 32 waves, each 132 x 2 x 128^2 x 8192 FLOPs. The
 * intensities, 2 n^3 / (6 n^2) = 2731 FLOP/B in bf16 and 2 n^3 / (4 n^2)
 * = 4096 in fp8, are both past the curve's last point (951, 0.847), so
 * both run at 0.847 of their peak: 989 and 1979 TFLOPS (H100 datasheet,
 * dense), times the profile's gemm_sustained, 0.649, in both, and fp8 at
 * its gemm_dtype_share, 0.968 (SOURCES.md: Transformer Engine's GEMM
 * profiling guide on H200). After each wave's math its epilogue, the same
 * in both: 132 tiles of 128^2 bf16 outputs at 3,350 GB/s x 0.85. */
START_TEST(test_square_gemm_fp8)
{
    g_autoptr(ClusterSpec) c = test_shipped_cluster("dgx-h100.json", 1);
    double n = 8192, wave = 132 * 2 * 128.0 * 128 * n;
    double epilogues = 32 * 132 * 128.0 * 128 * 2 / (3350e9 * 0.85);
    Op bf16 = square(n, DTYPE_BF16), fp8 = square(n, DTYPE_FP8);
    ck_assert_rel(gemm_compute_s(&c->gpu, &bf16), 32 * wave / (989e12 * 0.847 * 0.649) + epilogues,
                  1e-12);
    ck_assert_rel(gemm_compute_s(&c->gpu, &fp8),
                  32 * wave / (1979e12 * 0.847 * 0.649 * 0.968) + epilogues, 1e-12);
}
END_TEST

/* The MLP block of a GPT layer (h, f = 4h, t = 1), b s = n tokens: in
 * bf16 its GEMMs read 2 bytes an element; in fp8 with delayed scaling
 * mlp_up reads its n x h input and h x f weight at 1 byte and writes n x f
 * in bf16. Its input is the norm's output, which Transformer Engine's
 * LayerNormLinear quantizes in the norm's own kernel (with_quantized_norm):
 * the norm reads 2 and writes 1 + 1 bytes an element (the copy and its
 * transpose), 4 n h bytes where bf16's norm moves 4 n h too, and no cast
 * of its own. mlp_down's input, the activation's output, gets Transformer
 * Engine's cast and transpose: read 2, write 1 + 1 bytes of n x f. */
START_TEST(test_mlp_casts)
{
    g_autoptr(ModelSpec) m = test_gpt(2, 1024, 16, 32000, 2048);
    double n = 2048, h = 1024, f = 4096;
    OpList bf16, fp8;
    transformer_block_ops(m, BLOCK_MLP, (Shard){.micro_batch = 1, .tp = 1, .dtype = DTYPE_BF16},
                          &bf16);
    transformer_block_ops(m, BLOCK_MLP, (Shard){.micro_batch = 1, .tp = 1, .dtype = DTYPE_FP8},
                          &fp8);
    ck_assert_int_eq(fp8.n, bf16.n + 1); /* a cast before mlp_down only */
    ck_assert_str_eq(fp8.ops[0].name, "norm");
    ck_assert_rel(fp8.ops[0].bytes, 4 * n * h, 1e-15);
    ck_assert_str_eq(fp8.ops[1].name, "mlp_up");
    ck_assert_rel(fp8.ops[1].bytes, n * h + h * f + 2 * n * f, 1e-15);
    ck_assert_int_eq(fp8.ops[1].dtype, DTYPE_FP8);
    ck_assert_str_eq(fp8.ops[3].name, "fp8_cast");
    ck_assert_rel(fp8.ops[3].bytes, 4 * n * f, 1e-15);
    ck_assert_str_eq(fp8.ops[4].name, "mlp_down");
    ck_assert_rel(bf16.ops[1].bytes, 2 * (n * h + h * f + n * f), 1e-15);
    /* the same FLOPs, so the same model FLOPs */
    ck_assert_rel(transformer_ops_flops(&fp8, TRUE), transformer_ops_flops(&bf16, TRUE), 1e-15);
}
END_TEST

/* Korthikanti et al. 2022, section 4.1, GPT layer at t = 1 in bf16:
 * attention 11 sbh + the core, MLP 19 sbh, each block's norm input 2 sbh
 * besides. In fp8 Transformer Engine keeps the GEMM inputs in fp8: the
 * qkv input (2 sbh) and the projection input (2 sbh) halve, so attention
 * keeps 2 sbh less; fc1's input (2 sbh) and fc2's (8 sbh) halve, so the
 * MLP keeps 5 sbh less. */
START_TEST(test_fp8_activations)
{
    g_autoptr(ModelSpec) m = test_gpt(2, 1024, 16, 32000, 2048);
    double sbh = 2048.0 * 1024;
    Shard bf16 = {.micro_batch = 1, .tp = 1, .dtype = DTYPE_BF16};
    Shard fp8 = {.micro_batch = 1, .tp = 1, .dtype = DTYPE_FP8};
    for (int b = 0; b < TRANSFORMER_BLOCKS; b++) {
        double saved = transformer_block_activation_bytes(m, (Block)b, bf16, RECOMPUTE_NONE) -
                       transformer_block_activation_bytes(m, (Block)b, fp8, RECOMPUTE_NONE);
        ck_assert_rel(saved, (b == BLOCK_ATTENTION ? 2 : 5) * sbh, 1e-12);
    }
}
END_TEST

/* MFU is against the recipe's own dense peak (docs/report.md): model
 * FLOPs over the step time, the GPUs and 1979 TFLOPS (H100's FP8 peak)
 * in fp8, 989 in bf16. Megatron-Bridge's model TFLOP/s a GPU counts
 * attention's causal half: tiny-gpt's L layers each do QK^T and
 * score x V, 2 s^2 h FLOPs each a sequence forward, so Bridge's count is
 * the model FLOPs less 3 x L x 2 s^2 h a sequence (of 4 here). */
START_TEST(test_mfu_own_peak)
{
    for (int fp8 = 0; fp8 < 2; fp8++) {
        Run run = run_new(test_shipped_model("models", "tiny-gpt.json"),
                          test_shipped_cluster("dgx-h100.json", 1));
        run.plan->dtype = fp8 ? DTYPE_FP8 : DTYPE_BF16;
        run.plan->dp = 1;
        run.plan->global_batch_size = 4;
        run_simulate(&run);
        const Metrics *mt = &run.rep.metrics;
        double peak = fp8 ? 1979e12 : 989e12;
        ck_assert_rel(mt->mfu, mt->model_flops / (mt->step_time_s * 1 * peak), 1e-12);
        double s = run.model->seq_length, h = run.model->hidden_size;
        double causal = mt->model_flops - 4 * 3 * run.model->layers * 2 * s * s * h;
        ck_assert_rel(metrics_model_tflops_per_gpu(mt, 1), causal / mt->step_time_s / 1e12, 1e-12);
        run_free(&run);
    }
}
END_TEST

/* No utilisation above its own peak: Llama 3 70B in nvfp4 on 64 B200s (tp
 * 2, pp 4 x 5 chunks, the published GB200 plan's shape), its FP4 GEMMs at
 * the bf16 GEMMs' share of their peak (gemm_dtype_share 1, the datasheets'
 * ratio: the shipped profile's 0.523 keeps them under the bf16 peak), runs
 * its model FLOPs above the bf16 peak (the GB200 sweep's "MFU 123.2 %" of
 * issue 35 was such a ratio), yet its MFU and HFU, against nvfp4's 9000
 * TFLOPS, stay under 1; the ratio to the bf16 peak is the MFU times 4. */
START_TEST(test_utilisation_under_its_own_peak)
{
    Run run = run_new(test_shipped_model("models", "llama3-70b.json"),
                      test_shipped_cluster("dgx-b200.json", 8));
    run.cluster->gpu.gemm_dtype_share[DTYPE_NVFP4] = 1;
    PlanSpec *p = run.plan;
    p->tp = 2;
    p->pp = 4;
    p->virtual_stages = 5;
    p->schedule = SCHEDULE_INTERLEAVED;
    p->sequence_parallel = TRUE;
    p->zero_stage = 1;
    p->global_batch_size = 256;
    p->dtype = DTYPE_NVFP4;
    run_simulate(&run);
    const Metrics *mt = &run.rep.metrics;
    ck_assert_double_eq(mt->peak_flops, 9000e12);
    ck_assert_msg(mt->mfu < 1 && mt->hfu < 1, "MFU %.3f, HFU %.3f", mt->mfu, mt->hfu);
    ck_assert_msg(mt->mfu * mt->peak_flops / mt->bf16_peak_flops > 1,
                  "model FLOPs at %.3f of the bf16 peak", mt->mfu * mt->peak_flops / 2250e12);
    run_free(&run);
}
END_TEST

/* Each recipe's quantization of mlp_up's and mlp_down's inputs (GPT MLP
 * block, n tokens of width h into 4h, t = 2 with sequence parallelism:
 * the norm's n/2 rows, f = 4h/2 columns on this GPU), in Transformer
 * Engine's kernels: the copies for the GEMM and for its weight gradient,
 * each q bytes an element with its scale's share: fp8 1, mxfp8 1 + 1/32
 * (an E8M0 byte per 32), nvfp4 1/2 + 1/16 (an E4M3 byte per 16).
 * - mlp_up's input, after the norm, on this GPU's n/2 rows before the
 *   all-gather (layernorm_linear.py): where the scale needs no amax (fp8
 *   delayed, mxfp8) the norm writes the copies itself (read 2, write 2q);
 *   under current scaling (fp8 tensorwise, nvfp4's per-tensor scale) the
 *   norm writes bf16 (read 2, write 2) taking the amax, and a cast
 *   follows (read 2, write 2q).
 * - mlp_down's input, n x f: a cast (read 2, write 2q), after an amax
 *   pass (read 2) under current scaling.
 * On a GPU whose FP8 GEMMs take any layout (Blackwell: fp8_one_copy)
 * per-tensor fp8 writes one copy, q, where the block formats still write
 * both. The GEMM reads its input and weight at q bytes and writes bf16. */
START_TEST(test_recipe_casts)
{
    g_autoptr(ModelSpec) m = test_gpt(2, 1024, 16, 32000, 2048);
    double n = 2048, ns = n / 2, h = 1024, f = 4096 / 2;
    static const struct {
        Dtype dtype;
        gboolean amax_pass, one_copy;
        const char *cast;
        double q, copies;
    } cases[] = {
        {DTYPE_FP8, FALSE, FALSE, "fp8_cast", 1, 2},
        {DTYPE_FP8, TRUE, FALSE, "fp8_cast", 1, 2},
        {DTYPE_MXFP8, FALSE, FALSE, "mxfp8_cast", 1 + 1.0 / 32, 2},
        {DTYPE_NVFP4, TRUE, FALSE, "nvfp4_cast", 0.5 + 1.0 / 16, 2},
        {DTYPE_FP8, TRUE, TRUE, "fp8_cast", 1, 1},
        {DTYPE_FP8, FALSE, TRUE, "fp8_cast", 1, 1},
        {DTYPE_MXFP8, FALSE, TRUE, "mxfp8_cast", 1 + 1.0 / 32, 2},
    };
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        OpList ops;
        Shard sh = {.micro_batch = 1,
                    .tp = 2,
                    .sequence_parallel = TRUE,
                    .dtype = cases[k].dtype,
                    .amax_pass = cases[k].amax_pass,
                    .fp8_one_copy = cases[k].one_copy};
        transformer_block_ops(m, BLOCK_MLP, sh, &ops);
        double q = cases[k].q, w = cases[k].copies * q;
        int at = 0;
        ck_assert_str_eq(ops.ops[at].name, "norm");
        if (cases[k].amax_pass) {
            ck_assert_rel(ops.ops[at++].bytes, 4 * ns * h, 1e-15);
            ck_assert_str_eq(ops.ops[at].name, cases[k].cast);
        }
        ck_assert_rel(ops.ops[at++].bytes, (2 + w) * ns * h, 1e-15);
        ck_assert_str_eq(ops.ops[at].name, "mlp_up");
        ck_assert_rel(ops.ops[at].bytes, q * (n * h + h * f) + 2 * n * f, 1e-15);
        ck_assert_int_eq(ops.ops[at++].dtype, cases[k].dtype);
        ck_assert_str_eq(ops.ops[at++].name, "activation");
        if (cases[k].amax_pass) {
            ck_assert_str_eq(ops.ops[at].name, "amax");
            ck_assert_rel(ops.ops[at++].bytes, 2 * n * f, 1e-15);
        }
        ck_assert_str_eq(ops.ops[at].name, cases[k].cast);
        ck_assert_rel(ops.ops[at++].bytes, (2 + w) * n * f, 1e-15);
        ck_assert_str_eq(ops.ops[at].name, "mlp_down");
    }
    /* the plan's: nvfp4 and fp8 tensorwise take the amax pass, the others not */
    g_autoptr(PlanSpec) plan = plan_spec_new();
    for (int d = 0; d < DTYPES; d++)
        for (int r = 0; r < 2; r++) {
            plan->dtype = (Dtype)d;
            plan->fp8_recipe = r ? FP8_RECIPE_TENSORWISE : FP8_RECIPE_DELAYED;
            ck_assert_int_eq(transformer_shard(plan).amax_pass,
                             d == DTYPE_NVFP4 || (d == DTYPE_FP8 && r));
        }
    /* the GPU's: Blackwell's profile says its FP8 GEMMs take any layout */
    g_autoptr(ClusterSpec) b200 = test_shipped_cluster("dgx-b200.json", 1);
    g_autoptr(ClusterSpec) h100 = test_shipped_cluster("dgx-h100.json", 1);
    ck_assert(transformer_shard_on(plan, &b200->gpu).fp8_one_copy);
    ck_assert(!transformer_shard_on(plan, &h100->gpu).fp8_one_copy);
}
END_TEST

/* What a GPT layer keeps of its GEMM inputs (test_fp8_activations: 2 sbh
 * elements in attention, the qkv and projection inputs; 5 sbh in the MLP,
 * fc1's and fc2's) at q bytes an element: against fp8's 1 byte, mxfp8
 * keeps 1/32 more of each, nvfp4 1 - 9/16 less. */
START_TEST(test_recipe_activations)
{
    g_autoptr(ModelSpec) m = test_gpt(2, 1024, 16, 32000, 2048);
    double sbh = 2048.0 * 1024;
    for (int b = 0; b < TRANSFORMER_BLOCKS; b++) {
        double elements = (b == BLOCK_ATTENTION ? 2 : 5) * sbh, kept[DTYPES];
        for (int d = DTYPE_FP8; d < DTYPES; d++)
            kept[d] = transformer_block_activation_bytes(
                m, (Block)b, (Shard){.micro_batch = 1, .tp = 1, .dtype = (Dtype)d}, RECOMPUTE_NONE);
        ck_assert_rel(kept[DTYPE_MXFP8] - kept[DTYPE_FP8], elements / 32, 1e-9);
        ck_assert_rel(kept[DTYPE_FP8] - kept[DTYPE_NVFP4], elements * (1 - 9.0 / 16), 1e-9);
    }
}
END_TEST

/* Each dtype's dense peak (topologies/gpus/, NVIDIA's datasheets): B200
 * 2250 TFLOPS bf16, 4500 fp8 and mxfp8 (its tensor cores take MXFP8's
 * scales at the FP8 rate), 9000 nvfp4; H100 989 and 1979, and neither
 * block format, whose plans it refuses naming its key; the default sweep
 * tries none of them. */
START_TEST(test_recipe_peaks)
{
    g_autoptr(ClusterSpec) b200 = test_shipped_cluster("dgx-b200.json", 1);
    g_autoptr(ClusterSpec) h100 = test_shipped_cluster("dgx-h100.json", 1);
    static const double b200_peaks[] = {[DTYPE_BF16] = 2250e12,
                                        [DTYPE_FP8] = 4500e12,
                                        [DTYPE_MXFP8] = 4500e12,
                                        [DTYPE_NVFP4] = 9000e12};
    static const double h100_peaks[] = {
        [DTYPE_BF16] = 989e12, [DTYPE_FP8] = 1979e12, [DTYPE_MXFP8] = 0, [DTYPE_NVFP4] = 0};
    for (int d = 0; d < DTYPES; d++) {
        ck_assert_double_eq(roofline_peak(&b200->gpu, (Dtype)d), b200_peaks[d]);
        ck_assert_double_eq(roofline_peak(&h100->gpu, (Dtype)d), h100_peaks[d]);
    }
    g_autoptr(ModelSpec) m = test_shipped_model("models", "tiny-gpt.json");
    static const struct {
        Dtype dtype;
        const char *key;
    } refused[] = {{DTYPE_MXFP8, "$.gpu.mxfp8: expected tensor cores that take MXFP8's block "
                                 "scales"},
                   {DTYPE_NVFP4, "$.gpu.peak_fp4_tflops: expected the GPU's dense FP4 peak"}};
    for (gsize k = 0; k < G_N_ELEMENTS(refused); k++) {
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->dtype = refused[k].dtype;
        GError *error = NULL;
        ck_assert(!plan_spec_resolve(plan, m, h100, &error));
        ck_assert_msg(strstr(error->message, refused[k].key), "%s", error->message);
        g_error_free(error);
        ck_assert(plan_spec_resolve(plan, m, b200, NULL));
    }
    /* a precision is the user's numerics: the default space has no dtype
     * axis (issue 37), whatever formats the GPU has */
    g_autoptr(PlanGrid) grid = plan_grid_default(m, b200);
    for (guint a = 0; a < grid->axes->len; a++)
        ck_assert_int_ne(g_array_index(grid->axes, GridAxis, a).field, PLAN_DTYPE);
}
END_TEST

/* tiny-gpt's parameters P and its layers' L, and what ZeRO-1 over 4 GPUs
 * of one node of `cluster` holds of them and all-gathers a step (ring), in
 * `dtype` with `fp8_gather` and `reuse` (the plan fields'), gradients
 * accumulated in `acc`. */
typedef struct {
    double P, L, held, gathered;
} Zero1;

static Zero1 zero1_on_four(const char *cluster, Dtype dtype, gboolean fp8_gather, gboolean reuse,
                           GradAccumDtype acc)
{
    Run run =
        run_new(test_shipped_model("models", "tiny-gpt.json"), test_shipped_cluster(cluster, 1));
    run.cluster->gpus_per_node = 4;
    run.plan->dtype = dtype;
    run.plan->zero_stage = 1;
    run.plan->fp8_param_gather = fp8_gather;
    run.plan->reuse_grad_buf_for_mxfp8_param_ag = reuse;
    run.plan->grad_accum_dtype = acc;
    run.plan->collective_algorithm = ALGORITHM_RING;
    run.plan->global_batch_size = 8;
    run_simulate(&run);
    Zero1 z = {.P = transformer_params(run.model),
               .L = run.model->layers * transformer_layer_params(run.model, 1),
               .held = run.rep.metrics.peak_split[MEM_PARAMS],
               .gathered = run.rep.metrics.comm[TAG_ZERO][COLL_ALL_GATHER].bytes};
    run_free(&run);
    return z;
}

/* `plan`, resolved for tiny-gpt on one node of `cluster`, is refused
 * with a message that names `key`. */
static void refused_on_tiny(const char *cluster, PlanSpec *plan, const char *key)
{
    g_autoptr(ClusterSpec) c = test_shipped_cluster(cluster, 1);
    g_autoptr(ModelSpec) m = test_shipped_model("models", "tiny-gpt.json");
    GError *error = NULL;
    ck_assert(plan_spec_resolve(plan, m, c, NULL));
    ck_assert(!strategy_check(plan, m, &error));
    ck_assert_msg(strstr(error->message, key) != NULL, "%s", error->message);
    g_error_free(error);
}

/* fp8_param_gather (Megatron-Core's --fp8-param-gather): the layers'
 * parameters held and gathered in fp8. On tiny-gpt, ZeRO-1 over d = 4
 * GPUs, with L the layers' parameters and P the model's: the parameters
 * take L + 2 (P - L) bytes, and the all-gather of the updated ones sends
 * (d - 1)/d of that (a ring), against 2 P and (d - 1)/d 2 P without; bf16
 * GEMMs or no ZeRO are refused. */
START_TEST(test_fp8_param_gather)
{
    const double d = 4;
    for (int gather = 0; gather < 2; gather++) {
        Zero1 z = zero1_on_four("dgx-h100.json", DTYPE_FP8, gather, FALSE, GRAD_ACCUM_FP32);
        double held = gather ? z.L + 2 * (z.P - z.L) : 2 * z.P;
        ck_assert_double_eq_tol(z.held, held, 1e-9 * held);
        ck_assert_double_eq_tol(z.gathered, (d - 1) / d * held, 1e-9 * held);
    }
    for (int refused = 0; refused < 2; refused++) {
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->fp8_param_gather = TRUE;
        plan->dtype = refused ? DTYPE_BF16 : DTYPE_FP8;
        plan->zero_stage = refused ? 1 : 0;
        refused_on_tiny("dgx-h100.json", plan, "fp8_param_gather");
    }
}
END_TEST

/* reuse_grad_buf_for_mxfp8_param_ag (Megatron-Core's
 * --reuse-grad-buf-for-mxfp8-param-ag, which Megatron-Bridge's MXFP8
 * precision sets: "The paramaters are cast from bf16 to MXFP8 during
 * copy", distributed_data_parallel.py): the layers' mxfp8 parameters are
 * held as before, L q + 2 (P - L) bytes with q = 1 + 1/32 (an E4M3 byte
 * and its share of a block's E8M0 scale), but all-gathered in the gradient
 * buffer, g bytes a parameter in its grad_accum_dtype: (d - 1)/d (L g +
 * 2 (P - L)) on tiny-gpt's ZeRO-1 ring over d = 4 B200s. Refused without
 * mxfp8, fp8_param_gather or the distributed optimizer (zero_stage 1). */
START_TEST(test_mxfp8_param_gather_in_grad_buffer)
{
    const double d = 4, q = 1 + 1.0 / 32;
    for (int reuse = 0; reuse < 2; reuse++)
        for (GradAccumDtype acc = GRAD_ACCUM_FP32; acc <= GRAD_ACCUM_BF16; acc++) {
            Zero1 z = zero1_on_four("dgx-b200.json", DTYPE_MXFP8, TRUE, reuse, acc);
            double g = acc == GRAD_ACCUM_FP32 ? 4 : 2;
            double held = z.L * q + 2 * (z.P - z.L);
            double gathered = reuse ? z.L * g + 2 * (z.P - z.L) : held;
            ck_assert_double_eq_tol(z.held, held, 1e-9 * held);
            ck_assert_double_eq_tol(z.gathered, (d - 1) / d * gathered, 1e-9 * gathered);
        }
    for (int refused = 0; refused < 3; refused++) {
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->reuse_grad_buf_for_mxfp8_param_ag = TRUE;
        plan->dtype = refused == 0 ? DTYPE_FP8 : DTYPE_MXFP8;
        plan->fp8_param_gather = refused != 1;
        plan->zero_stage = refused == 2 ? 2 : 1;
        refused_on_tiny("dgx-b200.json", plan, "reuse_grad_buf_for_mxfp8_param_ag");
    }
}
END_TEST

/* Transformer Engine's amax reductions (fp8.c, delayed scaling only): per micro-batch, at the end
 * of its forward 3 fp32 amaxes per fp8 GEMM (input, weight, output) and at
 * the end of its backward 2 (the gradients), over the d = 4 data-parallel
 * ranks, one all-reduce each: a ring sends 2 (d - 1) / d of it. With 2
 * pipeline stages a rank holds half of tiny-gpt's layers, each with 4 fp8
 * GEMMs (qkv, out_proj, mlp_up, mlp_down). Under
 * zb-h1 the backward splits, and only B (which passes the gradients on)
 * reduces; in bf16 and under current scaling (fp8_recipe tensorwise),
 * nothing. */
START_TEST(test_amax_reductions)
{
    const double d = 4;
    for (int i = 0; i < 4; i++) {
        Run run = run_new(test_shipped_model("models", "tiny-gpt.json"),
                          test_shipped_cluster("dgx-h100.json", 1));
        run.plan->pp = 2;
        run.plan->dtype = i == 2 ? DTYPE_BF16 : DTYPE_FP8;
        run.plan->fp8_recipe = i == 3 ? FP8_RECIPE_TENSORWISE : FP8_RECIPE_DELAYED;
        run.plan->schedule = i == 1 ? SCHEDULE_ZBH1 : SCHEDULE_1F1B;
        run.plan->collective_algorithm = ALGORITHM_RING;
        run.plan->global_batch_size = 8;
        run_simulate(&run);
        double mb = 8 / d, gemms = 4.0 * run.model->layers / 2;
        const CommStat *x = &run.rep.metrics.comm[TAG_AMAX][COLL_ALL_REDUCE];
        ck_assert_int_eq(x->count, i < 2 ? 2 * mb : 0);
        ck_assert_double_eq_tol(x->bytes, i < 2 ? 2 * (d - 1) / d * mb * gemms * (3 + 2) * 4 : 0,
                                1e-9);
        run_free(&run);
    }
}
END_TEST

/* The amax all-reduce over the 8 data-parallel ranks of tp 4 on 4 nodes
 * is a few hundred bytes, a tree across the nodes: not symmetric under the shift of
 * the dp coordinate, but latency-bound (net.c: no transfer over a packet),
 * so the replay keeps the dp symmetry and simulates as few ranks as in
 * bf16, with the step time of the full replay (within 1e-9, as
 * check_symmetry.c compares them). */
START_TEST(test_amax_keeps_symmetry)
{
    double step[2];
    int ranks[3];
    for (int i = 0; i < 3; i++) {
        Run run = run_new(test_shipped_model("models", "tiny-gpt.json"),
                          test_shipped_cluster("dgx-h100.json", 4));
        run.plan->tp = 4;
        run.plan->dtype = i < 2 ? DTYPE_FP8 : DTYPE_BF16;
        run.plan->full_fidelity = i == 1;
        run.plan->global_batch_size = 64;
        run_simulate(&run);
        const CommStat *x = &run.rep.metrics.comm[TAG_AMAX][COLL_ALL_REDUCE];
        ck_assert(i < 2 ? x->count > 0 && x->algorithms == 1u << ALGORITHM_TREE : x->count == 0);
        if (i < 2)
            step[i] = run.rep.metrics.step_time_s;
        ranks[i] = run.rep.metrics.simulated_ranks;
        run_free(&run);
    }
    ck_assert_int_eq(ranks[0], ranks[2]);
    ck_assert_int_eq(ranks[1], 32);
    ck_assert_int_lt(ranks[0], 32);
    ck_assert_rel(step[0], step[1], 1e-9);
}
END_TEST

/* A100 has no FP8: the plan is refused, naming the cluster's key. */
START_TEST(test_a100_refuses_fp8)
{
    g_autoptr(ClusterSpec) c = test_shipped_cluster("dgx-a100-80gb.json", 1);
    g_autoptr(ModelSpec) m = test_shipped_model("models", "tiny-gpt.json");
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->dtype = DTYPE_FP8;
    GError *error = NULL;
    ck_assert(!plan_spec_resolve(plan, m, c, &error));
    ck_assert_ptr_nonnull(strstr(error->message, "$.gpu.peak_fp8_tflops"));
    ck_assert_ptr_nonnull(strstr(error->message, "dgx-a100-80gb.json"));
    g_error_free(error);
    plan->dtype = DTYPE_BF16;
    ck_assert(plan_spec_resolve(plan, m, c, NULL));
}
END_TEST

Suite *suite_fp8(void)
{
    Suite *s = suite_create("fp8");
    TCase *tc = tcase_create("fp8");
    tcase_add_test(tc, test_square_gemm_fp8);
    tcase_add_test(tc, test_fp8_param_gather);
    tcase_add_test(tc, test_mxfp8_param_gather_in_grad_buffer);
    tcase_add_test(tc, test_amax_reductions);
    tcase_add_test(tc, test_amax_keeps_symmetry);
    tcase_add_test(tc, test_mlp_casts);
    tcase_add_test(tc, test_fp8_activations);
    tcase_add_test(tc, test_mfu_own_peak);
    tcase_add_test(tc, test_recipe_casts);
    tcase_add_test(tc, test_recipe_activations);
    tcase_add_test(tc, test_recipe_peaks);
    tcase_add_test(tc, test_utilisation_under_its_own_peak);
    tcase_add_test(tc, test_a100_refuses_fp8);
    suite_add_tcase(s, tc);
    return s;
}
