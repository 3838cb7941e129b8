/* check_simulate.c: a whole data-parallel step, replayed by the engine,
 * held to the closed forms of docs/model.md in the setting where
 * they are exact: zero link latency, zero kernel launch cost, and the
 * gradient reduction not overlapped with backward. */
#include <math.h>
#include <string.h>

#include "cost/transformer.h"
#include "layout/layout.h"
#include "net/collective.h"
#include "net/symmetry.h"
#include "net/topology.h"
#include "app/simulate.h"
#include "strategy/emit.h"
#include "strategy/estimate.h"
#include "strategy/strategy.h"
#include "testutil.h"

enum { L = 4, H = 256, A = 8, V = 1024, S = 128 };

/* dp ranks, one per node (so the group talks over InfiniBand at 25 GB/s)
 * or all on one node (NVLink at 300 GB/s). */
static void run_case(Run *c, int dp, gboolean one_node, int micro_batch, int global_batch,
                     gboolean overlap)
{
    *c = run_new(test_gpt(L, H, A, V, S),
                 one_node ? test_cluster(1, dp, 300e9, 25e9) : test_cluster(dp, 1, 300e9, 25e9));
    c->plan->micro_batch_size = micro_batch;
    c->plan->global_batch_size = global_batch;
    c->plan->overlap_grad_reduce = overlap;
    c->plan->ddp_bucket_size = 500000;           /* about two thirds of a layer: several buckets */
    c->plan->attention = ATTENTION_STANDARD;     /* t_b = 2 t_f and Korthikanti's activations */
    c->plan->grad_accum_dtype = GRAD_ACCUM_BF16; /* 2-byte gradients: 16 Psi, 2 Psi reduced */
    run_simulate(c);
}

/* Forward time of one micro-batch on one GPU: embedding, every layer's two
 * blocks, head; each the sum of its operations' roofline times. With
 * `backward`, the backward's: each operation's twice, the loss's less
 * (transformer_op_backward_s). */
static double pass_s(const ModelSpec *m, const GpuSpec *gpu, int b, gboolean backward)
{
    Shard sh = {.micro_batch = b, .tp = 1, .attention = ATTENTION_STANDARD};
    double (*sum)(const GpuSpec *, const OpList *) =
        backward ? transformer_ops_backward_s : transformer_ops_s;
    OpList ops;
    transformer_embedding_ops(m, sh, &ops);
    double t = sum(gpu, &ops);
    for (int blk = 0; blk < TRANSFORMER_BLOCKS; blk++) {
        transformer_block_ops(m, (Block)blk, sh, &ops);
        t += m->layers * sum(gpu, &ops);
    }
    transformer_head_ops(m, sh, &ops);
    return t + sum(gpu, &ops);
}

static double optimizer_s(const ModelSpec *m, const GpuSpec *gpu)
{
    OpList ops;
    transformer_optimizer_ops(transformer_params(m), OPTIMIZER_STATES_FP32, &ops);
    return transformer_ops_s(gpu, &ops);
}

/* Issue 2's regression: step = m (t_f + t_b) + t_allreduce + t_optimizer,
 * with t_b the backward (twice each operation but the loss) and t_allreduce = 2 (d - 1)/d x 2 Psi / beta (ring
 * all-reduce of bf16 gradients, docs/model.md). */
START_TEST(step_without_overlap_is_the_sum_of_its_parts)
{
    const int d = 4, b = 2, m = 3;
    Run c;
    run_case(&c, d, FALSE, b, b * m * d, FALSE);
    double psi = transformer_params(c.model);
    double tf = pass_s(c.model, &c.cluster->gpu, b, FALSE);
    double tb = pass_s(c.model, &c.cluster->gpu, b, TRUE);
    double t_ar = 2.0 * (d - 1) / d * 2 * psi / 25e9;
    double t_opt = optimizer_s(c.model, &c.cluster->gpu);
    ck_assert_int_eq(c.rep.micro_batches, m);
    ck_assert_rel(c.rep.metrics.step_time_s, m * (tf + tb) + t_ar + t_opt, 1e-12);
    ck_assert_rel(c.rep.metrics.exposed_comm_s, t_ar, 1e-9);
    ck_assert_rel(c.rep.metrics.compute_s, m * (tf + tb) + t_opt, 1e-12);
    ck_assert_double_eq(c.rep.metrics.bubble_fraction, 0); /* no pipeline */
    /* the d data-parallel ranks run alike: one is replayed for all */
    ck_assert_int_eq(c.rep.metrics.simulated_ranks, 1);
    ck_assert_str_eq(c.rep.metrics.symmetry, "dp");
    run_free(&c);
}
END_TEST

/* Inside one node the same reduction runs over NVLink. */
START_TEST(reduction_inside_a_node_uses_nvlink)
{
    const int d = 4, b = 1, m = 2;
    Run c;
    run_case(&c, d, TRUE, b, b * m * d, FALSE);
    double psi = transformer_params(c.model);
    ck_assert_rel(c.rep.metrics.exposed_comm_s, 2.0 * (d - 1) / d * 2 * psi / 300e9, 1e-9);
    run_free(&c);
}
END_TEST

/* Overlapped buckets hide part of the reduction behind backward: the step
 * is shorter than without overlap, and no shorter than its compute. */
START_TEST(overlap_hides_communication)
{
    const int d = 8, b = 1, m = 2;
    Run plain, overlapped;
    run_case(&plain, d, FALSE, b, b * m * d, FALSE);
    run_case(&overlapped, d, FALSE, b, b * m * d, TRUE);
    double compute = plain.rep.metrics.compute_s;
    ck_assert_rel(overlapped.rep.metrics.compute_s, compute, 1e-12);
    ck_assert(overlapped.rep.metrics.step_time_s < plain.rep.metrics.step_time_s);
    ck_assert(overlapped.rep.metrics.step_time_s >= compute);
    ck_assert(overlapped.rep.metrics.exposed_comm_s < plain.rep.metrics.exposed_comm_s);
    run_free(&plain);
    run_free(&overlapped);
}
END_TEST

/* Model states: (2 + 2 + 12) Psi = 16 Psi (ZeRO paper, section 3); the
 * activations at the peak are one micro-batch's: Korthikanti's
 * s b h (34 + 5 a s / h) per layer, plus the embedding's dropout mask (sbh)
 * and the head's 4 sbh + 4 s b V (docs/model.md, "Memory"). */
START_TEST(memory_peak_is_model_states_plus_one_micro_batch)
{
    const int d = 2, b = 2, m = 3;
    Run c;
    run_case(&c, d, FALSE, b, b * m * d, TRUE);
    const Metrics *mt = &c.rep.metrics;
    double psi = transformer_params(c.model);
    ck_assert_double_eq(mt->peak_split[MEM_PARAMS], 2 * psi);
    ck_assert_double_eq(mt->peak_split[MEM_GRADS], 2 * psi);
    ck_assert_double_eq(mt->peak_split[MEM_OPTIMIZER], 12 * psi);
    double sbh = (double)S * b * H;
    double acts = L * sbh * (34 + 5.0 * A * S / H) + sbh + 4 * sbh + 4.0 * S * b * V;
    ck_assert_rel(mt->peak_split[MEM_ACTIVATIONS], acts, 1e-12);
    ck_assert_rel(mt->peak_bytes, 16 * psi + acts, 1e-12);
    run_free(&c);
}
END_TEST

/* MFU = F / (step x GPUs x peak) with F Korthikanti's eq. 7. */
START_TEST(mfu_uses_korthikanti_flops)
{
    const int d = 2, b = 1, m = 2;
    Run c;
    run_case(&c, d, FALSE, b, b * m * d, TRUE);
    double B = b * m * d;
    double eq7 = 72.0 * B * S * L * H * H * (1 + S / (6.0 * H) + (double)V / (12.0 * L * H));
    ck_assert_rel(c.rep.metrics.model_flops, eq7, 1e-14);
    ck_assert_rel(c.rep.metrics.mfu, eq7 / (c.rep.metrics.step_time_s * d * 312e12), 1e-14);
    /* nothing is recomputed: the executed GEMM FLOPs are the model's */
    ck_assert_rel(c.rep.metrics.hfu, c.rep.metrics.mfu, 1e-12);
    run_free(&c);
}
END_TEST

START_TEST(same_input_same_result)
{
    Run a, b;
    run_case(&a, 4, FALSE, 2, 16, TRUE);
    run_case(&b, 4, FALSE, 2, 16, TRUE);
    ck_assert_double_eq(a.rep.metrics.step_time_s, b.rep.metrics.step_time_s);
    ck_assert_uint_eq(a.rep.metrics.events, b.rep.metrics.events);
    ck_assert_double_eq(a.rep.metrics.peak_bytes, b.rep.metrics.peak_bytes);
    run_free(&a);
    run_free(&b);
}
END_TEST

/* The cap on a step's size (emit_step's max_tasks). 2 ranks, 4
 * micro-batches each, L = 4 layers, one stage: the step has at least
 * 2 x (4 x (2 x 2 x 4 + 2) + 3) = 150 tasks (per rank and micro-batch a
 * forward and a backward of each layer's 2 blocks and the forward of the
 * embedding and the head; per rank 2 markers and the optimizer step:
 * emit_check_size). Built under a cap of exactly its size; refused after
 * counting it under one task less (emit_count_tasks), and at once under
 * 149. */
START_TEST(a_step_over_the_cap_is_refused)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 2, 300e9, 25e9));
    c.plan->micro_batch_size = 1;
    c.plan->global_batch_size = 8;
    test_resolve(c.plan, c.model, c.cluster);
    g_autoptr(Layout) layout = layout_new(c.plan, c.cluster);
    Topology *topo = topology_new(c.cluster, 1);
    g_autoptr(Symmetry) sym = symmetry_new(layout, topo, 0); /* every rank */
    GError *error = NULL;
    Step step = step_of(c.model, c.cluster, c.plan);
    Graph *g = emit_step(&step, layout, sym, NULL, NULL, EMIT_MAX_TASKS, 0, &error);
    ck_assert_ptr_nonnull(g);
    gsize n = graph_tasks(g);
    ck_assert_uint_gt(n, 150);
    graph_free(g);
    g = emit_step(&step, layout, sym, NULL, NULL, n, 0, &error);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(graph_tasks(g), n);
    graph_free(g);
    ck_assert_ptr_null(emit_step(&step, layout, sym, NULL, NULL, n - 1, 0, &error));
    g_autofree char *more = g_strdup_printf("at most %zu tasks, got more (2 ranks", n - 1);
    ck_assert_msg(strstr(error->message, more), "%s", error->message);
    g_clear_error(&error);
    ck_assert_ptr_null(emit_step(&step, layout, sym, NULL, NULL, 149, 0, &error));
    ck_assert_msg(strstr(error->message, "at most 149 tasks, got at least 150 (2 ranks"), "%s",
                  error->message);
    g_clear_error(&error);
    topology_free(topo);
    run_free(&c);
}
END_TEST

/* emit_tasks_under sizes a step from its build under a bigger symmetry:
 * tp 2 x dp 4 on four 2-GPU nodes, built one rank per orbit of the tp and
 * dp shifts (1 rank), then for every rank. Each rank runs the same own
 * tasks (8 of them stand for the orbit's 8), and each collective of the
 * reduced build stands for its group's images: a tp group's 4 images (the
 * dp shift moves it) are 4 groups of the full build, the dp group's 2
 * images 2. So the bound is the full build's size exactly here, and any
 * cap under it refuses the step before it is built ("at least"). */
START_TEST(a_step_is_sized_by_its_reduced_build)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(4, 2, 300e9, 25e9));
    c.plan->tp = 2;
    c.plan->micro_batch_size = 1;
    c.plan->global_batch_size = 8;
    test_resolve(c.plan, c.model, c.cluster);
    g_autoptr(Layout) layout = layout_new(c.plan, c.cluster);
    Topology *topo = topology_new(c.cluster, 4);
    g_autoptr(Symmetry) shifts =
        symmetry_new(layout, topo, SYMMETRY_SHIFT(GROUP_TP) | SYMMETRY_SHIFT(GROUP_DP));
    g_autoptr(Symmetry) none = symmetry_new(layout, topo, 0);
    ck_assert_int_eq(symmetry_orbit(shifts), 8);
    Step step = step_of(c.model, c.cluster, c.plan);
    g_autoptr(Graph) reduced =
        emit_step(&step, layout, shifts, NULL, NULL, EMIT_MAX_TASKS, 0, NULL);
    g_autoptr(Graph) full = emit_step(&step, layout, none, NULL, NULL, EMIT_MAX_TASKS, 0, NULL);
    ck_assert_uint_eq(graph_rank_tasks(full), 8 * graph_rank_tasks(reduced));
    double bound = emit_tasks_under(reduced, shifts, none);
    ck_assert_double_eq(bound, (double)graph_tasks(full));
    GError *error = NULL;
    gsize under = graph_tasks(full) - 1;
    ck_assert_ptr_null(emit_step(&step, layout, none, NULL, NULL, under, bound, &error));
    g_autofree char *refused = g_strdup_printf("at most %zu tasks, got at least", under);
    ck_assert_msg(strstr(error->message, refused), "%s", error->message);
    g_clear_error(&error);
    topology_free(topo);
    run_free(&c);
}
END_TEST

/* strategy_check refuses a plan whose step cannot fit the cap whatever
 * the ranks simulated: 2^31 - 1 micro-batches of one sequence through L = 4
 * layers is at least 2 x 4 x (2^31 - 1) tasks, before any estimate walks
 * the micro-batches. */
START_TEST(too_many_micro_batches_are_invalid)
{
    Run c = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 1, 300e9, 25e9));
    c.plan->micro_batch_size = 1;
    c.plan->global_batch_size = G_MAXINT;
    test_resolve(c.plan, c.model, c.cluster);
    GError *error = NULL;
    ck_assert(!strategy_check(c.plan, c.model, &error));
    ck_assert_msg(strstr(error->message, "expected a step of at most 50000000 tasks, got at least"),
                  "%s", error->message);
    g_clear_error(&error);
    run_free(&c);
}
END_TEST

/* Chunks that hold only the embedding or the head (Megatron-Core's
 * embedding and loss counted as layers: 10 + 2 layers over 4 stages x 3
 * chunks, one each, the first and the last chunk none; by hand): the same
 * step as the same split given as a list, the same by full and by
 * reduced replay, and the bounds below it. Stage 0 holds 2 layers and
 * the embedding, stage 3 2 layers and the head. */
START_TEST(chunks_of_the_embedding_or_the_head_alone)
{
    double step[3];
    for (int k = 0; k < 3; k++) {
        Run run = run_new(test_gpt(10, 64, 4, 100, 16), test_cluster(2, 4, 1e11, 1e10));
        PlanSpec *p = run.plan;
        p->tp = 2;
        p->pp = 4;
        p->virtual_stages = 3;
        p->schedule = SCHEDULE_INTERLEAVED;
        p->global_batch_size = 8;
        if (k == 1) {
            static const int split[] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
            p->layers_per_stage.n = G_N_ELEMENTS(split);
            p->layers_per_stage.v = g_memdup2(split, sizeof split);
        } else {
            p->account_for_embedding_in_pipeline_split = TRUE;
            p->account_for_loss_in_pipeline_split = TRUE;
        }
        p->full_fidelity = k == 2;
        run_simulate(&run);
        const Metrics *mt = &run.rep.metrics;
        step[k] = mt->step_time_s;
        ck_assert_int_eq(mt->stages[0].layers, 2);
        ck_assert_int_eq(mt->stages[3].layers, 2);
        Step s = step_of(run.model, run.cluster, run.plan);
        ck_assert(estimate_step_lower_bound_s(&s) <= mt->step_time_s);
        ck_assert(estimate_peak_lower_bound_bytes(&s) <= mt->peak_bytes);
        run_free(&run);
    }
    ck_assert_double_eq(step[0], step[1]);
    ck_assert_rel(step[0], step[2], 1e-12);
}
END_TEST

Suite *suite_simulate(void)
{
    Suite *s = suite_create("simulate");
    TCase *tc = tcase_create("data parallel");
    tcase_add_test(tc, step_without_overlap_is_the_sum_of_its_parts);
    tcase_add_test(tc, reduction_inside_a_node_uses_nvlink);
    tcase_add_test(tc, overlap_hides_communication);
    tcase_add_test(tc, memory_peak_is_model_states_plus_one_micro_batch);
    tcase_add_test(tc, mfu_uses_korthikanti_flops);
    tcase_add_test(tc, same_input_same_result);
    tcase_add_test(tc, a_step_over_the_cap_is_refused);
    tcase_add_test(tc, a_step_is_sized_by_its_reduced_build);
    tcase_add_test(tc, too_many_micro_batches_are_invalid);
    tcase_add_test(tc, chunks_of_the_embedding_or_the_head_alone);
    suite_add_tcase(s, tc);
    return s;
}
