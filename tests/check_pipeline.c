/* check_pipeline.c: pipeline schedules replayed and held to the closed
 * forms of docs/model.md, "Pipeline schedules" (Huang et al., GPipe;
 * Narayanan et al., SC'21; Korthikanti et al. 2022).
 *
 * The setting where the bubble formulas hold: communication free (links of
 * 1e18 B/s, no latency), memory-bound operations free (HBM at 1e18 B/s,
 * no launch cost), GEMMs at full peak, one GPU per stage, and stages alike:
 * the embedding costs nothing (it moves memory only) and the head's logits
 * GEMM is 2 b s h V FLOPs with V = 1, against 24 b s h^2 per layer: with
 * h = 65536 and 8 layers a stage, the last stage is 1.6e-7 heavier than the
 * others, which bounds how far the replay may be from the formulas. */
#include <math.h>
#include <string.h>

#include "cost/transformer.h"
#include "strategy/estimate.h"
#include "strategy/schedule.h"
#include "app/simulate.h"
#include "testutil.h"

#define UNIFORM 1e-6 /* tolerance of the formulas here (see above) */

/* A fraction of the step within UNIFORM of the formula's (absolute: the
 * last stage's extra time is a fraction of the whole phase). */
#define ck_assert_fraction(a, b)                                                                   \
    ck_assert_msg(fabs((a) - (b)) <= UNIFORM, "%s = %.12f, expected %.12f", #a, (a), (b))

enum { K = 8, H = 65536, A = 512, S = 16 }; /* layers per chunk, model dims */

/* A pipeline of p stages (one GPU each) over p v chunks of `k` layers. */
static Run pipeline(int p, int m, int v, Schedule schedule, int k, int hidden, int heads, int vocab)
{
    Run run = run_new(test_gpt(p * v * k, hidden, heads, vocab, S), test_cluster(1, p, 1e18, 1e18));
    run.cluster->gpu.memory_Bps = 1e18;
    run.cluster->gpu.compute_efficiency = 1;
    run.plan->pp = p;
    run.plan->virtual_stages = v;
    run.plan->schedule = schedule;
    run.plan->global_batch_size = m;
    run.plan->attention = ATTENTION_STANDARD; /* t_b = 2 t_f: no fused backward's rest */
    run_simulate(&run);
    return run;
}

/* Forward time of one micro-batch through `layers` layers. */
static double forward_s(const Run *run, int layers)
{
    OpList ops;
    double t = 0;
    for (int b = 0; b < TRANSFORMER_BLOCKS; b++) {
        transformer_block_ops(run->model, (Block)b,
                              (Shard){.micro_batch = 1, .tp = 1, .attention = ATTENTION_STANDARD},
                              &ops);
        t += transformer_ops_s(&run->cluster->gpu, &ops);
    }
    return layers * t;
}

/* The optimizer step of stage s, after the pipeline has flushed (it is
 * compute-bound here, 12 FLOPs per parameter). */
static double optimizer_s(const Run *run, int s, int layers)
{
    const ModelSpec *m = run->model;
    double params =
        layers * transformer_layer_params(m, 1) + (s == 0 ? transformer_embedding_params(m, 1) : 0);
    OpList ops;
    transformer_optimizer_ops(params, OPTIMIZER_STATES_FP32, &ops);
    return transformer_ops_s(&run->cluster->gpu, &ops);
}

/* GPipe and 1F1B: the pipeline flushes after (m + p - 1)(t_f + t_b), then
 * the first stage (the last to finish) steps its optimizer; each stage is
 * idle (p - 1)/(m + p - 1) of the flush; t_b = 2 t_f for GEMMs. */
START_TEST(gpipe_and_1f1b_bubble)
{
    static const int cases[][2] = {{2, 1}, {2, 4}, {4, 4}, {4, 9}, {8, 3}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        for (int sched = 0; sched < 2; sched++) {
            int p = cases[i][0], m = cases[i][1];
            Run run = pipeline(p, m, 1, sched ? SCHEDULE_1F1B : SCHEDULE_GPIPE, K, H, A, 1);
            double tf = forward_s(&run, K);
            ck_assert_rel(run.rep.metrics.step_time_s,
                          (m + p - 1) * 3 * tf + optimizer_s(&run, 0, K), UNIFORM);
            ck_assert_fraction(run.rep.metrics.bubble_fraction, (p - 1.0) / (m + p - 1));
            run_free(&run);
        }
    }
}
END_TEST

/* Interleaved 1F1B with v chunks per stage: idle (p - 1)/(v m + p - 1),
 * step (v m + p - 1)(t_f + t_b)/v (Narayanan et al., section 2.2). */
START_TEST(interleaved_bubble)
{
    static const int cases[][3] = {{2, 2, 2}, {2, 4, 3}, {4, 4, 2}, {4, 8, 2}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int p = cases[i][0], m = cases[i][1], v = cases[i][2];
        int stage_layers = v * (K / v); /* v chunks of K / v layers */
        Run run = pipeline(p, m, v, SCHEDULE_INTERLEAVED, K / v, H, A, 1);
        double transformer_stage = forward_s(&run, stage_layers);
        ck_assert_rel(run.rep.metrics.step_time_s,
                      (v * m + p - 1) * 3 * transformer_stage / v +
                          optimizer_s(&run, 0, stage_layers),
                      UNIFORM);
        ck_assert_fraction(run.rep.metrics.bubble_fraction, (p - 1.0) / (v * m + p - 1));
        run_free(&run);
    }
}
END_TEST

/* A layer's forward split as a zero-bubble schedule splits its backward
 * (schedule_zbh1.c, tensor_parallel.c): T_W, the weight gradients, is
 * once the forward of the weighted GEMMs (qkv, out_proj, mlp_up,
 * mlp_down: the operations with a shape); T_B, the input gradients, is
 * the rest of twice the forward. */
static void split_s(const Run *run, int layers, double *tf, double *tb, double *tw)
{
    OpList ops;
    *tf = forward_s(run, layers);
    *tw = 0;
    for (int b = 0; b < TRANSFORMER_BLOCKS; b++) {
        transformer_block_ops(run->model, (Block)b,
                              (Shard){.micro_batch = 1, .tp = 1, .attention = ATTENTION_STANDARD},
                              &ops);
        for (int i = 0; i < ops.n; i++) {
            OpList one = {.ops = {ops.ops[i]}, .n = 1};
            *tw += ops.ops[i].batch > 0 ? layers * transformer_ops_s(&run->cluster->gpu, &one) : 0;
        }
    }
    *tb = 2 * *tf - *tw;
}

/* A zero-bubble pipeline of p stages of K layers, and its T_F, T_B, T_W. */
static Run zero_bubble(int p, int m, Schedule schedule, double *tf, double *tb, double *tw)
{
    Run run = pipeline(p, m, 1, schedule, K, H, A, 1);
    split_s(&run, K, tf, tb, tw);
    return run;
}

/* ZB-H1 (Qi et al., ICLR 2024, section 2.1): the first stage, the last to
 * finish, idles (p - 1)(T_F + T_B - T_W) where 1F1B idles
 * (p - 1)(T_F + T_B + T_W): step m (T_F + T_B + T_W) + that + its
 * optimizer. Here the attention core's GEMMs (no weights: all B) make
 * T_B - T_W = 2 x their forward. */
START_TEST(zbh1_bubble)
{
    static const int cases[][2] = {{2, 2}, {2, 5}, {4, 4}, {4, 9}, {8, 8}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int p = cases[i][0], m = cases[i][1];
        double tf, tb, tw;
        Run run = zero_bubble(p, m, SCHEDULE_ZBH1, &tf, &tb, &tw);
        ck_assert_rel(run.rep.metrics.step_time_s,
                      m * (tf + tb + tw) + (p - 1) * (tf + tb - tw) + optimizer_s(&run, 0, K),
                      UNIFORM);
        run_free(&run);
    }
}
END_TEST

/* ZB-H2 (Qi et al., section 2.2) with m >= 2p - 1: stage s works without a
 * gap from s T_F to s T_F + m (T_F + T_B + T_W) when the three are equal
 * (schedule_zbh2.c); the step ends with the last stage's, plus its
 * optimizer (whose stage holds no embedding: the first's would be the
 * same here but for the embedding's d = 65536 parameters). With T_B
 * slightly above T_W (here by 2 x the attention core, 4e-5 of T_F) a stage
 * may idle up to (p - 1)(T_B - T_W) more: the bound. */
START_TEST(zbh2_bubble)
{
    static const int cases[][2] = {{2, 3}, {2, 6}, {4, 7}, {4, 12}, {8, 15}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int p = cases[i][0], m = cases[i][1];
        double tf, tb, tw;
        Run run = zero_bubble(p, m, SCHEDULE_ZBH2, &tf, &tb, &tw);
        double ideal = (p - 1) * tf + m * (tf + tb + tw) + optimizer_s(&run, p - 1, K);
        double step = run.rep.metrics.step_time_s;
        ck_assert_msg(step >= ideal * (1 - UNIFORM) && step <= ideal + (p - 1) * (tb - tw),
                      "p %d m %d: step %.9g, ideal %.9g", p, m, step, ideal);
        run_free(&run);
    }
}
END_TEST

/* Without micro-batching overlap each stage is busy 1/p of the
 * pipeline's time (the optimizer steps aside). */
START_TEST(naive_keeps_each_stage_busy_one_pth)
{
    for (int p = 2; p <= 8; p *= 2) {
        Run run = pipeline(p, 3, 1, SCHEDULE_NAIVE, K, H, A, 1);
        double flush = run.rep.metrics.step_time_s - optimizer_s(&run, 0, K);
        for (int s = 0; s < p; s++)
            ck_assert_fraction((run.rep.metrics.stages[s].busy_s - optimizer_s(&run, s, K)) / flush,
                               1.0 / p);
        run_free(&run);
    }
}
END_TEST

/* DualPipeV (schedule_dualpipev.c, after DeepSeek's dualpipev.py) with
 * chunks alike: T_F a chunk's forward, T_B its input gradients and T_W
 * its weight gradients (T_B + T_W = 2 T_F; here T_W is just under T_F, as
 * the attention core's GEMMs have no weights). Stage s works 2 m (T_F +
 * T_B + T_W) and idles (p - 1) T_F + (p - 1 - s)(T_B - T_W), so stage 0,
 * which also holds the embedding, finishes last: step 2 m (T_F + T_B +
 * T_W) + (p - 1)(T_F + T_B - T_W) + its optimizer, ZB-H1's bubble. By
 * hand for p = 2, m = 4, T_F = T_B = T_W = 1 (a whole backward 2), the
 * units' ends (stage 0 | stage 1; F2.0: micro-batch 2, chunk 0): F0.0 1,
 * F1.0 2, F2.0 3 | F0.0 2, F0.1 3 | F0.1 4 | F1.0 4, F1.1 5 | b0.1 5, W 6,
 * F1.1 7 | F2.0 6, B0.1 8 | F3.0 8, B1.1 10 | F2.1 9, B0.0 11 | F2.1 11,
 * B0.0 13 | F3.0 12, B1.1 14 | B2.1 15, F3.1 16 | F3.1 15, B1.0 17 |
 * B1.0 19 | B2.1 19, B2.0 21 | B3.1 21, b2.0 22, W 23 | b3.1 22, b3.0 23,
 * W 24, W 25 | b3.0 24, W 25: both end at 25 = 2 x 4 x 3 + 1; with T_W =
 * T_F - e (T_B = T_F + e) each stage ends 2 (p - 1 - s) e later (worked
 * the same way for p = 2, 3, 4 and 8). */
START_TEST(dualpipev_bubble)
{
    static const int cases[][2] = {{2, 4}, {2, 7}, {3, 6}, {4, 8}, {4, 13}, {8, 16}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int p = cases[i][0], m = cases[i][1];
        Run run = pipeline(p, m, 2, SCHEDULE_DUALPIPEV, K, H, A, 1);
        double tf, tb, tw;
        split_s(&run, K, &tf, &tb, &tw);
        ck_assert_rel(run.rep.metrics.step_time_s,
                      2 * m * (tf + tb + tw) + (p - 1) * (tf + tb - tw) +
                          optimizer_s(&run, 0, 2 * K),
                      UNIFORM);
        run_free(&run);
    }
}
END_TEST

/* ---- memory in flight ---------------------------------------------------- */

enum { MH = 256, MA = 8, MV = 1024 }; /* a small model: memory only */

/* One micro-batch's activations in one layer. */
static double layer_bytes(const Run *run)
{
    Shard sh = {.micro_batch = 1, .tp = 1, .attention = ATTENTION_STANDARD};
    return transformer_block_activation_bytes(run->model, BLOCK_ATTENTION, sh, RECOMPUTE_NONE) +
           transformer_block_activation_bytes(run->model, BLOCK_MLP, sh, RECOMPUTE_NONE);
}

/* One micro-batch's activations on stage s of p: its layers, plus the
 * embedding's on the first stage and the head's on the last. */
static double stage_bytes(const Run *run, int s, int p, int layers)
{
    Shard sh = {.micro_batch = 1, .tp = 1, .attention = ATTENTION_STANDARD};
    return layers * layer_bytes(run) +
           (s == 0 ? transformer_embedding_activation_bytes(run->model, sh) : 0) +
           (s == p - 1 ? transformer_head_activation_bytes(run->model, sh) : 0);
}

/* GPipe holds all m micro-batches on every stage; 1F1B min(p - i, m) on
 * stage i (docs/model.md, "Pipeline schedules"). */
START_TEST(in_flight_micro_batches)
{
    const int p = 4;
    for (int m = 2; m <= 6; m += 4) {
        for (int sched = 0; sched < 2; sched++) {
            Run run = pipeline(p, m, 1, sched ? SCHEDULE_1F1B : SCHEDULE_GPIPE, 2, MH, MA, MV);
            for (int s = 0; s < p; s++) {
                int in_flight = sched ? MIN(p - s, m) : m;
                ck_assert_rel(run.rep.metrics.stages[s].peak_split[MEM_ACTIVATIONS],
                              in_flight * stage_bytes(&run, s, p, 2), 1e-12);
            }
            run_free(&run);
        }
    }
}
END_TEST

/* Zero-bubble schedules hold a micro-batch's activations from its forward
 * to the end of its W. ZB-H1 delays stage s's W's by s B's after 1F1B's
 * p - s - 1 warm-up forwards: min(p, m) in flight on every stage; ZB-H2
 * allows 2p - 1 (Qi et al., sections 2.1 and 2.2), and its greedy order
 * reaches it on every stage once m >= 2p - 1 (schedule_zbh2.c). */
START_TEST(zero_bubble_in_flight)
{
    const int p = 4;
    static const int cases[][2] = {
        {SCHEDULE_ZBH1, 2}, {SCHEDULE_ZBH1, 6}, {SCHEDULE_ZBH2, 7}, {SCHEDULE_ZBH2, 10}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int m = cases[i][1];
        Run run = pipeline(p, m, 1, (Schedule)cases[i][0], 2, MH, MA, MV);
        int in_flight = MIN(cases[i][0] == SCHEDULE_ZBH1 ? p : 2 * p - 1, m);
        for (int s = 0; s < p; s++)
            ck_assert_rel(run.rep.metrics.stages[s].peak_split[MEM_ACTIVATIONS],
                          in_flight * stage_bytes(&run, s, p, 2), 1e-12);
        run_free(&run);
    }
}
END_TEST

/* DualPipeV holds PP + 1 chunk-micro-batches a stage, PP = 2p model
 * chunks (the DualPipe repository's table): at its peak stage s holds
 * 2p - s of chunk 0 and s + 1 of chunk 1 (by hand from the order,
 * schedule_dualpipev.c). The stages after the first, which hold neither
 * the embedding nor the head. */
START_TEST(dualpipev_in_flight)
{
    static const int cases[][2] = {{2, 4}, {4, 8}, {4, 11}, {3, 9}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int p = cases[i][0], m = cases[i][1];
        Run run = pipeline(p, m, 2, SCHEDULE_DUALPIPEV, 2, MH, MA, MV);
        for (int s = 1; s < p; s++)
            ck_assert_rel(run.rep.metrics.stages[s].peak_split[MEM_ACTIVATIONS],
                          (2 * p + 1) * 2 * layer_bytes(&run), 1e-12);
        run_free(&run);
    }
}
END_TEST

/* The most a stage holds, from its schedule's peaks (schedule_stage_held,
 * schedule_peaks), equals the walk of its units it stands for: every unit
 * in order, a forward adding its chunk's amount, a backward's end taking it
 * away, the most after any unit. Every schedule, m from 1 to 12 where the
 * schedule allows it, p 1, 2, 3 and 4, v 1 to 3 (interleaved), every
 * stage, with random amounts per chunk. */
START_TEST(stage_peaks_equal_the_walk)
{
    GRand *rng = g_rand_new_with_seed(7);
    int compared = 0;
    for (int sched = 0; sched < SCHEDULES; sched++) {
        for (int p = 1; p <= 4; p++) {
            for (int v = 1; v <= 3; v++) {
                for (int m = 1; m <= 12; m++) {
                    PlanSpec *plan = plan_spec_new();
                    plan->schedule = (Schedule)sched;
                    plan->pp = p;
                    plan->virtual_stages = v;
                    plan->dp = 1;
                    plan->micro_batch_size = 1;
                    plan->global_batch_size = m;
                    if (!pipeline_schedules[sched]->check(plan, NULL)) {
                        plan_spec_free(plan);
                        continue;
                    }
                    for (int s = 0; s < p; s++) {
                        double amount[3], walked = 0, held = 0;
                        for (int k = 0; k < v; k++)
                            amount[k] = g_rand_double_range(rng, 0, 1e9);
                        StageWork w = schedule_stage_work(plan, m, s);
                        const GArray *units = schedule_units((Schedule)sched, &w);
                        for (guint i = 0; i < units->len; i++) {
                            const Unit *u = &g_array_index(units, Unit, i);
                            held += u->forward                   ? amount[u->chunk]
                                    : unit_ends_backward(u) ? -amount[u->chunk]
                                                                 : 0;
                            walked = MAX(walked, held);
                        }
                        ck_assert_rel(schedule_stage_held(plan, s, amount), walked, 1e-12);
                        compared++;
                    }
                    plan_spec_free(plan);
                }
            }
        }
    }
    ck_assert_int_gt(compared, 500);
    g_rand_free(rng);
}
END_TEST

/* Interleaving: the first stage keeps Korthikanti's factor
 * 1 + (p - 1)/(p v) times the activations of all L layers (section 4.2.3):
 * its warm-up of 2(p - 1) + (v - 1)p forwards and one more hold p v + p - 1
 * chunk-micro-batches. The first chunk also keeps the embedding's mask: with
 * p = 4, v = 2 the forwards run chunks 0,0,0,0,1,1,1,1,0,0,0 | 0,... and
 * the first backward frees a chunk-1 micro-batch, so at the twelfth
 * forward 8 = 2p of the 11 in flight are in chunk 0 (by hand from
 * Megatron-LM's order, pipeline.c). */
START_TEST(interleaved_first_stage_memory)
{
    const int p = 4, v = 2, m = 8, k = 2, L = p * v * k;
    Run run = pipeline(p, m, v, SCHEDULE_INTERLEAVED, k, MH, MA, MV);
    Shard sh = {.micro_batch = 1, .tp = 1, .attention = ATTENTION_STANDARD};
    double layer =
        transformer_block_activation_bytes(run.model, BLOCK_ATTENTION, sh, RECOMPUTE_NONE) +
        transformer_block_activation_bytes(run.model, BLOCK_MLP, sh, RECOMPUTE_NONE);
    double expected = (1 + (p - 1.0) / (p * v)) * L * layer +
                      2 * p * transformer_embedding_activation_bytes(run.model, sh);
    ck_assert_rel(run.rep.metrics.stages[0].peak_split[MEM_ACTIVATIONS], expected, 1e-12);
    run_free(&run);
}
END_TEST

/* A stage's units as text, "F0.0 B1.1 ...": F, B (whole), b (input
 * gradients) or W (weight gradients), micro-batch.chunk. */
static char *units_text(const PlanSpec *plan, int m, int s)
{
    StageWork w = schedule_stage_work(plan, m, s);
    const GArray *units = schedule_units(plan->schedule, &w);
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < units->len; i++) {
        const Unit *u = &g_array_index(units, Unit, i);
        char kind = u->forward                    ? 'F'
                    : u->part == BACKWARD_WHOLE   ? 'B'
                    : u->part == BACKWARD_INPUT   ? 'b'
                                                  : 'W';
        g_string_append_printf(text, "%s%c%d.%d", i ? " " : "", kind, u->micro_batch, u->chunk);
    }
    return g_string_free(text, FALSE);
}

/* `schedule` refuses `plan` with an error saying `message`. */
static void refuses(const PipeSchedule *schedule, const PlanSpec *plan, const char *message)
{
    GError *error = NULL;
    ck_assert(!schedule->check(plan, &error));
    ck_assert_msg(strstr(error->message, message), "%s", error->message);
    g_error_free(error);
}

/* The llama3 schedule by hand, from Megatron-Core's rules
 * (model_parallel_config.py's example of microbatch_group_size_per_vp_stage
 * N = 3 with p = 2, v = 2, m = 5: forwards 0 1 2 0 1 2 3 4 3 4, chunk 0 then
 * chunk 1 in each round; get_pp_rank_microbatches' warm-up (p - s - 1) 2 +
 * (v - 1) N): stage 1 warms up with 3 forwards, then runs the k-th forward
 * and backward in turn, backwards in the forwards' order with the chunk
 * reversed. With N = p and m a multiple of p it is Megatron-LM's
 * interleaved order, unit by unit, on every stage (m > p: for m = p
 * interleaved warms up with every forward, as Megatron-LM once did). At its
 * peak stage 0 holds its warm-up and one more: 2 (p - 1) + (v - 1) N + 1
 * chunk-micro-batches. Megatron-Core's refusals: N below p, above m, and a
 * last round of fewer than p. */
START_TEST(llama3_schedule)
{
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->schedule = SCHEDULE_LLAMA3;
    plan->pp = 2;
    plan->virtual_stages = 2;
    plan->microbatch_group_size_per_vp_stage = 3;
    g_autofree char *stage1 = units_text(plan, 5, 1);
    ck_assert_str_eq(stage1, "F0.0 F1.0 F2.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.0 B0.0 F4.0 B1.0 "
                             "F3.1 B2.0 F4.1 B3.1 B4.1 B3.0 B4.0");
    g_autofree char *stage0 = units_text(plan, 5, 0);
    ck_assert_str_eq(stage0, "F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 B0.1 F3.0 B1.1 F4.0 B2.1 F3.1 B0.0 "
                             "F4.1 B1.0 B2.0 B3.1 B4.1 B3.0 B4.0");
    for (int p = 2; p <= 4; p++)
        for (int v = 2; v <= 3; v++)
            for (int m = 2 * p; m <= 3 * p; m += p)
                for (int s = 0; s < p; s++) {
                    g_autoptr(PlanSpec) a = plan_spec_new(), b = plan_spec_new();
                    a->pp = b->pp = p;
                    a->virtual_stages = b->virtual_stages = v;
                    a->schedule = SCHEDULE_LLAMA3;
                    b->schedule = SCHEDULE_INTERLEAVED;
                    g_autofree char *llama3 = units_text(a, m, s);
                    g_autofree char *interleaved = units_text(b, m, s);
                    ck_assert_str_eq(llama3, interleaved);
                }
    const int p = 4, v = 3, n = 6, m = 12;
    plan->pp = p;
    plan->virtual_stages = v;
    plan->microbatch_group_size_per_vp_stage = n;
    double one[3] = {1, 1, 1};
    plan->dp = 1;
    plan->global_batch_size = m;
    ck_assert_double_eq(schedule_stage_held(plan, 0, one), 2 * (p - 1) + (v - 1) * n + 1);
    static const struct {
        int n, m;
        const char *message;
    } refused[] = {
        {3, 8,
         "expected contiguous micro-batches a model chunk runs from pp = 4 to the "
         "micro-batches per step, 8"},
        {9, 8, "from pp = 4 to the micro-batches per step, 8"},
        {5, 8, "a last round of 0 or at least pp = 4 of the 8 micro-batches"},
    };
    for (gsize k = 0; k < G_N_ELEMENTS(refused); k++) {
        plan->microbatch_group_size_per_vp_stage = refused[k].n;
        plan->global_batch_size = refused[k].m;
        refuses(&schedule_llama3, plan, refused[k].message);
    }
}
END_TEST

/* DualPipeV's order by hand for p = 2, m = 4, from dualpipev.py's step()
 * (schedule_dualpipev.c's eight phases): stage 0 runs 2 forwards of
 * chunk 0; one round of F chunk 0, F chunk 1; one of b chunk 1, W, F
 * chunk 1; one of F0 with B1 and F1 with B0; one of B1, F1 with B0; one of
 * B1 whole, b0 (its W deferred from the middle round on: s = 0 is even,
 * so after chunk 1's); one of W, b0; one W. Stage 1, the last: no
 * warm-up, two rounds of F0 F1, none of phase 3, two of phase 4 (the
 * first F0 and B1 apart), none of 5, two of B1 B0 (split from the second,
 * s = 1 odd: both), none of 7, two W's. The W's in their B's order. Its
 * refusals: pp 1, other than 2 chunks a stage, fewer than 2 pp
 * micro-batches, a first or last stage's own layer count. */
START_TEST(dualpipev_schedule)
{
    g_autoptr(PlanSpec) plan = plan_spec_new();
    plan->schedule = SCHEDULE_DUALPIPEV;
    plan->pp = 2;
    plan->virtual_stages = 2;
    plan->dp = 1;
    plan->micro_batch_size = 1;
    plan->global_batch_size = 4;
    ck_assert(schedule_dualpipev.check(plan, NULL));
    static const char *const expected[2] = {
        "F0.0 F1.0 F2.0 F0.1 b0.1 W0.1 F1.1 F3.0 B1.1 F2.1 B0.0 B2.1 F3.1 B1.0 B3.1 b2.0 W2.0 "
        "b3.0 W3.0",
        "F0.0 F0.1 F1.0 F1.1 F2.0 B0.1 F2.1 B0.0 F3.0 B1.1 F3.1 B1.0 B2.1 B2.0 b3.1 b3.0 W3.1 "
        "W3.0"};
    for (int s = 0; s < 2; s++) {
        g_autofree char *text = units_text(plan, 4, s);
        ck_assert_str_eq(text, expected[s]);
    }
    static const struct {
        int pp, v, m, first;
        const char *message;
    } refused[] = {
        {1, 2, 4, 0, "a schedule other than \"dualpipev\" when pp = 1"},
        {2, 3, 4, 0, "2 model chunks per stage"},
        {2, 2, 3, 0, "= 3, at least 2 pp = 4"},
        {2, 2, 4, 4, "not set with the \"dualpipev\" schedule"},
    };
    for (gsize k = 0; k < G_N_ELEMENTS(refused); k++) {
        plan->pp = refused[k].pp;
        plan->virtual_stages = refused[k].v;
        plan->global_batch_size = refused[k].m;
        plan->decoder_first_pipeline_num_layers = refused[k].first;
        refuses(&schedule_dualpipev, plan, refused[k].message);
    }
}
END_TEST

/* Point-to-point traffic per step, all boundaries: activations forward and
 * gradients backward, b s h bf16 elements per micro-batch per boundary,
 * 2 (p - 1) m b s h x 2 bytes; interleaving has p v - 1 boundaries, and
 * DualPipeV's V 2p - 1 of which one, at the V's tip, stays on its stage. */
START_TEST(p2p_bytes_per_step)
{
    static const int cases[][3] = {{2, 3, 1}, {4, 5, 1}, {2, 4, 2}, {4, 8, 3}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        int p = cases[i][0], m = cases[i][1], v = cases[i][2];
        Run run = pipeline(p, m, v, v > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B, 1, MH, MA, MV);
        double sent = 0;
        for (int s = 0; s < p; s++)
            sent += run.rep.metrics.stages[s].p2p_bytes;
        ck_assert_rel(sent, 2.0 * (p * v - 1) * m * S * MH * 2, 1e-15);
        run_free(&run);
    }
    for (int p = 2; p <= 4; p++) {
        int m = 2 * p + 1;
        Run run = pipeline(p, m, 2, SCHEDULE_DUALPIPEV, 1, MH, MA, MV);
        double sent = 0;
        for (int s = 0; s < p; s++)
            sent += run.rep.metrics.stages[s].p2p_bytes;
        ck_assert_rel(sent, 2.0 * (2 * p - 2) * m * S * MH * 2, 1e-15);
        run_free(&run);
    }
}
END_TEST

/* ---- placement and 3D plans ------------------------------------------------ */

/* A 3D plan, tp 2 x pp 2 x dp 2 on one node: every rank replayed, and per
 * GPU the memory and communication the per-strategy tests establish: model
 * states 16 bytes per parameter of the stage's TP shard; per micro-batch
 * 4 TP all-reduces per layer plus the embedding's forward one (first stage)
 * or the head's backward one (last stage); the stage's gradients
 * all-reduced over dp: 2 (d - 1)/d x 2 x its parameters. */
START_TEST(three_d_plan)
{
    const int t = 2, p = 2, d = 2, m = 3, L = 4;
    Run run = run_new(test_gpt(L, MH, MA, MV, S), test_cluster(1, 8, 300e9, 25e9));
    run.model->tied_embeddings = FALSE;
    run.plan->tp = t;
    run.plan->pp = p;
    run.plan->dp = d;
    run.plan->global_batch_size = m * d;
    run.plan->grad_accum_dtype = GRAD_ACCUM_BF16; /* the 16 bytes and 2-byte reduction below */
    run_simulate(&run);
    const Metrics *mt = &run.rep.metrics;
    /* one rank of each stage stands for the stage's t x d ranks */
    ck_assert_int_eq(mt->simulated_ranks, p);
    ck_assert_str_eq(mt->symmetry, "tp x dp");
    double first =
        transformer_embedding_params(run.model, t) + 2 * transformer_layer_params(run.model, t);
    double last =
        2 * transformer_layer_params(run.model, t) + transformer_head_params(run.model, t);
    double stage_params[2] = {first, last};
    for (int s = 0; s < p; s++) {
        const double *split = mt->stages[s].peak_split;
        ck_assert_rel(split[MEM_PARAMS] + split[MEM_GRADS] + split[MEM_OPTIMIZER],
                      16 * stage_params[s], 1e-12);
    }
    int stage = mt->critical_rank / (t * d); /* rank order tp-dp-pp */
    ck_assert_int_eq(mt->comm[TAG_TP][COLL_ALL_REDUCE].count, m * (4 * L / p + 1));
    ck_assert_rel(mt->comm[TAG_DP][COLL_ALL_REDUCE].bytes,
                  2.0 * (d - 1) / d * 2 * stage_params[stage], 1e-12);
    run_free(&run);
}
END_TEST

/* rank_order dp-tp-pp puts a TP group's ranks d apart: over two nodes of 4,
 * tp 4 x dp 2 then rings over InfiniBand, two channels through two 25 GB/s
 * NICs, not NVLink's 300 GB/s: 300/50 = 6 times as long. */
START_TEST(rank_order_moves_tp_across_nodes)
{
    double tp_time[2];
    for (int order = 0; order < 2; order++) {
        Run run = run_new(test_gpt(2, MH, MA, MV, S), test_cluster(2, 4, 300e9, 25e9));
        run.plan->tp = 4;
        run.plan->rank_order = order ? RANK_ORDER_DP_TP_PP : RANK_ORDER_TP_DP_PP;
        run.plan->collective_algorithm = ALGORITHM_RING;
        run.plan->global_batch_size = 2;
        run_simulate(&run);
        tp_time[order] = run.rep.metrics.comm[TAG_TP][COLL_ALL_REDUCE].time_s;
        run_free(&run);
    }
    ck_assert_rel(tp_time[1] / tp_time[0], 300.0 / (2 * 25.0), 1e-12);
}
END_TEST

/* A tied word embedding lives on the first and the last stage; they sum
 * its gradients once a step: a ring all-reduce of V h values over the
 * two, in the type gradients accumulate in (fp32 by default, 4 bytes, as
 * data parallelism reduces them), which sends 2 (2 - 1)/2 x 4 V h = 4 V h
 * bytes from each (Megatron-LM's embedding group). An untied model has
 * none. */
START_TEST(tied_embedding_gradients_are_summed_over_the_ends)
{
    for (int tied = 0; tied < 2; tied++) {
        Run run = run_new(test_gpt(4, MH, MA, MV, S), test_cluster(1, 4, 300e9, 25e9));
        run.model->tied_embeddings = tied;
        run.plan->pp = 4;
        run.plan->dp = 1;
        run.plan->collective_algorithm = ALGORITHM_RING;
        run.plan->global_batch_size = 4;
        run_simulate(&run);
        const CommStat *ar = &run.rep.metrics.comm[TAG_EMBEDDING][COLL_ALL_REDUCE];
        ck_assert_int_eq(ar->count, tied);
        ck_assert_double_eq(ar->bytes, tied * 4.0 * MV * MH);
        run_free(&run);
    }
}
END_TEST

/* An explicit uneven split: the stages report their layers. */
START_TEST(explicit_layer_split)
{
    Run run = run_new(test_gpt(5, MH, MA, MV, S), test_cluster(1, 2, 300e9, 25e9));
    run.plan->pp = 2;
    run.plan->global_batch_size = 4;
    ck_assert(plan_spec_set(run.plan, PLAN_LAYERS_PER_STAGE, "2,3", "--layers-per-stage", NULL));
    run_simulate(&run);
    ck_assert_int_eq(run.rep.metrics.stages[0].layers, 2);
    ck_assert(run.rep.metrics.stages[0].embedding && !run.rep.metrics.stages[0].head);
    ck_assert_int_eq(run.rep.metrics.stages[1].layers, 3);
    ck_assert(run.rep.metrics.stages[1].head && !run.rep.metrics.stages[1].embedding);
    run_free(&run);
}
END_TEST

Suite *suite_pipeline(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("schedules");
    tcase_add_test(tc, gpipe_and_1f1b_bubble);
    tcase_add_test(tc, interleaved_bubble);
    tcase_add_test(tc, naive_keeps_each_stage_busy_one_pth);
    tcase_add_test(tc, zbh1_bubble);
    tcase_add_test(tc, zbh2_bubble);
    tcase_add_test(tc, dualpipev_bubble);
    tcase_add_test(tc, dualpipev_in_flight);
    tcase_add_test(tc, dualpipev_schedule);
    tcase_add_test(tc, zero_bubble_in_flight);
    tcase_add_test(tc, in_flight_micro_batches);
    tcase_add_test(tc, interleaved_first_stage_memory);
    tcase_add_test(tc, llama3_schedule);
    tcase_add_test(tc, p2p_bytes_per_step);
    tcase_add_test(tc, three_d_plan);
    tcase_add_test(tc, rank_order_moves_tp_across_nodes);
    tcase_add_test(tc, explicit_layer_split);
    tcase_add_test(tc, stage_peaks_equal_the_walk);
    tcase_add_test(tc, tied_embedding_gradients_are_summed_over_the_ends);
    suite_add_tcase(s, tc);
    return s;
}
