/* check_offload.c: offload optimizer (ZeRO-Offload, Ren et al. 2021,
 * arXiv 2101.06840; docs/model.md, "Offload") against hand calculation:
 * no optimizer states on the GPU, 2 Psi bytes over PCIe each way, the
 * host's Adam step in the step time, host memory against its capacity.
 * And offload activations (Megatron-Core's CPU offloading): each offloaded
 * layer's kept activations down and up once per micro-batch, the GPU's
 * peak lower by them, the step longer by the copies it cannot hide, and
 * longer still where the pipeline's traffic shares the copies' host link
 * (docs/model.md, "The host path"). */
#include <math.h>

#include "layout/layout.h"
#include "net/symmetry.h"
#include "net/topology.h"
#include "strategy/emit.h"
#include "strategy/estimate.h"
#include "strategy/states.h"
#include "strategy/strategy.h"
#include "testutil.h"

/* `model` on one DGX H100, dp ranks (so Psi / dp per rank with ZeRO 1),
 * one micro-batch of 1 per rank. */
static Run model_run(const char *model, Offload offload, int dp, int zero_stage)
{
    Run run =
        run_new(test_shipped_model("models", model), test_shipped_cluster("dgx-h100.json", 1));
    run.plan->dp = dp;
    run.plan->global_batch_size = dp;
    run.plan->zero_stage = zero_stage;
    run.plan->offload = offload;
    return run;
}

static Run offload_run(Offload offload, int dp, int zero_stage)
{
    return model_run("tiny-gpt.json", offload, dp, zero_stage);
}

/* ZeRO stage 1 keeps 12 Psi / d bytes of fp32 Adam states per GPU
 * (Rajbhandari et al. 2020, section 5.1); offloaded, none. */
START_TEST(test_gpu_optimizer_bytes)
{
    for (int o = OFFLOAD_NONE; o <= OFFLOAD_OPTIMIZER; o++) {
        Run run = offload_run((Offload)o, 8, 1);
        run_simulate(&run);
        double psi = transformer_params(run.model);
        double expected = o == OFFLOAD_NONE ? 12 * psi / 8 : 0;
        ck_assert_rel(run.rep.metrics.peak_split[MEM_OPTIMIZER], expected, 1e-12);
        run_free(&run);
    }
}
END_TEST

/* What rank 0's offload tasks whose names start with `name` amount to:
 * the bytes of its copies, the seconds of its host's work. */
static double offload_sum(const Graph *g, const char *name)
{
    double s = 0;
    for (TaskId id = 0; id < (TaskId)graph_tasks(g); id++) {
        const Task *t = graph_task(g, id);
        g_autofree char *n = graph_name(g, id);
        if (t->tag == TAG_OFFLOAD && t->owner == 0 && g_str_has_prefix(n, name))
            s += t->kind == TASK_COPY ? t->bytes : t->seconds;
    }
    return s;
}

/* The graph of `run`'s step, its topology in *topo (for topology_free). */
static Graph *emit(Run *run, Topology **topo)
{
    test_resolve(run->plan, run->model, run->cluster);
    g_autoptr(Layout) layout = layout_new(run->plan, run->cluster);
    *topo = topology_new(run->cluster, run->cluster->nodes);
    g_autoptr(Symmetry) sym = symmetry_new(layout, *topo, 0);
    Step step = step_of(run->model, run->cluster, run->plan);
    Graph *g = emit_step(&step, layout, sym, NULL, NULL, EMIT_MAX_TASKS, 0, NULL);
    ck_assert_ptr_nonnull(g);
    return g;
}

/* ZeRO-Offload, section 4.1: per step the fp16 (here bf16, 2-byte)
 * gradients go down and the fp16 parameters come up, 2 Psi bytes each way
 * for the Psi parameters whose optimizer the GPU's host runs: Psi / d per
 * rank under ZeRO with d ranks, copies over the host path; the Adam step
 * takes Psi / d / (4e9 / 8) on a node of 8 GPUs. */
START_TEST(test_pcie_bytes)
{
    for (int dp = 1; dp <= 8; dp *= 8) {
        Run run = offload_run(OFFLOAD_OPTIMIZER, dp, 1);
        Topology *topo;
        g_autoptr(Graph) g = emit(&run, &topo);
        double psi_r = transformer_params(run.model) / dp;
        ck_assert_rel(offload_sum(g, "offload grads down"), 2 * psi_r, 1e-12);
        ck_assert_rel(offload_sum(g, "offload params up"), 2 * psi_r, 1e-12);
        ck_assert_rel(offload_sum(g, "offload cpu adam"), psi_r / (4e9 / 8), 1e-12);
        topology_free(topo);
        run_free(&run);
    }
}
END_TEST

/* Llama 2 7B on one GPU, no data parallelism, a micro-batch of 4. Each
 * layer's gradients go down when its backward ends, 2 x 202M bytes at 50
 * GB/s = 8 ms, less than the backward of the layer below it (6 x 202M x 4
 * x 4096 FLOPs = 20 TFLOP, over 20 ms at 989 TFLOPS), so they keep up,
 * but the embedding's backward (a memory-bound gather, E seconds) is
 * shorter: after it, layer 0's transfer still has 2 P_layer / B - E to
 * run, then the embedding's, 2 P_emb / B. Then the host's Adam step over
 * all Psi and the parameters up, where the GPU ran its Adam step:
 *   T(optimizer) - T(none) = 2 P_layer / B - E + 2 P_emb / B
 *                            + Psi / (4e9 / 8) + 2 Psi / B - (GPU Adam),
 * B the PCIe bandwidth. */
START_TEST(test_cpu_adam_in_step)
{
    Run none = model_run("llama2-7b.json", OFFLOAD_NONE, 1, 1);
    Run off = model_run("llama2-7b.json", OFFLOAD_OPTIMIZER, 1, 1);
    none.plan->micro_batch_size = off.plan->micro_batch_size = 4;
    none.plan->global_batch_size = off.plan->global_batch_size = 4;
    run_simulate(&none);
    run_simulate(&off);
    const GpuSpec *gpu = &off.cluster->gpu;
    double psi = transformer_params(off.model), pcie = gpu->pcie_Bps;
    double emb = states_segment(off.model, off.plan, SEGMENT_EMBEDDING, -1).params;
    double layer = states_segment(off.model, off.plan, SEGMENT_LAYER, 0).params;
    OpList ops;
    transformer_embedding_ops(off.model, transformer_shard(off.plan), &ops);
    double emb_backward = 2 * transformer_ops_s(gpu, &ops);
    StatesRule rule = strategy_states_rule(none.plan);
    double gpu_adam = states_optimizer_s(gpu, &rule, psi);
    double expected = 2 * layer / pcie - emb_backward + 2 * emb / pcie + psi / (4e9 / 8) +
                      2 * psi / pcie - gpu_adam;
    ck_assert_rel(off.rep.metrics.step_time_s - none.rep.metrics.step_time_s, expected, 1e-9);
    run_free(&none);
    run_free(&off);
}
END_TEST

/* The host keeps 12 bytes of fp32 states and 2 of bf16 gradients per
 * parameter of each rank's shard: 8 ranks x 14 Psi / 8 = 14 Psi on the
 * node. A host one byte short does not fit. */
START_TEST(test_host_capacity)
{
    for (int room = -1; room <= 0; room++) {
        Run run = offload_run(OFFLOAD_OPTIMIZER, 8, 1);
        double host = 14 * transformer_params(run.model);
        run.cluster->host_memory_bytes = host + room;
        run_simulate(&run);
        ck_assert_rel(run.rep.metrics.host_bytes, host, 1e-12);
        ck_assert_int_eq(run.rep.metrics.fits, room == 0);
        run_free(&run);
    }
}
END_TEST

/* ---- offload activations --------------------------------------------- */

enum { L = 4, H = 256, A = 8, S = 128 };

/* A GPT layer of h = H, a = A heads, t = 1, with FlashAttention keeps per
 * micro-batch of b sequences Korthikanti et al.'s 34 s b h bytes (2022,
 * section 4.1: attention 11sbh, MLP 19sbh, norms 4sbh) with, in place of
 * the 5 a s^2 b of the attention core, FlashAttention's fp32 logsumexp, 4
 * a s b (docs/model.md, "FlashAttention"). */
static double layer_bytes(int b)
{
    return 34.0 * S * b * H + 4.0 * A * S * b;
}

/* A layer's forward seconds t_f and backward seconds t_b = 2 t_f +
 * FlashAttention's backward rest, for the run's plan on its GPU. */
static void layer_times(const Run *run, double *t_f, double *t_b)
{
    Shard sh = transformer_shard(run->plan);
    OpList ops;
    *t_f = 0;
    for (int blk = 0; blk < TRANSFORMER_BLOCKS; blk++) {
        transformer_block_ops(run->model, (Block)blk, sh, &ops);
        *t_f += transformer_ops_s(&run->cluster->gpu, &ops);
    }
    transformer_block_replay_ops(run->model, BLOCK_ATTENTION, sh, RECOMPUTE_NONE, &ops);
    *t_b = 2 * *t_f + transformer_ops_s(&run->cluster->gpu, &ops);
}

/* L layers of vocabulary `vocab` on one GPU, m micro-batches of b, PCIe of
 * `pcie` bytes/s, offload `offload` (the default offload_layers: the
 * first L - 1). */
static Run act_run(Offload offload, int vocab, int m, int b, double pcie)
{
    Run run = run_new(test_gpt(L, H, A, vocab, S), test_cluster(1, 1, 300e9, 25e9));
    run.cluster->gpu.pcie_Bps = pcie;
    run.cluster->host_memory_bytes = 1e15;
    run.plan->offload = offload;
    run.plan->micro_batch_size = b;
    run.plan->global_batch_size = m * b;
    return run;
}

/* Down after the forward, up before the backward: per micro-batch each of
 * the L - 1 offloaded layers crosses the host path once each way, (L - 1)
 * x 34sbh + 4asb bytes; with one stage (1F1B: a micro-batch's backward
 * before the next forward) the host holds one micro-batch's. */
START_TEST(test_activation_pcie_bytes)
{
    const int m = 3, b = 2;
    const double pcie = 50e9, offloaded = (L - 1) * layer_bytes(b);
    Run run = act_run(OFFLOAD_ACTIVATIONS, 512, m, b, pcie);
    Topology *topo;
    g_autoptr(Graph) g = emit(&run, &topo);
    ck_assert_rel(offload_sum(g, "offload act down"), m * offloaded, 1e-12);
    ck_assert_rel(offload_sum(g, "offload act up"), m * offloaded, 1e-12);
    topology_free(topo);
    run_simulate(&run);
    ck_assert_rel(run.rep.metrics.host_bytes, offloaded, 1e-12);
    run_free(&run);
}
END_TEST

/* With copies as good as instant, an offloaded layer's activations leave
 * the GPU as its forward ends. The peak is at the head's forward (its fp32
 * logits, 4 s b V, outweigh two layers' 34sbh: V = 8192, h = 256): the
 * embedding's, every layer's and the head's activations, or with offload
 * only the last layer's of the L, so the peak falls by (L - 1) x
 * (34sbh + 4asb). */
START_TEST(test_activation_peak_falls)
{
    double peak[2];
    for (int o = 0; o < 2; o++) {
        Run run = act_run(o ? OFFLOAD_ACTIVATIONS : OFFLOAD_NONE, 8192, 1, 1, 1e30);
        run_simulate(&run);
        peak[o] = run.rep.metrics.peak_bytes;
        run_free(&run);
    }
    ck_assert_rel(peak[0] - peak[1], (L - 1) * layer_bytes(1), 1e-12);
}
END_TEST

/* One micro-batch, copies of c = A_l / B seconds far longer than any
 * compute. The copies down queue on the PCIe link from the end of layer
 * 0's forward, t_E + t_f; the prefetches follow them, one after the
 * other, and layer 0's backward waits for the last: it starts at t_E + t_f
 * + 2 (L - 1) c, then layer 0's and the embedding's backward and the
 * optimizer. Without offload the step runs every forward and backward
 * back to back, so
 *   T(activations) - T(none) = 2 (L - 1) c - (L - 1)(t_f + t_b) - t_head - t'_head,
 * t_f a layer's forward, t_b = 2 t_f + FlashAttention's backward rest its
 * backward, t_head the head's forward and t'_head its backward (twice but
 * the loss's, transformer_op_backward_s). */
START_TEST(test_slow_pcie_stretches_step)
{
    const double pcie = 1e6; /* 1 MB/s: c is over a second */
    double step[2];
    Run runs[2];
    for (int o = 0; o < 2; o++) {
        runs[o] = act_run(o ? OFFLOAD_ACTIVATIONS : OFFLOAD_NONE, 512, 1, 1, pcie);
        run_simulate(&runs[o]);
        step[o] = runs[o].rep.metrics.step_time_s;
    }
    double t_f, t_b;
    layer_times(&runs[1], &t_f, &t_b);
    OpList ops;
    transformer_head_ops(runs[1].model, transformer_shard(runs[1].plan), &ops);
    double t_head = transformer_ops_s(&runs[1].cluster->gpu, &ops), c = layer_bytes(1) / pcie;
    double t_head_back = transformer_ops_backward_s(&runs[1].cluster->gpu, &ops);
    ck_assert_rel(step[1] - step[0], 2 * (L - 1) * c - (L - 1) * (t_f + t_b) - t_head - t_head_back,
                  1e-9);
    for (int o = 0; o < 2; o++)
        run_free(&runs[o]);
}
END_TEST

/* The step bound counts the prefetches a backward waits for. L = 4
 * layers on 2 stages of 2, m = 4 micro-batches of 1, copies of c = A_l /
 * B = 1.5 t_b seconds: each stage offloads its first layer, whose prefetch
 * starts as the backward of the layer above does (or earlier, while a
 * stage waits for its gradients) and which its own backward waits for, so
 * each micro-batch keeps each stage busy c - t_b longer than its compute:
 * the bound rises by at least m (c - t_b) over that of copies as good as
 * instant, and stays at most the replay. Without the waits it did not
 * move (the copies' stream, 2 c a micro-batch, is less than the step). */
START_TEST(test_prefetch_waits_bound_the_step)
{
    const int m = 4;
    double t_f, t_b, c = 0, bound[2];
    for (int slow = 0; slow < 2; slow++) {
        Run run = run_new(test_gpt(L, H, A, 512, S), test_cluster(1, 2, 300e9, 25e9));
        run.cluster->host_memory_bytes = 1e15;
        run.plan->pp = 2;
        run.plan->offload = OFFLOAD_ACTIVATIONS;
        run.plan->micro_batch_size = 1;
        run.plan->global_batch_size = m;
        layer_times(&run, &t_f, &t_b);
        c = 1.5 * t_b;
        run.cluster->gpu.pcie_Bps = slow ? layer_bytes(1) / c : 1e30;
        run_simulate(&run);
        Step step = step_of(run.model, run.cluster, run.plan);
        bound[slow] = estimate_step_lower_bound_s(&step);
        ck_assert_msg(bound[slow] <= run.rep.metrics.step_time_s, "bound %.17g s, step %.17g s",
                      bound[slow], run.rep.metrics.step_time_s);
        run_free(&run);
    }
    ck_assert_msg(bound[1] - bound[0] >= m * (c - t_b) * (1 - 1e-6),
                  "bounds %.17g and %.17g s, m (c - t_b) %.17g s", bound[0], bound[1],
                  m * (c - t_b));
}
END_TEST

/* ---- the host path --------------------------------------------------- */

/* L layers on two nodes of one GPU each, pp 2, one micro-batch of 1; the
 * GPUs' host links and NICs both B bytes/s, traffic between the nodes
 * through the host links (nic_via_host, as a DGX's NICs hang from its
 * GPUs' PCIe switches) or not; offload `offload`. */
static Run host_run(Offload offload, gboolean nic_via_host, gboolean contention, double B)
{
    Run run = run_new(test_gpt(L, H, A, 512, S), test_cluster(2, 1, 300e9, B));
    run.cluster->gpu.pcie_Bps = B;
    run.cluster->host_path.nic_via_host = nic_via_host;
    run.cluster->host_memory_bytes = 1e15;
    run.plan->pp = 2;
    run.plan->offload = offload;
    run.plan->link_contention = contention;
    run.plan->micro_batch_size = 1;
    run.plan->global_batch_size = 1;
    return run;
}

/* The step of host_run's plan. */
static double host_step(Offload offload, gboolean nic_via_host, gboolean contention, double B)
{
    Run run = host_run(offload, nic_via_host, contention, B);
    run_simulate(&run);
    double step = run.rep.metrics.step_time_s;
    run_free(&run);
    return step;
}

/* The pipeline's send saturates the link it shares with an offload copy.
 * Stage 0 holds the embedding and layers 0 and 1 and offloads layer 0
 * (all but its chunk's last): the copy down of A_l = 34sbh + 4asb bytes
 * starts when layer 0's forward ends, and with B = 1 MB/s it takes c =
 * A_l / B = 1.1 s, far longer than any compute (microseconds). Layer 1's
 * forward ends t_f later and the stage sends its output, S = 2sbh bytes
 * (bf16, t = 1), to stage 1, whose forward waits for it.
 *   - NICs apart from the host links: the send alone on the NICs, S / B.
 *   - nic_via_host: the send crosses GPU 0's host link out, where the
 *     copy still has A_l - t_f B > S bytes to move: max-min fair, each
 *     gets B / 2 (the NICs, B each, carry the send alone), and the send
 *     takes 2S / B.
 * Everything after the send waits for it: stage 1's forward, copies and
 * backward, the gradients back (GPU 1's copies are done by then, and GPU
 * 0's prefetch starts after they arrive), stage 0's backward and the tied
 * embedding's all-reduce (alone on links of B either way). Stage 0's copy
 * down ends S / B later too, off the critical path. So
 *   T(activations, via host) - T(activations, apart) = 2S/B - S/B = S/B,
 * and without offload the send crosses links of B either way: the same
 * step, bit for bit. Nor does the host path change a step without link
 * contention, where every copy and collective takes its time alone. */
START_TEST(nic_traffic_slows_offload_copies)
{
    const double B = 1e6, send = 2.0 * S * H; /* s b h x 2 bytes, b = 1 */
    double none[2], act[2];
    for (int via = 0; via < 2; via++) {
        none[via] = host_step(OFFLOAD_NONE, via, TRUE, B);
        act[via] = host_step(OFFLOAD_ACTIVATIONS, via, TRUE, B);
    }
    ck_assert_double_eq(none[1], none[0]);
    ck_assert(act[0] > none[0] + layer_bytes(1) / B); /* offload costs anyway */
    ck_assert_rel(act[1] - act[0], send / B, 1e-9);
    ck_assert_double_eq(host_step(OFFLOAD_ACTIVATIONS, TRUE, FALSE, B),
                        host_step(OFFLOAD_ACTIVATIONS, FALSE, FALSE, B));
}
END_TEST

Suite *suite_offload(void)
{
    Suite *s = suite_create("offload");
    TCase *tc = tcase_create("offload");
    tcase_add_test(tc, test_gpu_optimizer_bytes);
    tcase_add_test(tc, test_pcie_bytes);
    tcase_add_test(tc, test_cpu_adam_in_step);
    tcase_add_test(tc, test_host_capacity);
    tcase_add_test(tc, test_activation_pcie_bytes);
    tcase_add_test(tc, test_activation_peak_falls);
    tcase_add_test(tc, test_slow_pcie_stretches_step);
    tcase_add_test(tc, test_prefetch_waits_bound_the_step);
    tcase_add_test(tc, nic_traffic_slows_offload_copies);
    suite_add_tcase(s, tc);
    return s;
}
