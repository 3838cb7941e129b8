/* testrandom.c: random steps, and the difference of two reports
 * (testrandom.h). */
#include "testrandom.h"

#include <math.h>
#include <string.h>

#include "cost/transformer.h"
#include "strategy/strategy.h"

char *random_difference(const cJSON *a, const cJSON *b, const char *path,
                        const char *const *skipped, double rel)
{
    if (cJSON_IsObject(a)) {
        if (!cJSON_IsObject(b) || cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
            return g_strdup_printf("%s: not the same object", path);
        const cJSON *x;
        cJSON_ArrayForEach(x, a)
        {
            if (g_strv_contains(skipped, x->string))
                continue;
            g_autofree char *at = g_strdup_printf("%s.%s", path, x->string);
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
            char *why =
                y ? random_difference(x, y, at, skipped, rel) : g_strdup_printf("%s: missing", at);
            if (why)
                return why;
        }
        return NULL;
    }
    if (cJSON_IsArray(a)) {
        if (!cJSON_IsArray(b) || cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
            return g_strdup_printf("%s: lists of %d and %d", path, cJSON_GetArraySize(a),
                                   cJSON_GetArraySize(b));
        int i = 0;
        for (const cJSON *x = a->child, *y = b->child; x; x = x->next, y = y->next, i++) {
            g_autofree char *at = g_strdup_printf("%s[%d]", path, i);
            char *why = random_difference(x, y, at, skipped, rel);
            if (why)
                return why;
        }
        return NULL;
    }
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) {
        double x = a->valuedouble, y = b->valuedouble;
        if (fabs(x - y) <= rel * MAX(fabs(x), fabs(y)))
            return NULL;
        return g_strdup_printf("%s: %.17g, %.17g", path, x, y);
    }
    g_autofree char *x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
    return strcmp(x, y) == 0 ? NULL : g_strdup_printf("%s: %s, %s", path, x, y);
}

int random_pick(GRand *rng, const int *values, int n)
{
    return values[g_rand_int_range(rng, 0, n)];
}

ModelSpec *random_model(GRand *rng)
{
    ModelSpec *m = test_gpt(PICK(rng, 4, 8), 256, 8, 512, 128);
    m->experts = PICK(rng, 0, 4); /* a mixture of experts, half the time */
    m->experts_per_token = PICK(rng, 1, 2);
    m->moe_ffn_hidden_size = 256;
    /* mixed: dense layers first (DeepSeek's), or every other layer MoE */
    m->moe_layer_frequency = PICK(rng, 1, 1, 2);
    m->first_dense_layers = PICK(rng, 0, 0, 1);
    return m;
}

ClusterSpec *random_cluster(GRand *rng)
{
    ClusterSpec *c =
        test_cluster(PICK(rng, 1, 1, 2, 2, 3, 4, 8, 16, 64), PICK(rng, 1, 2, 4, 8, 8), 300e9, 25e9);
    c->intra.latency_s = 2e-6;
    c->inter.latency_s = 5e-6;
    c->nics_per_node = g_rand_int_range(rng, 1, 9);
    c->oversubscription = PICK(rng, 1, 1, 2, 4);
    c->gpu.launch_s = 2e-6;
    c->gpu.comm_interference = PICK(rng, 0, 0, 1) * 0.1;
    c->storage_Bps = PICK(rng, 0, 1, 10) * 1e9;
    /* FP8 and the host, for dtype fp8 and offload (offload.h) */
    c->gpu.peak_fp8_flops = 2 * c->gpu.peak_flops;
    c->gpu.pcie_Bps = 25e9;
    c->host_memory_bytes = 2048 * 1073741824.0;
    c->cpu_adam_params_s = 4e9;
    /* the host path (spec/cluster.h): traffic between nodes through the
     * host links or not, and switch uplinks and CPU memories that GPUs
     * share in order (some partly), narrower than the host links they
     * gather */
    c->host_path.nic_via_host = g_rand_boolean(rng);
    const int per_switch = PICK(rng, 0, 1, 2, 3), per_cpu = PICK(rng, 0, 2, 4, 8);
    c->host_path.shared[HOST_SWITCH] = (HostResource){.gpus = MIN(per_switch, c->gpus_per_node),
                                                      .bandwidth_Bps = per_switch ? 20e9 : 0};
    c->host_path.shared[HOST_CPU] =
        (HostResource){.gpus = MIN(per_cpu, c->gpus_per_node), .bandwidth_Bps = per_cpu ? 40e9 : 0};
    return c;
}

void random_plan(GRand *rng, const ModelSpec *m, const ClusterSpec *c, PlanSpec *p, gboolean many)
{
    int gpus = cluster_spec_gpus(c);
    p->tp = PICK(rng, 1, 1, 2, 4, 8);
    p->pp = PICK(rng, 1, 1, 2, 4);
    p->cp = PICK(rng, 1, 1, 2, 4);
    p->cp_algorithm = (CpAlgorithm)g_rand_int_range(rng, 0, 2);
    int most = MAX(1, gpus / (p->tp * p->cp * p->pp));
    /* mostly every GPU, which keeps the nodes whole and the symmetry */
    p->dp = g_rand_boolean(rng) || most == 1 ? most : g_rand_int_range(rng, 1, most + 1);
    p->micro_batch_size = PICK(rng, 1, 2);
    int micro_batches = many ? PICK(rng, 12, 16, 24, 40) : PICK(rng, 1, 2, 4);
    p->schedule = (Schedule)g_rand_int_range(rng, 0, SCHEDULES);
    if (p->schedule == SCHEDULE_INTERLEAVED) {
        p->virtual_stages = 2;
        micro_batches = p->pp * (many ? PICK(rng, 6, 8, 12) : PICK(rng, 1, 2));
    }
    if (p->schedule == SCHEDULE_ZBH2) /* its least (schedule_zbh2.c) */
        micro_batches = MAX(micro_batches, 2 * p->pp - 1);
    if (p->schedule == SCHEDULE_DUALPIPEV) { /* a V of two chunks, 2 pp at least */
        p->virtual_stages = 2;
        micro_batches = MAX(micro_batches, 2 * p->pp);
    }
    p->global_batch_size = p->micro_batch_size * p->dp * micro_batches;
    p->zero_stage = g_rand_int_range(rng, 0, 4);
    p->sequence_parallel = p->tp > 1 && g_rand_boolean(rng);
    p->recompute = (Recompute)g_rand_int_range(rng, 0, 3);
    p->rank_order = (RankOrder)g_rand_int_range(rng, 0, RANK_ORDERS);
    p->overlap_grad_reduce = g_rand_boolean(rng);
    p->ddp_bucket_size = PICK(rng, 100000, 40000000);
    p->collective_algorithm =
        (CollAlgorithm)PICK(rng, ALGORITHM_AUTO, ALGORITHM_AUTO, ALGORITHM_RING, ALGORITHM_TREE,
                            ALGORITHM_HIERARCHICAL);
    p->link_contention = PICK(rng, 1, 1, 0);
    /* a data loader, slow enough to stall now and then (data_loader.h) */
    p->bytes_per_sample = PICK(rng, 0, 0, 1000000);
    /* experts over ep ranks of the data-parallel ones (expert_parallel.c) */
    if (transformer_moe(m)) {
        p->ep = PICK(rng, 1, 2, 4);
        /* and, folded, over tp's ranks too (expert tensor parallelism) */
        p->expert_tensor_parallel_size = PICK(rng, 0, 0, 1, 2);
        p->moe_capacity_percent = PICK(rng, 0, 0, 125);
        p->moe_imbalance_percent = PICK(rng, 100, 150);
        p->moe_dispatcher = (MoeDispatcher)g_rand_int_range(rng, 0, 2);
    }
    p->dtype = (Dtype)PICK(rng, DTYPE_BF16, DTYPE_FP8);
    p->offload =
        (Offload)PICK(rng, OFFLOAD_NONE, OFFLOAD_NONE, OFFLOAD_OPTIMIZER, OFFLOAD_ACTIVATIONS);
    if (p->offload == OFFLOAD_ACTIVATIONS) { /* no recomputation with it (offload.c) */
        p->recompute = RECOMPUTE_NONE;
        p->offload_layers = PICK(rng, 0, 1);
    }
}

RandomStep random_step(GRand *rng, gboolean many, int *tried, int most_tries)
{
    for (;;) {
        ck_assert_msg(++*tried < most_tries, "too few valid plans in %d draws", *tried);
        RandomStep s = {.m = random_model(rng), .c = random_cluster(rng), .plan = plan_spec_new()};
        random_plan(rng, s.m, s.c, s.plan, many);
        GError *error = NULL;
        if (plan_spec_resolve(s.plan, s.m, s.c, &error) && strategy_check(s.plan, s.m, &error))
            return s;
        g_clear_error(&error);
        plan_spec_free(s.plan);
        cluster_spec_free(s.c);
        model_spec_free(s.m);
    }
}

void random_step_clear(RandomStep *s)
{
    plan_spec_free(s->plan);
    cluster_spec_free(s->c);
    model_spec_free(s->m);
}
