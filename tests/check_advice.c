/* check_advice.c: the changes advised to a plan that does not fit, each
 * pasted onto the plan as a user would and replayed on its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/advice.h"
#include "cost/transformer.h"
#include "testutil.h"

/* Applies the flags of `change` ("--tp 4 --sequence-parallel") to `plan`
 * as the command line would, and its --nodes, if any, to `cluster`. */
static void apply_change(PlanSpec *plan, ClusterSpec *cluster, const char *change)
{
    g_auto(GStrv) words = g_strsplit(change, " ", -1);
    for (char **w = words; *w; w++) {
        if (strcmp(*w, "--nodes") == 0) {
            cluster->nodes = atoi(*++w);
            continue;
        }
        gboolean negated = g_str_has_prefix(*w, "--no-");
        const char *flag = *w + (negated ? 5 : 2);
        int f = 0;
        while (f < PLAN_N_FIELDS && strcmp(plan_fields[f].flag, flag) != 0)
            f++;
        ck_assert_msg(f < PLAN_N_FIELDS, "unknown flag %s in \"%s\"", *w, change);
        const char *value = plan_fields[f].kind == FIELD_BOOL ? (negated ? "false" : "true") : *++w;
        ck_assert_ptr_nonnull(value);
        ck_assert(plan_spec_set(plan, (PlanField)f, value, *w, NULL));
    }
}

/* `model` on one DGX A100 node at micro-batch `mbs`, a global batch of 64
 * fixed (as plansim's default plan fixes one, CLI_DEFAULT_PLAN), replayed:
 * a plan that does not fit. */
static Run not_fitting(const char *model, int mbs)
{
    Run c =
        run_new(test_shipped_model("models", model), test_shipped_cluster("dgx-a100-80gb.json", 1));
    c.plan->micro_batch_size = mbs;
    c.plan->global_batch_size = 64;
    run_simulate(&c);
    ck_assert(!c.rep.metrics.fits);
    return c;
}

/* Every piece of advice for `c` (not_fitting's at micro-batch `mbs`) is
 * verified: its change, `least` to `most` flags, pasted onto the plan as
 * given (micro-batch and global batch) fits when replayed alone, with the
 * step time and peak advised; and the list is fastest first. Returns the
 * changes, for the test to read (advice_clear frees them); `partial`:
 * whether candidates too big for the budget may be left out. */
static int check_advice(const Run *c, int mbs, int least, int most, gboolean partial,
                        ReportAdvice advice[ADVICE_MAX])
{
    gboolean left_out;
    int n = advice_find(c->model, c->cluster, c->plan, advice, &left_out);
    ck_assert(partial || !left_out); /* small plans: every candidate within the budget */
    ck_assert_int_ge(n, 1);
    ck_assert_int_le(n, ADVICE_MAX);
    for (int i = 0; i < n; i++) {
        g_autoptr(PlanSpec) plan = plan_spec_new();
        ClusterSpec cluster = *c->cluster;
        plan->micro_batch_size = mbs;
        plan->global_batch_size = c->plan->global_batch_size;
        apply_change(plan, &cluster, advice[i].change);
        Report alone;
        test_resolve(plan, c->model, &cluster);
        ck_assert(simulate_run(c->model, &cluster, plan, &alone, NULL));
        ck_assert_msg(alone.metrics.fits, "%s does not fit", advice[i].change);
        ck_assert_double_eq(alone.metrics.step_time_s, advice[i].step_time_s);
        ck_assert_double_eq(alone.metrics.peak_bytes, advice[i].peak_bytes);
        int flags = 0;
        for (const char *p = advice[i].change; (p = strstr(p, "--")); p += 2)
            flags++;
        ck_assert_int_ge(flags, least);
        ck_assert_int_le(flags, most);
        if (i > 0)
            ck_assert_double_le(advice[i - 1].step_time_s, advice[i].step_time_s);
        report_clear(&alone);
    }
    return n;
}

/* Llama-2 7B on one DGX A100 node, ZeRO-0, micro-batch 4: its model states
 * alone, 16 bytes per parameter (2 + 2 + 12, mixed-precision Adam,
 * Rajbhandari et al. 2020), already exceed the 80 GiB, so it does not fit;
 * single changes (more tensor parallelism) and pairs do; the 13B's
 * needs two. */
START_TEST(advice_for_llama2_7b_fits_and_is_ordered)
{
    Run c = not_fitting("llama2-7b.json", 4);
    ck_assert_double_gt(c.rep.metrics.peak_bytes, 16 * transformer_params(c.model));
    ReportAdvice advice[ADVICE_MAX];
    advice_clear(advice, check_advice(&c, 4, 1, 2, FALSE, advice));
    run_free(&c);

    /* Llama-2 13B, micro-batch 8: no single change fits (its activations
     * need a smaller micro-batch or more model parallelism, and its states
     * sharding), so only pairs are advised. */
    c = not_fitting("llama2-13b.json", 8);
    advice_clear(advice, check_advice(&c, 8, 2, 2, FALSE, advice));
    run_free(&c);
}
END_TEST

/* Llama 2 70B on one node (issue 21): 16 bytes a parameter of model
 * states over 8 GPUs is 138 GB each, so no one or two changes fit; ZeRO-3
 * (params and gradients sharded, 6 B a parameter, 52 GB), the optimizer's
 * fp32 states on the host and full recomputation (the activations of one
 * layer boundary a layer) do, three changes, found by the beam. The
 * recomputation advised is of the fewest layers that fit (Megatron-LM's
 * --recompute-num-layers, fewer replaying less): N fits (check_advice
 * replays it), and N - 1, replayed here, does not. A recomputation
 * counts as one change, its layers' flag beside it. */
START_TEST(advice_searches_deeper)
{
    static const char deeper[] = "--zero-stage 3 --offload optimizer --recompute full";
    Run c = not_fitting("llama2-70b.json", 1);
    ReportAdvice advice[ADVICE_MAX];
    int n = check_advice(&c, 1, 3, ADVICE_DEPTH + 1, TRUE, advice);
    int layers = 0;
    for (int i = 0; i < n; i++)
        if (g_str_has_prefix(advice[i].change, deeper))
            ck_assert_int_eq(sscanf(advice[i].change + strlen(deeper), " --recompute-num-layers %d",
                                    &layers),
                             1);
    ck_assert_msg(layers > 0, "first advice: %s", advice[0].change);
    if (layers > 1) { /* one layer is the fewest there are */
        g_autofree char *fewer =
            g_strdup_printf("%s --recompute-num-layers %d", deeper, layers - 1);
        g_autoptr(PlanSpec) plan = plan_spec_new();
        plan->micro_batch_size = 1;
        plan->global_batch_size = c.plan->global_batch_size;
        ClusterSpec cluster = *c.cluster;
        apply_change(plan, &cluster, fewer);
        Report rep;
        test_resolve(plan, c.model, &cluster);
        ck_assert(simulate_run(c.model, &cluster, plan, &rep, NULL));
        ck_assert_msg(!rep.metrics.fits, "%s fits", fewer);
        report_clear(&rep);
    }
    advice_clear(advice, n);
    run_free(&c);
}
END_TEST

/* Llama 3 405B on 2 nodes: 3.2 TB of bf16 weights, gradients and host
 * states do not fit 16 GPUs of 80 GiB whatever the plan; the advice asks
 * for more nodes, with the changes that fit there, each verified on them.
 * With a batch of one micro-batch (16 sequences on dp 16) the plan itself
 * is not valid on more nodes (dp 32 does not divide 16), and changes that
 * keep dp are found all the same. */
START_TEST(advice_asks_for_more_nodes)
{
    static const int batches[] = {64, 16};
    for (gsize b = 0; b < G_N_ELEMENTS(batches); b++) {
        Run c = run_new(test_shipped_model("models", "llama3-405b.json"),
                        test_shipped_cluster("dgx-a100-80gb.json", 2));
        c.plan->global_batch_size = batches[b];
        run_simulate(&c);
        ck_assert(!c.rep.metrics.fits);
        ReportAdvice advice[ADVICE_MAX];
        /* --nodes, and each change a flag (a recomputation of some layers two) */
        int n = check_advice(&c, 1, 1, ADVICE_DEPTH + 2, TRUE, advice);
        for (int i = 0; i < n; i++)
            ck_assert_msg(g_str_has_prefix(advice[i].change, "--nodes "), "%s", advice[i].change);
        advice_clear(advice, n);
        run_free(&c);
    }
}
END_TEST

/* The report: a plan that does not fit says so on its first line, then
 * the advice; JSON carries it as a list; without advice looked for, no
 * list. */
START_TEST(report_leads_with_the_fit)
{
    Run c = not_fitting("llama2-7b.json", 4);
    ReportAdvice advice[] = {{(char *)"--zero-stage 3", 1.5, 70 * 1073741824.0}};
    c.rep.advised = TRUE;
    c.rep.advice = advice;
    c.rep.n_advice = 1;
    g_autofree char *text = report_render(&c.rep, FORMAT_TEXT, FALSE);
    g_autofree char *first = g_strdup_printf("DOES NOT FIT: peak %.2f GiB of 80.00 GiB on rank 0\n",
                                             c.rep.metrics.peak_bytes / 1073741824.0);
    ck_assert_msg(g_str_has_prefix(text, first), "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "to fit, try:\n  --zero-stage 3"));
    g_autofree char *json = report_render(&c.rep, FORMAT_JSON, FALSE);
    ck_assert_ptr_nonnull(strstr(json, "\"advice\": [\n"));
    ck_assert_ptr_nonnull(
        strstr(json, "{\"change\": \"--zero-stage 3\", \"step_time_s\": 1.5, \"peak_bytes\": "
                     "75161927680}"));
    c.rep.advised = FALSE;
    c.rep.n_advice = 0;
    g_autofree char *plain = report_render(&c.rep, FORMAT_JSON, FALSE);
    ck_assert_ptr_null(strstr(plain, "\"advice\""));
    run_free(&c);
}
END_TEST

Suite *suite_advice(void)
{
    Suite *s = suite_create("advice");
    TCase *tc = tcase_create("advice");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, advice_for_llama2_7b_fits_and_is_ordered);
    tcase_add_test(tc, advice_searches_deeper);
    tcase_add_test(tc, advice_asks_for_more_nodes);
    tcase_add_test(tc, report_leads_with_the_fit);
    suite_add_tcase(s, tc);
    return s;
}
