/* check_moe.c: mixtures of experts and expert parallelism
 * (expert_parallel.c, docs/model.md "Mixture of experts") held to
 * published figures and to closed forms by hand:
 *   - parameters of Mixtral 8x7B, 46.7B total and 12.9B active (Mistral
 *     AI, "Mixtral of experts", arXiv 2401.04088, section 2 and Table 1's
 *     "active parameters"), and of DeepSeek-V2-Lite, 15.7B total (DeepSeek-AI,
 *     "DeepSeek-V2", arXiv 2405.04434, section 4.3 / Appendix B) from
 *     their Hugging Face configs; figures published to 0.1B;
 *   - the token dispatch: per MoE layer and micro-batch a rank's buffer is
 *     its n k token copies of h bf16 elements (n = b s tokens), 2 n k h
 *     bytes (x the capacity factor when experts are padded to it), and an
 *     all-to-all sends (ep - 1)/ep of it; forward dispatch and combine,
 *     backward their mirrors: 4 all-to-alls;
 *   - the routed experts' gradients reduce over the expert-data-parallel
 *     group (d / ep ranks), the rest over d: a ring all-reduce of 4 P fp32
 *     bytes sends 2 (n - 1)/n of it (Rajbhandari et al. 2020, section 7.1);
 *   - expert parameters shard over ep: each rank holds E / ep experts;
 *   - model FLOPs: a MoE block's GEMMs are the dense MLP's with f = k f_e
 *     plus the router's 2 n h E (top-k routing, no padding);
 *   - mixed models: DeepSeek-V2-Lite's first layer is dense, the 26 others
 *     MoE (first_k_dense_replace 1): it simulates, its model FLOPs are the
 *     dense layer's plus the MoE layers', and only MoE layers route tokens
 *     (with moe_layer_frequency 2, every other layer);
 *   - Qwen3 235B-A22B's published H100 plan (TP 2, PP 8, VP 4, EP 32 with
 *     MoE parallel folding, on 256 GPUs) resolves and fits, its model
 *     states by hand. */
#include <string.h>

#include "cost/transformer.h"
#include "strategy/states.h"
#include "strategy/strategy.h"
#include "testutil.h"

static ModelSpec *hf(const char *file)
{
    g_autofree char *path = test_shipped("tests/data", file);
    GError *error = NULL;
    ModelSpec *m = model_spec_load(path, &error);
    ck_assert_msg(m != NULL, "%s", error ? error->message : "");
    return m;
}

START_TEST(mixtral_parameters)
{
    ModelSpec *m = hf("mixtral-8x7b-hf.json");
    ck_assert_int_eq(m->experts, 8);
    ck_assert_int_eq(m->experts_per_token, 2);
    ck_assert_double_eq_tol(transformer_params(m) / 1e9, 46.7, 0.05);
    ck_assert_double_eq_tol(transformer_active_params(m) / 1e9, 12.9, 0.05);
    ModelSpec *shipped = test_shipped_model("models", "mixtral-8x7b.json");
    ck_assert_double_eq(transformer_params(shipped), transformer_params(m));
    model_spec_free(shipped);
    model_spec_free(m);
}
END_TEST

START_TEST(deepseek_v2_lite_parameters)
{
    ModelSpec *m = hf("deepseek-v2-lite-hf.json");
    ck_assert_int_eq(m->experts, 64);
    ck_assert_int_eq(m->shared_experts, 2);
    ck_assert_int_eq(m->first_dense_layers, 1);
    ck_assert_int_eq(m->kv_lora_rank, 512);
    ck_assert_int_eq(m->q_lora_rank, 0);
    ck_assert_double_eq_tol(transformer_params(m) / 1e9, 15.7, 0.05);
    /* active, by hand from the config (h 2048, a 16, V 102400, 27 layers,
     * the first dense of f 10944, 26 MoE of 64 routed experts of f_e 1408,
     * top-6, 2 shared): MLA's weights (q 128 + 64 per head; the KV
     * down-projection with the rotary key, 512 + 64; its norm; the KV
     * up-projection, 128 + 128 per head; the output), two RMSNorms per
     * layer, the router, 6 + 2 experts of 3 h f_e, both embeddings and
     * the final norm. The paper's 2.4B activated (Table 1's Lite column)
     * leave out the input embedding: 2.45B here without it. */
    double h = 2048, a = 16, v = 102400, fe = 1408;
    double mla = h * a * 192 + h * 576 + 512 + 512 * a * 256 + a * 128 * h;
    double moe = h * 64 + (6 + 2) * 3 * h * fe;
    double active = 27 * (mla + 2 * h) + 3 * h * 10944 + 26 * moe + 2 * v * h + h;
    ck_assert_double_eq(transformer_active_params(m), active);
    ck_assert_double_eq_tol((active - v * h) / 1e9, 2.45, 0.005);
    model_spec_free(m);
}
END_TEST

enum { L = 2, H = 256, A = 8, V = 512, S = 128, E = 8, K = 2, FE = 512 };

static ModelSpec *moe_model(void)
{
    return test_moe(L, H, A, V, S, E, K, FE);
}

/* A replay of `model` on one node of 4 GPUs, dp 4, m micro-batches of b. */
static Run model_run(ModelSpec *model, int ep, int capacity, int m, int b)
{
    Run run = run_new(model, test_cluster(1, 4, 300e9, 25e9));
    run.plan->ep = ep;
    run.plan->moe_capacity_percent = capacity;
    run.plan->micro_batch_size = b;
    run.plan->global_batch_size = 4 * m * b;
    run.plan->collective_algorithm = ALGORITHM_RING;
    run_simulate(&run);
    return run;
}

static Run moe_run(int ep, int capacity, int m, int b)
{
    return model_run(moe_model(), ep, capacity, m, b);
}

START_TEST(all_to_all_bytes)
{
    const int m = 3, b = 2;
    for (int ep = 2; ep <= 4; ep *= 2) {
        for (int capacity = 0; capacity <= 150; capacity += 150) {
            Run run = moe_run(ep, capacity, m, b);
            const CommStat *x = &run.rep.metrics.comm[TAG_EP][COLL_ALL_TO_ALL];
            double cf = capacity ? capacity / 100.0 : 1;
            double buffer = 2.0 * b * S * K * H * cf;
            ck_assert_int_eq(x->count, m * L * 4);
            ck_assert_rel(x->bytes, m * L * 4 * (ep - 1.0) / ep * buffer, 1e-12);
            run_free(&run);
        }
    }
}
END_TEST

/* The flex dispatcher (DeepEP's and HybridEP's deduplicated dispatch):
 * each token once over RDMA to each other node that holds one of its K
 * experts, or in one node once to each other GPU that does; with uniform
 * routing of K = 2 of E = 8 experts, by hand:
 *   - 4 GPUs on 2 nodes of 2 (ep 4 = dp): a node holds 4 experts, and a
 *     token has none there with probability C(4, 2) / C(8, 2) = 6/28, so
 *     it crosses to the other node with probability 22/28 = 11/14: the
 *     RDMA bytes a rank sends, b S H 2 x 11/14, against the all-to-all's
 *     b S K H 2 x 2/4 across nodes (half its copies are for the other
 *     node), 11/14 of them; the exchange is the all-to-all of that S
 *     (S / ep to every member), so every all-to-all's bytes are 11/14 of
 *     the plain one's;
 *   - 4 GPUs of one node: a GPU holds 2 experts, none of a token's with
 *     probability C(6, 2) / C(8, 2) = 15/28: each other GPU gets 13/28 of
 *     the tokens, b S H 2 x 13/28 bytes, against the all-to-all's b S K H
 *     2 / 4 = b S H 2 x 1/2: 13/14 of them;
 *   - group-limited routing (DeepSeek's n_group 4, topk_group 2: a token's
 *     2 experts among those of 2 of 4 groups of 2, the 6 pairs of groups
 *     alike): on 2 nodes of 2 GPUs a node holds 2 groups; a token misses
 *     it when neither of its groups is there (1 pair of 6), when one is
 *     (4 pairs) with probability C(2, 2) / C(4, 2) = 1/6, never when both
 *     are: (1 + 4/6) / 6 = 5/18, so 13/18 of the all-to-all's; in one
 *     node of 4 a GPU holds one group, missed when unchosen (3 pairs) or
 *     with 1/6 (3 pairs): (3 + 3/6) / 6 = 7/12, each other GPU getting
 *     5/12 of the tokens, 5/6 of the all-to-all's.
 * The step is shorter for it, the collectives as many. */
START_TEST(flex_dispatch_deduplicates)
{
    static const struct {
        int nodes, per_node, groups, topk_groups;
        double ratio;
    } cases[] = {{2, 2, 1, 1, 11.0 / 14},
                 {1, 4, 1, 1, 13.0 / 14},
                 {2, 2, 4, 2, 13.0 / 18},
                 {1, 4, 4, 2, 5.0 / 6}};
    for (gsize c = 0; c < G_N_ELEMENTS(cases); c++) {
        double bytes[2], step[2];
        int count[2];
        for (int flex = 0; flex < 2; flex++) {
            ModelSpec *model = moe_model();
            model->router_groups = cases[c].groups;
            model->router_topk_groups = cases[c].topk_groups;
            Run run = run_new(model, test_cluster(cases[c].nodes, cases[c].per_node, 300e9, 25e9));
            run.plan->ep = 4;
            run.plan->global_batch_size = 8;
            run.plan->moe_dispatcher = flex ? MOE_DISPATCHER_FLEX : MOE_DISPATCHER_ALL_TO_ALL;
            run_simulate(&run);
            const CommStat *x = &run.rep.metrics.comm[TAG_EP][COLL_ALL_TO_ALL];
            bytes[flex] = x->bytes;
            count[flex] = x->count;
            step[flex] = run.rep.metrics.step_time_s;
            run_free(&run);
        }
        ck_assert_int_eq(count[1], count[0]);
        ck_assert_int_eq(count[0], 4 * L * 2); /* 2 micro-batches a rank */
        ck_assert_rel(bytes[0], count[0] * 0.75 * 2.0 * S * K * H, 1e-12);
        ck_assert_rel(bytes[1], bytes[0] * cases[c].ratio, 1e-12);
        ck_assert(step[1] < step[0]);
    }
}
END_TEST

/* HFU counts the work the kernels do. Dropless routing with the busiest
 * expert at 150 % of the mean (moe_imbalance_percent) makes every GPU's
 * expert GEMMs take 1.5 times as long in the replay, as the busiest
 * does, but across the GPUs only the mean is done: the hardware FLOPs are
 * the balanced run's. Padded to a capacity of 150 %, every GPU computes
 * its padded rows: the expert GEMMs' hardware FLOPs grow by half. Model
 * FLOPs (Megatron's) are the same in all three. */
/* Megatron-Core's shared-expert overlap (moe_shared_expert_overlap): the
 * exchange before a MoE block leaves the compute stream, and the shared
 * expert's pass runs beside it; the routed experts wait for both. One
 * micro-batch on 2 GPUs (ep 2 = dp), tp 1, pp 1, links without latency
 * and no interference: the compute stream does, per MoE layer, the
 * shared expert's forward S_f then the dispatch D where it now does
 * max(S_f, D), and in backward S_b then the combine's gradient D where it
 * now does max(S_b, D); every all-to-all moves the same bytes alone on
 * idle links (the gradients reduce once, after backward), so all take D.
 * Since S + D - max(S, D) = min(S, D), the step shortens by exactly
 *     L (min(S_f, D) + min(S_b, D)),
 * the exposed ep communication by as much, and the compute is the same.
 * D by hand: a rank sends (ep - 1)/ep of its 2 n k h = 2 x 128 x 2 x 256
 * = 131,072-byte buffer, 65,536 bytes, over the link: 65.536 us at 1 GB/s,
 * 6.5536 ns at 10 TB/s. The shared expert's pass (transformer_moe_apart_ops,
 * costed as any block's operations) takes about 1 us forward and 2 us
 * backward, so the two regimes: at 1 GB/s D is the larger and the step
 * shortens by L (S_f + S_b), the shared expert hidden; at 10 TB/s it is
 * the smaller and the step shortens by 2 L D, the exchanges hidden. */
static void shared_overlap_case(double link_Bps, gboolean shared_longer)
{
    double step[2], exposed[2], compute[2], d = 0;
    OpsWork shared = {0};
    for (int overlap = 0; overlap < 2; overlap++) {
        ModelSpec *model = moe_model();
        model->shared_experts = 1;
        Run run = run_new(model, test_cluster(1, 2, link_Bps, link_Bps));
        run.plan->ep = 2;
        run.plan->global_batch_size = 2;
        run.plan->moe_shared_expert_overlap = overlap;
        run_simulate(&run);
        const Metrics *mt = &run.rep.metrics;
        const CommStat *x = &mt->comm[TAG_EP][COLL_ALL_TO_ALL];
        ck_assert_int_eq(x->count, 4 * L);
        d = x->time_s / x->count;
        ck_assert_rel(d, 65536 / link_Bps, 1e-12);
        step[overlap] = mt->step_time_s;
        exposed[overlap] = x->exposed_s;
        compute[overlap] = mt->compute_s;
        OpList ops;
        transformer_moe_apart_ops(model, transformer_shard(run.plan), &ops);
        ck_assert_int_eq(ops.n, overlap ? 3 : 0); /* up, activation, down: apart only then */
        if (overlap)
            shared = transformer_ops_work(&run.cluster->gpu, &ops);
        run_free(&run);
    }
    double sf = shared.seconds, sb = shared.backward_seconds;
    ck_assert(sf > 0 && sb > sf);
    ck_assert(shared_longer ? sf > d : sb < d); /* the regime is as said */
    double saved = L * (MIN(sf, d) + MIN(sb, d));
    ck_assert_double_eq_tol(saved, shared_longer ? 2 * L * d : L * (sf + sb), 1e-15);
    ck_assert_rel(step[0] - step[1], saved, 1e-9);
    ck_assert_rel(exposed[0] - exposed[1], saved, 1e-9);
    ck_assert_rel(compute[1], compute[0], 1e-12);
}

START_TEST(shared_expert_beside_the_dispatch)
{
    shared_overlap_case(1e9, FALSE);   /* the dispatch longer: the shared expert hidden */
    shared_overlap_case(1e13, TRUE);   /* the shared expert longer: the exchanges hidden */
}
END_TEST

/* Without ep > 1 there is no exchange to overlap, and without shared
 * experts nothing to put beside it: the flag changes nothing, the plan
 * normalizes to it off (strategy_normalize), and the replay is the same
 * step to the event. */
START_TEST(shared_overlap_needs_ep_and_shared_experts)
{
    for (int shared = 0; shared <= 1; shared++)
        for (int ep = 1; ep <= 2; ep++) {
            double step[2];
            int events[2];
            for (int overlap = 0; overlap < 2; overlap++) {
                ModelSpec *model = moe_model();
                model->shared_experts = shared;
                Run run = run_new(model, test_cluster(1, 2, 1e9, 1e9));
                run.plan->ep = ep;
                run.plan->global_batch_size = 2;
                run.plan->moe_shared_expert_overlap = overlap;
                run_simulate(&run);
                step[overlap] = run.rep.metrics.step_time_s;
                events[overlap] = (int)run.rep.metrics.events;
                strategy_normalize(run.plan, model);
                ck_assert_int_eq(run.plan->moe_shared_expert_overlap,
                                 overlap && shared && ep > 1);
                run_free(&run);
            }
            if (shared && ep > 1) {
                ck_assert(step[1] < step[0]);
                continue;
            }
            ck_assert_double_eq(step[1], step[0]);
            ck_assert_int_eq(events[1], events[0]);
        }
}
END_TEST

/* Megatron-Core's combined 1F1B overlap (overlap_moe_expert_parallel_comm):
 * with one stage, one warm-up forward, then each micro-batch's forward
 * walked with the previous one's backward, a piece of one, then a piece
 * of the other (combined_1f1b.py's schedule for no pipelining: F0, then
 * F1 with B0, ..., F(m-1) with B(m-2), then B(m-1)). m = 4 micro-batches
 * on 2 GPUs (ep 2 = dp), links without latency and fast (10 TB/s), so
 * every all-to-all takes D = 65,536 bytes / 1e13 B/s = 6.5536 ns (its
 * bytes by hand as in shared_expert_beside_the_dispatch), less than any
 * compute piece of the other unit it runs beside: every exchange of a
 * paired unit is hidden, and only the lone F0's and B(m-1)'s, 2 L each,
 * stay on the compute stream. The compute is the same work, so the step
 * shortens by exactly the hidden exchanges, 4 L (m - 1) D, and so does
 * the exposed ep communication; the bytes and collectives are the same. */
START_TEST(combined_overlap_hides_the_exchanges)
{
    enum { M = 4 };
    double step[2], exposed[2], compute[2], bytes[2], d = 65536 / 1e13;
    for (int overlap = 0; overlap < 2; overlap++) {
        Run run = run_new(moe_model(), test_cluster(1, 2, 1e13, 1e13));
        run.plan->ep = 2;
        run.plan->global_batch_size = 2 * M;
        run.plan->overlap_moe_expert_parallel_comm = overlap;
        run_simulate(&run);
        const Metrics *mt = &run.rep.metrics;
        const CommStat *x = &mt->comm[TAG_EP][COLL_ALL_TO_ALL];
        ck_assert_int_eq(x->count, 4 * L * M);
        ck_assert_rel(x->time_s, 4 * L * M * d, 1e-9); /* each alone on its links */
        step[overlap] = mt->step_time_s;
        exposed[overlap] = x->exposed_s;
        compute[overlap] = mt->compute_s;
        bytes[overlap] = x->bytes;
        run_free(&run);
    }
    ck_assert_rel(step[0] - step[1], 4 * L * (M - 1) * d, 1e-6);
    ck_assert_rel(exposed[0] - exposed[1], 4 * L * (M - 1) * d, 1e-6);
    ck_assert_rel(exposed[1], 4 * L * d, 1e-6);
    ck_assert_rel(compute[1], compute[0], 1e-12);
    ck_assert_double_eq(bytes[1], bytes[0]);
}
END_TEST

/* What Megatron-Core's TransformerConfig refuses with the overlap
 * (transformer_config.py), refused in one line naming the field; and with
 * ep 1 (nothing exchanged) the flag normalizes off and changes nothing. */
START_TEST(combined_overlap_rules)
{
    static const struct {
        const char *field, *value, *says;
    } refused[] = {
        {"moe_dispatcher", "all_gather", "all_gather dispatcher"},
        {"moe_shared_expert_overlap", "true", "moe_shared_expert_overlap"},
        {"recompute", "full", "full recomputation"},
        {"schedule", "zb-h1", "zb-h1 schedule"},
        {"schedule", "1f1b", "one model chunk a stage"}, /* pp 2, v 1 */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
        ModelSpec *model = test_moe(4, H, A, V, S, E, K, FE); /* pp 2 x v 2 chunks */
        model->shared_experts = 1;
        Run run = run_new(model, test_cluster(1, 4, 1e9, 1e9));
        PlanSpec *p = run.plan;
        p->ep = 2;
        p->pp = 2;
        p->schedule = SCHEDULE_INTERLEAVED;
        p->virtual_stages = 2;
        p->global_batch_size = 8;
        p->overlap_moe_expert_parallel_comm = TRUE;
        int f = 0;
        while (strcmp(plan_fields[f].name, refused[i].field) != 0)
            f++;
        ck_assert(plan_spec_set(p, (PlanField)f, refused[i].value, "test", NULL));
        if (p->schedule != SCHEDULE_INTERLEAVED)
            p->virtual_stages = 1;
        GError *error = NULL;
        ck_assert_msg(plan_spec_resolve(p, run.model, run.cluster, &error), "%s",
                      error ? error->message : "");
        ck_assert(!strategy_check(p, run.model, &error));
        ck_assert_msg(strstr(error->message, "overlap_moe_expert_parallel_comm") &&
                          strstr(error->message, refused[i].says),
                      "%s", error->message);
        g_clear_error(&error);
        run_free(&run);
    }
    double step[2];
    for (int overlap = 0; overlap < 2; overlap++) {
        Run run = run_new(moe_model(), test_cluster(1, 2, 1e9, 1e9));
        run.plan->global_batch_size = 8;
        run.plan->overlap_moe_expert_parallel_comm = overlap;
        run_simulate(&run);
        step[overlap] = run.rep.metrics.step_time_s;
        strategy_normalize(run.plan, run.model);
        ck_assert(!run.plan->overlap_moe_expert_parallel_comm);
        run_free(&run);
    }
    ck_assert_double_eq(step[1], step[0]);
}
END_TEST

START_TEST(hardware_flops_leave_out_the_imbalance)
{
    Run even = moe_run(2, 0, 1, 1);
    Run skew = run_new(moe_model(), test_cluster(1, 4, 300e9, 25e9));
    skew.plan->ep = 2;
    skew.plan->moe_imbalance_percent = 150;
    skew.plan->micro_batch_size = 1;
    skew.plan->global_batch_size = 4;
    skew.plan->collective_algorithm = ALGORITHM_RING;
    run_simulate(&skew);
    Run padded = moe_run(2, 150, 1, 1);
    const Metrics *e = &even.rep.metrics, *s = &skew.rep.metrics, *p = &padded.rep.metrics;
    ck_assert_double_eq(s->model_flops, e->model_flops);
    ck_assert_double_eq(p->model_flops, e->model_flops);
    ck_assert_double_gt(s->step_time_s, e->step_time_s);
    ck_assert_rel(s->hardware_flops, e->hardware_flops, 1e-12);
    /* the experts' GEMMs per layer and sequence: forward 2 (s k) h 2 f_e
     * (SwiGLU's gate and up) + 2 (s k) f_e h (down), 6 (s k) h f_e, x 3
     * with the backward; L layers, 4 sequences; a half more of them padded */
    double experts = 3.0 * 6 * S * K * H * FE * L * 4;
    ck_assert_rel(p->hardware_flops - e->hardware_flops, 0.5 * experts, 1e-9);
    run_free(&even);
    run_free(&skew);
    run_free(&padded);
}
END_TEST

START_TEST(expert_gradients_over_edp)
{
    const int ep = 2, d = 4;
    Run run = moe_run(ep, 0, 1, 1);
    double experts = L * transformer_layer_expert_params(run.model, 1, ep); /* a rank's */
    double dense =
        transformer_params(run.model) - L * transformer_layer_expert_params(run.model, 1, 1);
    double edp = d / ep;
    const CommStat *ar = &run.rep.metrics.comm[TAG_DP][COLL_ALL_REDUCE];
    ck_assert_rel(ar->bytes, 2.0 * (d - 1) / d * 4 * dense + 2 * (edp - 1) / edp * 4 * experts,
                  1e-12);
    /* bf16 parameters: the dense ones and this rank's E / ep experts */
    ck_assert_rel(run.rep.metrics.peak_split[MEM_PARAMS], 2 * (dense + experts), 1e-12);
    run_free(&run);
}
END_TEST

START_TEST(model_flops_from_active_experts)
{
    ModelSpec *m = moe_model();
    ModelSpec dense = *m;
    dense.experts = 0;
    dense.ffn_hidden_size = K * FE; /* the same active FFN */
    double router = 3 * L * 2.0 * S * H * E; /* per sequence, forward and backward */
    ck_assert_rel(transformer_model_flops(m, 1), transformer_model_flops(&dense, 1) + router,
                  1e-12);
    model_spec_free(m);
}
END_TEST

/* A model with experts 1 is dense: the same replay, to the byte. */
START_TEST(one_expert_is_dense)
{
    double step[2], peak[2];
    for (int i = 0; i < 2; i++) {
        Run run = run_new(test_gpt(L, H, A, V, S), test_cluster(1, 4, 300e9, 25e9));
        run.model->experts = i;
        run.model->experts_per_token = 1;
        run.plan->global_batch_size = 8;
        run_simulate(&run);
        step[i] = run.rep.metrics.step_time_s;
        peak[i] = run.rep.metrics.peak_bytes;
        run_free(&run);
    }
    ck_assert_double_eq(step[1], step[0]);
    ck_assert_double_eq(peak[1], peak[0]);
}
END_TEST

/* ZeRO with experts (states.h; Megatron-Core's distributed optimizer, which
 * keeps a separate one for the expert parameters over the
 * expert-data-parallel group). A GPU holds D dense parameters, replicated
 * over d = dp = 4 ranks, and X = L x E / ep routed experts' parameters,
 * replicated over d_e = d / ep. Per parameter 2 bytes of bf16 parameters,
 * 4 of fp32 gradients (Megatron-LM's main gradients) and 12 of Adam states
 * (Rajbhandari et al. 2020, section 3); a state that stage z shards takes
 * D / d + X / d_e parameters' worth, else D + X:
 *   - stage 1 shards the optimizer states, 2 also the gradients, 3 also the
 *     parameters;
 *   - a ring reduce-scatter or all-gather of S bytes over n ranks sends
 *     (n - 1)/n S (section 7.1; net/collective.c), the dense part over d,
 *     the experts' over d_e (nothing when d_e = 1), each its own call,
 *     all of them under TAG_ZERO;
 *   - gradients: stage 1 reduce-scatters once per step, from stage 2 once
 *     per micro-batch (m): 4 D (d - 1)/d + 4 X (d_e - 1)/d_e each time;
 *   - parameters: stages 1 and 2 all-gather 2 D (d - 1)/d + 2 X (d_e -
 *     1)/d_e after the optimizer; stage 3 gathers each segment before its
 *     forward and its backward, 2 m times the parameters the compute uses,
 *     the dense ones with the tied head's word embedding, D + V h;
 *   - no data-parallel all-reduce remains.
 * With ep = 1, d_e = d: a dense model's ZeRO over all D + X. */
START_TEST(zero_with_experts)
{
    const int m = 2, d = 4;
    for (int ep = 1; ep <= 4; ep *= 2) {
        for (int stage = 1; stage <= 3; stage++) {
            ModelSpec *model = moe_model();
            double x = L * transformer_layer_expert_params(model, 1, ep);
            double dense =
                transformer_params(model) - L * transformer_layer_expert_params(model, 1, 1);
            double de = (double)d / ep;
            Run run = run_new(model, test_cluster(1, 4, 300e9, 25e9));
            run.plan->ep = ep;
            run.plan->zero_stage = stage;
            run.plan->global_batch_size = d * m;
            run.plan->collective_algorithm = ALGORITHM_RING;
            run_simulate(&run);
            const Metrics *mx = &run.rep.metrics;
            double whole = dense + x, shard = dense / d + x / de;
            ck_assert_rel(mx->peak_split[MEM_PARAMS], 2 * (stage >= 3 ? shard : whole), 1e-12);
            ck_assert_rel(mx->peak_split[MEM_GRADS], 4 * (stage >= 2 ? shard : whole), 1e-12);
            ck_assert_rel(mx->peak_split[MEM_OPTIMIZER], 12 * shard, 1e-12);
            /* (n - 1)/n of the dense and of the experts' parameters */
            double ring_dense = (d - 1.0) / d * dense, ring_x = (de - 1) / de * x;
            const CommStat *rs = &mx->comm[TAG_ZERO][COLL_REDUCE_SCATTER];
            ck_assert_rel(rs->bytes, (stage >= 2 ? m : 1) * 4 * (ring_dense + ring_x), 1e-12);
            const CommStat *ag = &mx->comm[TAG_ZERO][COLL_ALL_GATHER];
            int apart = ep > 1 && de > 1; /* an experts' call per gather */
            if (stage < 3) {
                /* overlapped with the next forward (the default): a gather
                 * per segment (embedding, layers, head), each layer's
                 * experts apart; else one after the optimizer */
                ck_assert_int_eq(ag->count, L + 2 + apart * L);
                ck_assert_rel(ag->bytes, 2 * (ring_dense + ring_x), 1e-12);
                run_free(&run);
                run = run_new(moe_model(), test_cluster(1, 4, 300e9, 25e9));
                run.plan->ep = ep;
                run.plan->zero_stage = stage;
                run.plan->global_batch_size = d * m;
                run.plan->collective_algorithm = ALGORITHM_RING;
                run.plan->overlap_param_gather = FALSE;
                run_simulate(&run);
                ag = &run.rep.metrics.comm[TAG_ZERO][COLL_ALL_GATHER];
                ck_assert_int_eq(ag->count, 1 + apart);
                ck_assert_rel(ag->bytes, 2 * (ring_dense + ring_x), 1e-12);
            } else {
                double words = (double)V * H;
                ck_assert_int_eq(ag->count, 2 * m * (L + 2 + apart * L));
                ck_assert_rel(ag->bytes, 2 * m * 2 * ((d - 1.0) / d * (dense + words) + ring_x),
                              1e-12);
            }
            ck_assert_int_eq(mx->comm[TAG_DP][COLL_ALL_REDUCE].count, 0);
            run_free(&run);
        }
    }
}
END_TEST

/* Every other layer a MoE layer (moe_layer_frequency 2: layers 0, 2, ...):
 * half the layers route tokens, so half the all-to-alls of the model whose
 * every layer does, m x L / 2 x 4. */
START_TEST(every_other_layer_routes)
{
    const int m = 2, ep = 2;
    ModelSpec *model = moe_model();
    model->layers = 2 * L;
    model->moe_layer_frequency = 2;
    Run run = model_run(model, ep, 0, m, 1);
    const CommStat *x = &run.rep.metrics.comm[TAG_EP][COLL_ALL_TO_ALL];
    ck_assert_int_eq(x->count, m * L * 4);
    ck_assert_rel(x->bytes, m * L * 4 * (ep - 1.0) / ep * 2.0 * S * K * H, 1e-12);
    run_free(&run);
}
END_TEST

/* DeepSeek-V2-Lite at s = 1024 over ep 4: each of its 26 MoE layers (of
 * 27: the first is dense) routes tokens, 4 all-to-alls per micro-batch.
 * Its model FLOPs per sequence, 3x the forward GEMMs (docs/model.md,
 * "Compute"), as Megatron-Bridge counts them (flop_utils.py,
 * num_floating_point_operations, its MLA branch without q_lora_rank):
 * per layer its latent attention (h = 2048, 16 heads, kv_lora_rank 512,
 * QK heads of 128 + 64, V heads of 128): Q's projection 2sh(16 x 192),
 * the KV down-projection with the rotary key 2sh(512 + 64), the KV
 * up-projection 2s 512 (16 x 256), QK^T 2s^2 (16 x 192) and score x V
 * 2s^2 (16 x 128), the output projection 2s (16 x 128) h, the KV
 * latent's norm 2s 512 (Bridge's "+ 1"); the dense layer's SwiGLU MLP
 * 6shf (f 10944); each MoE layer's router 2shE (E 64) and 6 + 2 experts
 * of 6sh f_e (f_e 1408); the logits 2shV (V 102400). */
START_TEST(deepseek_v2_lite_simulates)
{
    ModelSpec *model = hf("deepseek-v2-lite-hf.json");
    model->seq_length = 1024;
    double s = 1024, h = 2048, v = 102400;
    double attention = 2 * s * h * 16 * 192 + 2 * s * h * 576 + 2 * s * 512 * 16 * 256 +
                       2 * s * s * 16 * 192 + 2 * s * s * 16 * 128 + 2 * s * 16 * 128 * h +
                       2 * s * 512;
    double moe = 2 * s * h * 64 + (6 + 2) * 6 * s * h * 1408;
    double forward = 27 * attention + 6 * s * h * 10944 + 26 * moe + 2 * s * h * v;
    ck_assert_rel(transformer_model_flops(model, 1), 3 * forward, 1e-12);
    const int m = 2;
    Run run = model_run(model, 4, 0, m, 1);
    ck_assert_int_eq(run.rep.metrics.comm[TAG_EP][COLL_ALL_TO_ALL].count, m * 26 * 4);
    ck_assert(run.rep.metrics.step_time_s > 0);
    run_free(&run);
}
END_TEST

/* Qwen3 235B-A22B (models/hf/qwen3-235b-a22b.json) as Megatron-Bridge
 * runs it on 256 H100s (32 DGX nodes) in its performance summary, FP8
 * (1,611 to 1,712 tokens/s a GPU in releases 25.11 to 26.04), with the
 * settings of its recipe (perf_recipes/qwen/h100/qwen3_moe.py,
 * qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_config, over
 * recipes/qwen/h100/qwen3_moe.py): TP 2, PP 8, VP 4, EP 32 with expert
 * tensor parallelism 1 (MoE parallel folding: the EP group takes the tp x
 * dp = 32 ranks of a stage), sequence parallelism, micro-batch 1, global
 * batch 8,192 of 4,096 tokens, no recomputation, the distributed
 * optimizer with fp32 states, bf16 gradient reduction, FP8 current
 * scaling with its parameters gathered in FP8, the all-to-all dispatcher,
 * Transformer Engine's cross-entropy, the embedding and the loss counted
 * as layers in the pipeline split (94 + 2 = 96, 3 a chunk). It fits in
 * 80 GiB. By hand, a middle stage's 12 layers on one GPU:
 *   - experts: 128 / 32 = 4 a layer, whole (etp 1), each 3 h f_e =
 *     3 x 4096 x 1536 = 18,874,368: Psi_X = 12 x 4 x 18,874,368 =
 *     905,969,664;
 *   - the rest, split over tp 2: Q and O 2 x 4096 x 8192 / 2, K and V
 *     2 x 4096 x 512 / 2, the Q and K norms 256, two RMSNorms 8,192, the
 *     router 4096 x 128 (replicated): Psi_D = 12 x 36,184,320 =
 *     434,211,840;
 *   - parameters gathered in FP8, 1 byte each; bf16 gradients, 2; Adam's
 *     12 bytes sharded over the dense rest's 16 data-parallel ranks and the
 *     experts' tp x dp / (etp x ep) = 1 expert-data-parallel rank:
 *     12 (Psi_X + Psi_D / 16) = 11,197,294,848 bytes. */
START_TEST(qwen3_235b_published_plan_fits)
{
    static const struct {
        PlanField field;
        const char *value;
    } recipe[] = {
        {PLAN_TP, "2"},
        {PLAN_PP, "8"},
        {PLAN_SCHEDULE, "interleaved"},
        {PLAN_VIRTUAL_STAGES, "4"},
        {PLAN_EP, "32"},
        {PLAN_ETP, "1"},
        {PLAN_SEQUENCE_PARALLEL, "true"},
        {PLAN_MICRO_BATCH_SIZE, "1"},
        {PLAN_GLOBAL_BATCH_SIZE, "8192"},
        {PLAN_ZERO_STAGE, "1"},
        {PLAN_GRAD_ACCUM_DTYPE, "bf16"},
        {PLAN_DTYPE, "fp8"},
        {PLAN_FP8_RECIPE, "tensorwise"},
        {PLAN_FP8_PARAM_GATHER, "true"},
        {PLAN_MOE_DISPATCHER, "all_to_all"},
        {PLAN_CE_FUSION, "te"},
        {PLAN_EMBEDDING_AS_LAYER, "true"},
        {PLAN_LOSS_AS_LAYER, "true"},
    };
    Run run = run_new(test_shipped_model("models/hf", "qwen3-235b-a22b.json"),
                      test_shipped_cluster("dgx-h100.json", 32));
    run.model->seq_length = 4096;
    for (gsize i = 0; i < G_N_ELEMENTS(recipe); i++)
        ck_assert(plan_spec_set(run.plan, recipe[i].field, recipe[i].value, "recipe", NULL));
    run_simulate(&run);
    const Metrics *mt = &run.rep.metrics;
    ck_assert_int_eq(run.plan->dp, 16);
    ck_assert_int_eq(mt->n_stages, 8);
    ck_assert(mt->stages[0].embedding && mt->stages[0].layers == 11);
    ck_assert(mt->stages[7].head && mt->stages[7].layers == 11);
    const StageStat *mid = &mt->stages[1];
    ck_assert_int_eq(mid->layers, 12);
    double experts = 12 * 4 * 3 * 4096.0 * 1536, rest = 12 * 36184320.0;
    ck_assert_double_eq(experts, 905969664);
    ck_assert_double_eq(mid->peak_split[MEM_PARAMS], experts + rest);
    ck_assert_double_eq(mid->peak_split[MEM_GRADS], 2 * (experts + rest));
    ck_assert_double_eq(mid->peak_split[MEM_OPTIMIZER], 12 * (experts + rest / 16));
    ck_assert_double_eq(mid->peak_split[MEM_OPTIMIZER], 11197294848.0);
    ck_assert(mt->fits);
    ck_assert_msg(mt->peak_bytes < 80 * 1073741824.0, "%.2f GiB", mt->peak_bytes / 1073741824.0);
    run_free(&run);
}
END_TEST

Suite *suite_moe(void)
{
    Suite *s = suite_create("moe");
    TCase *tc = tcase_create("moe");
    tcase_add_test(tc, mixtral_parameters);
    tcase_add_test(tc, deepseek_v2_lite_parameters);
    tcase_add_test(tc, all_to_all_bytes);
    tcase_add_test(tc, hardware_flops_leave_out_the_imbalance);
    tcase_add_test(tc, expert_gradients_over_edp);
    tcase_add_test(tc, zero_with_experts);
    tcase_add_test(tc, model_flops_from_active_experts);
    tcase_add_test(tc, one_expert_is_dense);
    tcase_add_test(tc, every_other_layer_routes);
    tcase_add_test(tc, deepseek_v2_lite_simulates);
    tcase_add_test(tc, qwen3_235b_published_plan_fits);
    tcase_add_test(tc, shared_expert_beside_the_dispatch);
    tcase_add_test(tc, shared_overlap_needs_ep_and_shared_experts);
    tcase_add_test(tc, combined_overlap_hides_the_exchanges);
    tcase_add_test(tc, combined_overlap_rules);
    tcase_add_test(tc, flex_dispatch_deduplicates);
    suite_add_tcase(s, tc);
    return s;
}
