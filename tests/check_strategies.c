/* check_strategies.c: tensor and sequence parallelism, ZeRO and
 * recomputation, each replayed and held to the literature's closed forms
 * (docs/model.md, "Strategies" and "Memory"): memory from the replay's
 * ledger, communication from the replay's comm table, time from its
 * compute stream. */
#include <math.h>
#include <string.h>

#include "net/collective.h"
#include "app/simulate.h"
#include "strategy/strategy.h"
#include "testutil.h"
#include "base/error.h"

static double model_states(const Metrics *m)
{
    return m->peak_split[MEM_PARAMS] + m->peak_split[MEM_GRADS] + m->peak_split[MEM_OPTIMIZER];
}

/* ---- ZeRO ------------------------------------------------------------- */

/* Rajbhandari et al., SC'20, section 3 and Figure 1 (K = 12), with bf16
 * gradients: model states per GPU 16 Psi, 4 Psi + 12 Psi/d,
 * 2 Psi + 14 Psi/d, 16 Psi/d; their example Psi = 7.5e9, d = 64 gives 120,
 * 31.4, 16.6 and 1.9 GB. With Megatron-LM's fp32 gradients (2 more bytes
 * per gradient, split as the gradients are): 18 Psi, 6 Psi + 12 Psi/d,
 * 2 Psi + 16 Psi/d, 18 Psi/d. Loop index: the stage, plus 4 for fp32. The
 * model here is a GPT of 7,500,001,280 parameters (37 layers of h = 4096,
 * V = 9900, s = 2048). */
START_TEST(zero_model_states_match_the_paper)
{
    static const double paper_GB[4] = {120, 31.4, 16.6, 1.9};
    int stage = _i % 4, d = 64;
    gboolean fp32 = _i >= 4;
    Run run = run_new(test_gpt(37, 4096, 32, 9900, 2048), test_cluster(8, 8, 300e9, 25e9));
    run.plan->zero_stage = stage;
    run.plan->grad_accum_dtype = fp32 ? GRAD_ACCUM_FP32 : GRAD_ACCUM_BF16;
    run.plan->global_batch_size = d; /* one micro-batch of one sequence */
    run_simulate(&run);
    double psi = transformer_params(run.model);
    ck_assert_double_eq(psi, 7500001280.0); /* 37 (12h^2 + 13h) + (V + s) h + 2h */
    double expected[2][4] = {
        {16 * psi, 4 * psi + 12 * psi / d, 2 * psi + 14 * psi / d, 16 * psi / d},
        {18 * psi, 6 * psi + 12 * psi / d, 2 * psi + 16 * psi / d, 18 * psi / d}};
    ck_assert_rel(model_states(&run.rep.metrics), expected[fp32][stage], 1e-12);
    if (!fp32)
        ck_assert_msg(fabs(model_states(&run.rep.metrics) / 1e9 - paper_GB[stage]) < 0.05,
                      "stage %d: %.3f GB, the paper says %.1f", stage,
                      model_states(&run.rep.metrics) / 1e9, paper_GB[stage]);
    run_free(&run);
}
END_TEST

/* Bytes each GPU sends for gradients and parameters in one step of one
 * micro-batch, all purposes together. */
static double sent_bytes(const Metrics *m, TaskTag tag)
{
    double bytes = 0;
    for (int op = 0; op < COLL_N_OPS; op++)
        bytes += m->comm[tag][op].bytes;
    return bytes;
}

/* Communication volume (ZeRO paper, section 7; docs/model.md,
 * "Strategies"): plain DP's ring all-reduce sends 2 (d-1)/d x 2 Psi bytes
 * per GPU; stages 1 and 2 the same (reduce-scatter, then all-gather of the
 * updated parameters); stage 3 1.5 times as much (two all-gathers and a
 * reduce-scatter). */
START_TEST(zero_communication_volume)
{
    const int d = 4;
    double dp_bytes = 0;
    for (int stage = 0; stage <= 3; stage++) {
        Run run = run_new(test_gpt(4, 256, 8, 1024, 128), test_cluster(1, d, 300e9, 25e9));
        run.model->tied_embeddings = FALSE; /* else the head gathers the shared words too */
        run.plan->zero_stage = stage;
        run.plan->collective_algorithm = ALGORITHM_RING; /* the volumes below are the ring's */
        run.plan->global_batch_size = d;                 /* m = 1 */
        run.plan->ddp_bucket_size = 300000;
        run.plan->grad_accum_dtype = GRAD_ACCUM_BF16; /* the paper's 2-byte gradients */
        run_simulate(&run);
        double psi = transformer_params(run.model);
        const Metrics *m = &run.rep.metrics;
        if (stage == 0) {
            dp_bytes = sent_bytes(m, TAG_DP);
            ck_assert_rel(dp_bytes, 2.0 * (d - 1) / d * 2 * psi, 1e-12);
            ck_assert_double_eq(sent_bytes(m, TAG_ZERO), 0);
        } else {
            ck_assert_double_eq(sent_bytes(m, TAG_DP), 0);
            ck_assert_rel(sent_bytes(m, TAG_ZERO), (stage == 3 ? 1.5 : 1.0) * dp_bytes, 1e-12);
        }
        run_free(&run);
    }
}
END_TEST

/* ZeRO-3's gathered copies are buffers while they live: at most two
 * segments' bf16 parameters at once (the one computing, the one gathered
 * ahead), and none once the step is over. */
START_TEST(zero3_buffers_hold_at_most_two_segments)
{
    Run run = run_new(test_gpt(4, 256, 8, 1024, 128), test_cluster(1, 4, 300e9, 25e9));
    run.plan->zero_stage = 3;
    run.plan->global_batch_size = 8;
    run_simulate(&run);
    ModelSpec *m = run.model;
    double layer = 2 * transformer_layer_params(m, 1), emb = 2 * transformer_embedding_params(m, 1);
    double buffers = run.rep.metrics.peak_split[MEM_BUFFERS];
    ck_assert(buffers > 0);
    ck_assert(buffers <= MAX(2 * layer, layer + emb));
    run_free(&run);
}
END_TEST

/* ---- activations and recomputation -------------------------------------- */

enum { S = 128, B = 2, H = 256, A = 8, V = 1024, T = 4 };

/* Peak activation bytes of a step with `layers` layers. */
static double peak_activations(int layers, int tp, gboolean sp, Recompute rc, Attention attention)
{
    Run run = run_new(test_gpt(layers, H, A, V, S), test_cluster(1, tp, 300e9, 25e9));
    run.plan->tp = tp;
    run.plan->sequence_parallel = sp;
    run.plan->recompute = rc;
    run.plan->attention = attention;
    run.plan->micro_batch_size = B;
    run.plan->global_batch_size = 2 * B; /* two micro-batches */
    run_simulate(&run);
    double bytes = run.rep.metrics.peak_split[MEM_ACTIVATIONS];
    run_free(&run);
    return bytes;
}

/* Korthikanti et al. 2022, section 4 (docs/model.md, "Memory"): bytes one
 * layer keeps per micro-batch, read off the ledger as the growth of the
 * peak from one layer to two. Their table is standard attention's, which
 * keeps the s x s scores (5as^2b/t); FlashAttention keeps instead the fp32
 * logsumexp of each head and token, 4asb/t, and so selective recomputation
 * keeps the same as none (docs/model.md, "FlashAttention"). */
START_TEST(layer_activations_match_korthikanti)
{
    double sbh = (double)S * B * H, t = T, as_h = (double)A * S / H, lse = 4.0 * A * S * B;
    struct {
        int tp;
        gboolean sp;
        Recompute rc;
        Attention attention;
        double expected;
    } cases[] = {
        {1, FALSE, RECOMPUTE_NONE, ATTENTION_STANDARD, sbh * (34 + 5 * as_h)},
        {T, FALSE, RECOMPUTE_NONE, ATTENTION_STANDARD, sbh * (10 + 24 / t + 5 * as_h / t)},
        {T, TRUE, RECOMPUTE_NONE, ATTENTION_STANDARD, sbh * (34 / t + 5 * as_h / t)},
        {T, FALSE, RECOMPUTE_SELECTIVE, ATTENTION_STANDARD, sbh * (10 + 24 / t)},
        {T, TRUE, RECOMPUTE_SELECTIVE, ATTENTION_STANDARD, 34 * sbh / t},
        {T, FALSE, RECOMPUTE_FULL, ATTENTION_STANDARD, 2 * sbh},
        {1, FALSE, RECOMPUTE_NONE, ATTENTION_FLASH, 34 * sbh + lse},
        {T, FALSE, RECOMPUTE_NONE, ATTENTION_FLASH, sbh * (10 + 24 / t) + lse / t},
        {T, TRUE, RECOMPUTE_SELECTIVE, ATTENTION_FLASH, 34 * sbh / t + lse / t},
        {T, FALSE, RECOMPUTE_FULL, ATTENTION_FLASH, 2 * sbh},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        double one = peak_activations(1, cases[i].tp, cases[i].sp, cases[i].rc, cases[i].attention);
        double two = peak_activations(2, cases[i].tp, cases[i].sp, cases[i].rc, cases[i].attention);
        ck_assert_msg(fabs((two - one) - cases[i].expected) <= 1e-12 * cases[i].expected,
                      "case %zu: one layer keeps %.0f bytes, expected %.0f", i, two - one,
                      cases[i].expected);
    }
}
END_TEST

/* In a compute-bound setting (every operation at its FLOP rate, memory
 * and links free, a model of large GEMMs) full recomputation replays the
 * forward, t_f, before a backward of 2 t_f: compute x (1 + 1/3) = 4/3
 * (docs/model.md, "Strategies"), within 1 % (the head is not replayed). */
START_TEST(full_recompute_costs_a_third_more)
{
    double compute[2];
    for (int i = 0; i < 2; i++) {
        Run run = run_new(test_gpt(4, 4096, 32, 1024, 256), test_cluster(1, 1, 1e18, 1e18));
        run.cluster->gpu.memory_Bps = 1e18;
        run.cluster->gpu.compute_efficiency = 1;
        run.plan->recompute = i ? RECOMPUTE_FULL : RECOMPUTE_NONE;
        run.plan->attention = ATTENTION_STANDARD; /* t_b = 2 t_f: no fused backward's rest */
        run.plan->global_batch_size = 2;
        run_simulate(&run);
        compute[i] = run.rep.metrics.compute_s;
        if (i)
            ck_assert_rel(run.rep.metrics.recompute_s, compute[i] - compute[0], 1e-9);
        ck_assert(i == 0 || run.rep.metrics.hfu > run.rep.metrics.mfu);
        run_free(&run);
    }
    ck_assert_msg(fabs(compute[1] / compute[0] - 4.0 / 3) < 0.01 * 4.0 / 3, "ratio %.4f",
                  compute[1] / compute[0]);
}
END_TEST

/* Partial recomputation (docs/model.md, "Recomputation"): with
 * recompute_num_layers N of a chunk's L = 4 layers (pp 1: one chunk),
 * each of the first N layers keeps its input alone, 2sbh bytes at tp 1,
 * in place of Korthikanti's 34sbh plus FlashAttention's logsumexp 4asb,
 * and replays its forward; the others are as under "none". All layers
 * alike: the replays cost N/L of full recomputation's, and the peak (at
 * the last layer's backward, not replayed when N < L, so no replay is
 * live then) is none's less N (32sbh + 4asb), both micro-batches' kept
 * activations being released before the next's forward at pp 1. */
START_TEST(partial_recompute_is_n_layers_of_full)
{
    enum { LAYERS = 4 };
    double sbh = (double)S * B * H, saved = 32 * sbh + 4.0 * A * S * B;
    double none = peak_activations(LAYERS, 1, FALSE, RECOMPUTE_NONE, ATTENTION_FLASH);
    double replays[LAYERS + 1];
    for (int n = 0; n <= LAYERS; n++) { /* N = 0: none, N = L: full */
        Run run = run_new(test_gpt(LAYERS, H, A, V, S), test_cluster(1, 1, 300e9, 25e9));
        run.plan->recompute = n ? RECOMPUTE_FULL : RECOMPUTE_NONE;
        run.plan->recompute_num_layers = n < LAYERS ? n : 0;
        run.plan->micro_batch_size = B;
        run.plan->global_batch_size = 2 * B;
        run_simulate(&run);
        replays[n] = run.rep.metrics.recompute_s;
        if (n < LAYERS)
            ck_assert_rel(run.rep.metrics.peak_split[MEM_ACTIVATIONS], none - n * saved, 1e-12);
        run_free(&run);
    }
    ck_assert(replays[0] == 0 && replays[LAYERS] > 0);
    for (int n = 1; n < LAYERS; n++)
        ck_assert_rel(replays[n], replays[LAYERS] * n / LAYERS, 1e-12);
    /* N of at least the chunk's layers is every layer: full's twin */
    char *key[2];
    for (int i = 0; i < 2; i++) {
        Run run = run_new(test_gpt(LAYERS, H, A, V, S), test_cluster(1, 1, 300e9, 25e9));
        run.plan->recompute = RECOMPUTE_FULL;
        run.plan->recompute_num_layers = i ? LAYERS : 0;
        test_resolve(run.plan, run.model, run.cluster);
        key[i] = strategy_normal_form(run.plan, run.model);
        run_free(&run);
    }
    ck_assert_str_eq(key[0], key[1]);
    g_free(key[0]);
    g_free(key[1]);
}
END_TEST

/* ---- tensor-parallel communication --------------------------------------- */

/* Megatron-LM (docs/model.md, "Strategies"): per layer per micro-batch 2
 * all-reduces of b s h elements forward and 2 backward, 2 more when full
 * recomputation replays the forward. With sequence parallelism
 * (Korthikanti et al. 2022, section 4.2.2: g is an all-gather in forward
 * and a reduce-scatter in backward, g-bar the reverse) each block gathers
 * its input and scatters its output in forward, gathers its output's
 * gradient and scatters its input's in backward, and, as Megatron-LM keeps
 * only the sharded input of the QKV and FC1 GEMMs, gathers that input
 * again in backward for the weight gradient: forward 2 + 2, backward 4 + 2
 * per layer, 10 collectives of (t-1)/t S bytes each. Outside the layers the
 * vocabulary-parallel embedding sums in forward (its backward gathers with
 * sequence parallelism) and the output layer, column-parallel, sums in
 * backward (with sequence parallelism: gathers in forward and twice in
 * backward). A ring over t ranks sends 2 (t-1)/t S per all-reduce and
 * (t-1)/t S per all-gather or reduce-scatter, S = 2 b s h. With
 * tp_comm_overlap the same bytes move, in chunks. */
START_TEST(tp_collectives_per_layer)
{
    const int L = 3, m = 2;
    struct {
        gboolean sp, overlap;
        Recompute rc;
        int per_layer; /* sums (all-reduces, or reduce-scatters) per layer */
    } cases[] = {
        {FALSE, FALSE, RECOMPUTE_NONE, 4},
        {FALSE, FALSE, RECOMPUTE_FULL, 6},
        {TRUE, FALSE, RECOMPUTE_NONE, 4},
        {TRUE, TRUE, RECOMPUTE_NONE, 4},
    };
    double S_bytes = 2.0 * B * S * H;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        Run run = run_new(test_gpt(L, H, A, V, S), test_cluster(1, T, 300e9, 25e9));
        run.plan->tp = T;
        run.plan->collective_algorithm = ALGORITHM_RING; /* the formulas below are the ring's */
        run.plan->sequence_parallel = cases[i].sp;
        run.plan->tp_comm_overlap = cases[i].overlap;
        run.plan->recompute = cases[i].rc;
        run.plan->micro_batch_size = B;
        run.plan->global_batch_size = m * B;
        run_simulate(&run);
        const CommStat *c = run.rep.metrics.comm[TAG_TP];
        int sums = m * (cases[i].per_layer * L + 2);
        if (!cases[i].sp) {
            ck_assert_int_eq(c[COLL_ALL_REDUCE].count, sums);
            ck_assert_rel(c[COLL_ALL_REDUCE].bytes, sums * 2.0 * (T - 1) / T * S_bytes, 1e-12);
            ck_assert_int_eq(c[COLL_ALL_GATHER].count + c[COLL_REDUCE_SCATTER].count, 0);
        } else {
            ck_assert_int_eq(c[COLL_ALL_REDUCE].count, 0);
            if (!cases[i].overlap) {
                ck_assert_int_eq(c[COLL_REDUCE_SCATTER].count, sums);
                ck_assert_int_eq(c[COLL_ALL_GATHER].count, sums + m * (2 * L + 1));
            }
            ck_assert_rel(c[COLL_ALL_GATHER].bytes + c[COLL_REDUCE_SCATTER].bytes,
                          m * (10.0 * L + 5) * (T - 1) / T * S_bytes, 1e-12);
        }
        /* forward's wait; backward's overlap the column GEMMs' gradients */
        for (int op = 0; op < COLL_N_OPS; op++) {
            ck_assert(c[op].exposed_s <= c[op].time_s * (1 + 1e-12));
            ck_assert(c[op].count == 0 || c[op].exposed_s > 0);
        }
        run_free(&run);
    }
}
END_TEST

/* The async sum of a column-parallel GEMM's input gradient (Megatron-LM's
 * LinearWithGradAccumulationAndAsyncCommunication) beside its weight
 * gradient, two tasks: an all-reduce of m seconds beside a GEMM of w >= m
 * seconds, at comm_compute_interference x. The GEMM does (1 - x) m of its
 * work while the sum runs, the rest after: it ends at w + x m, and the
 * sum is hidden. One layer, one micro-batch, tp 2, no sequence
 * parallelism: three sums in forward wait (the embedding's, the two
 * blocks'), three in backward (QKV, MLP up, logits) hide under their
 * weight gradients; a ring of 2 over zero-latency links sends S in S / bw
 * seconds, and bw is set so that m is half the smallest of those GEMMs,
 * QKV's. So TP time is 6 m, 3 m exposed, and the step grows by 3 x m
 * from x = 0. */
START_TEST(tp_sum_hides_under_the_weight_gradient)
{
    const double x = 0.4;
    ModelSpec *probe = test_gpt(1, H, A, V, S);
    ClusterSpec *probe_c = test_cluster(1, 2, 300e9, 25e9);
    OpList ops;
    transformer_block_ops(probe, BLOCK_ATTENTION,
                          (Shard){.micro_batch = B, .tp = 2, .attention = ATTENTION_FLASH}, &ops);
    g_assert(strcmp(ops.ops[1].name, "qkv") == 0);
    OpList qkv = {.ops = {ops.ops[1]}, .n = 1};
    double m = 0.5 * transformer_ops_s(&probe_c->gpu, &qkv), S_bytes = 2.0 * B * S * H;
    model_spec_free(probe);
    cluster_spec_free(probe_c);
    double step[2];
    for (int k = 0; k < 2; k++) {
        Run run = run_new(test_gpt(1, H, A, V, S), test_cluster(1, 2, S_bytes / m, 25e9));
        run.cluster->gpu.comm_interference = k ? x : 0;
        run.plan->tp = 2;
        run.plan->collective_algorithm = ALGORITHM_RING;
        run.plan->micro_batch_size = B;
        run.plan->global_batch_size = B;
        run_simulate(&run);
        const CommStat *ar = &run.rep.metrics.comm[TAG_TP][COLL_ALL_REDUCE];
        ck_assert_int_eq(ar->count, 6);
        ck_assert_rel(ar->time_s, 6 * m, 1e-9);
        ck_assert_rel(ar->exposed_s, 3 * m, 1e-9);
        step[k] = run.rep.metrics.step_time_s;
        run_free(&run);
    }
    ck_assert_rel(step[1] - step[0], 3 * x * m, 1e-6);
}
END_TEST

/* tp_comm_overlap (Transformer Engine's userbuffers) hides collectives
 * under the GEMMs they feed: a step takes less than with Megatron-LM's
 * waits, and no less than with free communication (links a million times
 * faster, zero latency), with or without interference. */
START_TEST(tp_overlap_lies_between_free_and_waiting)
{
    double step[3]; /* waiting, overlapped, free */
    for (int k = 0; k < 3; k++) {
        Run run =
            run_new(test_gpt(2, H, A, V, S), test_cluster(1, T, k == 2 ? 300e15 : 300e9, 25e9));
        run.cluster->gpu.comm_interference = _i ? 0.3 : 0;
        run.plan->tp = T;
        run.plan->sequence_parallel = TRUE;
        run.plan->tp_comm_overlap = k == 1;
        run.plan->micro_batch_size = B;
        run.plan->global_batch_size = 2 * B;
        run_simulate(&run);
        step[k] = run.rep.metrics.step_time_s;
        run_free(&run);
    }
    ck_assert_msg(step[2] <= step[1] && step[1] < step[0], "free %g <= overlapped %g < waiting %g",
                  step[2], step[1], step[0]);
}
END_TEST

/* A TP group of 8 across two nodes of 4 (one NIC per GPU) runs its ring
 * all-reduces, like NCCL, in 4 channels that leave each node through 4
 * different NICs: the ring's bottleneck is 4 x 25 GB/s of InfiniBand
 * instead of NVLink's 300 GB/s, so they take 300/100 = 3 times as long
 * (zero latency: the ring formula is bandwidth only). */
START_TEST(tp_across_nodes_is_slower_by_the_bandwidth_ratio)
{
    double tp_time[2];
    for (int across = 0; across < 2; across++) {
        ClusterSpec *c = across ? test_cluster(2, 4, 300e9, 25e9) : test_cluster(1, 8, 300e9, 25e9);
        Run run = run_new(test_gpt(2, H, A, V, S), c);
        run.plan->tp = 8;
        run.plan->global_batch_size = 1;
        run.plan->collective_algorithm = ALGORITHM_RING;
        run_simulate(&run);
        tp_time[across] = run.rep.metrics.comm[TAG_TP][COLL_ALL_REDUCE].time_s;
        run_free(&run);
    }
    ck_assert_rel(tp_time[1] / tp_time[0], 300.0 / (4 * 25.0), 1e-12);
}
END_TEST

START_TEST(tp_must_divide_heads_and_ffn)
{
    ModelSpec *m = test_gpt(2, 96, 6, 100, 16); /* 6 heads, ffn 384 */
    m->kv_heads = 3;
    PlanSpec *plan = plan_spec_new();
    GError *error = NULL;
    plan->dp = 1; /* resolved as far as strategy_check reads: one micro-batch */
    plan->global_batch_size = 1;
    plan->tp = 4;
    ck_assert(!strategy_check(plan, m, &error));
    ck_assert_str_eq(error->message, "tp: expected a divisor of attention_heads = 6 (Megatron-Core "
                                     "splits the heads over the tensor-parallel group), got 4");
    g_clear_error(&error);
    plan->tp = 2; /* divides 6 heads, not 3 KV heads */
    ck_assert(!strategy_check(plan, m, &error));
    ck_assert_ptr_nonnull(strstr(error->message, "kv_heads = 3"));
    g_clear_error(&error);
    /* issue 33: a multiple of the KV heads too, as Megatron-Core's
     * divide(num_query_groups, tp) asserts: no KV head is replicated */
    plan->tp = 6;
    m->ffn_hidden_size = 384;
    ck_assert(!strategy_check(plan, m, &error));
    ck_assert_ptr_nonnull(strstr(error->message, "kv_heads = 3"));
    g_clear_error(&error);
    plan->tp = 3; /* divides the heads, the KV heads and the FFN */
    ck_assert(strategy_check(plan, m, NULL));
    plan->tp = 3;
    m->ffn_hidden_size = 100;
    ck_assert(!strategy_check(plan, m, &error));
    ck_assert_ptr_nonnull(strstr(error->message, "ffn_hidden_size = 100"));
    g_clear_error(&error);
    plan_spec_free(plan);
    model_spec_free(m);
}
END_TEST

Suite *suite_strategies(void)
{
    Suite *s = suite_create("strategies");
    TCase *tc = tcase_create("closed forms");
    tcase_add_loop_test(tc, zero_model_states_match_the_paper, 0, 8);
    tcase_add_test(tc, zero_communication_volume);
    tcase_add_test(tc, zero3_buffers_hold_at_most_two_segments);
    tcase_add_test(tc, layer_activations_match_korthikanti);
    tcase_add_test(tc, full_recompute_costs_a_third_more);
    tcase_add_test(tc, partial_recompute_is_n_layers_of_full);
    tcase_add_test(tc, tp_collectives_per_layer);
    tcase_add_test(tc, tp_sum_hides_under_the_weight_gradient);
    tcase_add_loop_test(tc, tp_overlap_lies_between_free_and_waiting, 0, 2);
    tcase_add_test(tc, tp_across_nodes_is_slower_by_the_bandwidth_ratio);
    tcase_add_test(tc, tp_must_divide_heads_and_ffn);
    suite_add_tcase(s, tc);
    return s;
}
