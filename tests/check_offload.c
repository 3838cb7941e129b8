/* check_offload.c: offload optimizer (ZeRO-Offload, Ren et al. 2021,
 * arXiv 2101.06840; docs/model.md, "Offload") against hand calculation:
 * no optimizer states on the GPU, 2 Psi bytes over PCIe each way, the
 * host's Adam step in the step time, host memory against its capacity. */
#include <math.h>

#include "layout/layout.h"
#include "net/symmetry.h"
#include "net/topology.h"
#include "strategy/emit.h"
#include "strategy/estimate.h"
#include "strategy/zero.h"
#include "testutil.h"

/* `model` on one DGX H100, dp ranks (so Psi / dp per rank with ZeRO 1),
 * one micro-batch of 1 per rank. */
static Run model_run(const char *model, Offload offload, int dp, int zero_stage)
{
    Run run = run_new(test_shipped_model("models", model), test_shipped_cluster("dgx-h100.json", 1));
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
        double psi = tf_params(run.model);
        double expected = o == OFFLOAD_NONE ? 12 * psi / 8 : 0;
        ck_assert_rel(run.rep.metrics.peak_split[MEM_OPTIMIZER], expected, 1e-12);
        run_free(&run);
    }
}
END_TEST

/* Seconds of rank 0's offload tasks named `name`. */
static double offload_s(const Graph *g, const char *name)
{
    double s = 0;
    for (TaskId id = 0; id < (TaskId)graph_tasks(g); id++) {
        const Task *t = graph_task(g, id);
        g_autofree char *n = graph_name(g, id);
        if (t->tag == TAG_OFFLOAD && t->owner == 0 && strcmp(n, name) == 0)
            s += t->seconds;
    }
    return s;
}

/* ZeRO-Offload, section 4.1: per step the fp16 (here bf16, 2-byte)
 * gradients go down and the fp16 parameters come up, 2 Psi bytes each way
 * for the Psi parameters whose optimizer the GPU's host runs: Psi / d per
 * rank under ZeRO with d ranks. The transfers take bytes / pcie_GBps (50
 * GB/s), the Adam step Psi / d / (4e9 / 8) on a node of 8 GPUs. */
START_TEST(test_pcie_bytes)
{
    for (int dp = 1; dp <= 8; dp *= 8) {
        Run run = offload_run(OFFLOAD_OPTIMIZER, dp, 1);
        test_resolve(run.plan, run.model, run.cluster);
        g_autoptr(Layout) layout = layout_new(run.plan, run.cluster);
        Topology *topo = topology_new(run.cluster, run.cluster->nodes);
        g_autoptr(Symmetry) sym = symmetry_new(layout, topo, 0);
        g_autoptr(Graph) g =
            emit_step(run.model, run.cluster, run.plan, layout, sym, NULL, NULL);
        ck_assert_ptr_nonnull(g);
        double psi_r = tf_params(run.model) / dp, pcie = run.cluster->gpu.pcie_Bps;
        ck_assert_rel(offload_s(g, "offload grads down") * pcie, 2 * psi_r, 1e-12);
        ck_assert_rel(offload_s(g, "offload params up") * pcie, 2 * psi_r, 1e-12);
        ck_assert_rel(offload_s(g, "offload cpu adam"), psi_r / (4e9 / 8), 1e-12);
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
    double psi = tf_params(off.model), pcie = gpu->pcie_Bps;
    double emb = estimate_segment_params(off.model, off.plan, SEGMENT_EMBEDDING);
    double layer = estimate_segment_params(off.model, off.plan, SEGMENT_LAYER);
    OpList ops;
    tf_embedding_ops(off.model, tf_shard(off.plan), &ops);
    double emb_backward = 2 * tf_ops_s(gpu, &ops);
    double gpu_adam = zero_optimizer_s(gpu, none.plan, psi);
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
        double host = 14 * tf_params(run.model);
        run.cluster->host_memory_bytes = host + room;
        run_simulate(&run);
        ck_assert_rel(run.rep.metrics.host_bytes, host, 1e-12);
        ck_assert_int_eq(run.rep.metrics.fits, room == 0);
        run_free(&run);
    }
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
    suite_add_tcase(s, tc);
    return s;
}
