/* check_calibruns.c: plansim calibrate --runs, and the profiles it
 * fitted against the published runs they were fitted to.
 *
 * topologies/runs/NAME.csv holds them (sources in topologies/SOURCES.md):
 * for the H100, Megatron-Core r0.8.0's BF16 weak-scaling table (rows
 * "mcore ...", model TFLOP/s per GPU), NeMo 24.07's FP8 performance
 * summary (rows "nemo ...", tokens/s per GPU) and Megatron-Bridge's
 * (rows "bridge ..."); for the A100 Korthikanti et al.'s Selene runs; for
 * DGX B200 and GB200 NVL72 Megatron-Bridge's. */
#include <math.h>
#include <string.h>

#include "app/calibruns.h"
#include "base/error.h"
#include "testutil.h"

static char *no_shipped(const char *cell, GError **error)
{
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: not a file next to the runs", cell);
    return NULL;
}

static CalibRuns *runs_load(const char *path)
{
    GError *error = NULL;
    CalibRuns *runs = calib_runs_load(path, no_shipped, &error);
    ck_assert_msg(runs, "%s", error ? error->message : "");
    return runs;
}

static RunsFit *fit_named(const ClusterSpec *base, const CalibRuns *runs, const char *names,
                          gboolean loo)
{
    int params[CALIB_RUNS_MAX_PARAMS], n;
    GError *error = NULL;
    ck_assert(calib_runs_params_parse(names, "--fit", params, &n, &error));
    ck_assert_msg(calib_runs_check(base, runs, n, &error), "%s", error ? error->message : "");
    return calib_runs_fit(base, runs, params, n, loo);
}

/* Mean and largest |error| of the runs whose name starts with `prefix`. */
static void table_errors(const CalibRuns *runs, const double *err, const char *prefix, double *mean,
                         double *max, int *n)
{
    *mean = *max = 0;
    *n = 0;
    for (guint i = 0; i < runs->runs->len; i++) {
        if (!g_str_has_prefix(g_array_index(runs->runs, CalibRun, i).name, prefix))
            continue;
        *mean += fabs(err[i]);
        *max = MAX(*max, fabs(err[i]));
        (*n)++;
    }
    *mean /= MAX(*n, 1);
}

/* The shipped dgx-h100 profile, as it is (no parameter freed), against
 * each table: Megatron-Core r0.8's and NeMo 24.07's (2024) and
 * Megatron-Bridge's (2025-26); and over all 32, issue 35's target, 5 %
 * mean and 10 % max a system. The tables' bounds are what the fit reaches
 * (docs/model.md, "Published runs"), a guard against its getting worse. */
START_TEST(shipped_h100_meets_the_targets)
{
    g_autofree char *csv = test_shipped("topologies/runs", "h100.csv");
    g_autoptr(CalibRuns) runs = runs_load(csv);
    g_autoptr(ClusterSpec) h100 = test_shipped_cluster("dgx-h100.json", 0);
    g_autoptr(RunsFit) fit = fit_named(h100, runs, "", TRUE);
    ck_assert_ptr_null(fit->loo); /* nothing fitted, nothing left out */
    static const struct {
        const char *prefix;
        int rows;
        double mean, max;
    } tables[] = {{"mcore ", 9, 0.045, 0.09},
                  {"nemo ", 10, 0.045, 0.09},
                  {"bridge ", 13, 0.065, 0.10},
                  {"", 32, 0.05, 0.10}};
    for (gsize t = 0; t < G_N_ELEMENTS(tables); t++) {
        double mean, max;
        int n;
        table_errors(runs, fit->error, tables[t].prefix, &mean, &max, &n);
        ck_assert_int_eq(n, tables[t].rows);
        ck_assert_msg(mean <= tables[t].mean && max <= tables[t].max,
                      "%s: mean |error| %.2f %%, max %.2f %%\n%s", tables[t].prefix, 100 * mean,
                      100 * max, fit->report);
    }
}
END_TEST

/* The sum over the runs of log(predicted / measured)^2, the fit's cost,
 * under `base` with gemm_sustained `g`; *unfit (when not NULL) the runs
 * that do not fit their GPUs' memory there. */
static double cost_at(const ClusterSpec *base, const CalibRuns *runs, double g, int *unfit)
{
    g_autoptr(ClusterSpec) c = cluster_spec_copy(base);
    c->gpu.gemm_sustained = g;
    g_autoptr(RunsFit) fit = fit_named(c, runs, "", FALSE);
    double cost = 0;
    for (int i = 0; i < fit->n; i++) {
        cost += log1p(fit->error[i]) * log1p(fit->error[i]);
        if (unfit)
            *unfit += !fit->fits[i];
    }
    return cost;
}

/* The shipped profiles are the fit: each differs from the microbenchmarks'
 * profile it was fitted from (topologies/runs/NAME-base.json, gemm_sustained
 * 1) in gemm_sustained alone, and the fit's cost over its runs is no lower
 * two units of the last digit shipped either side: the cost being about
 * quadratic near its minimum, the fit, calibrate --runs's minimum, lies
 * within a unit of the shipped value (which rounds it to 3 digits). Every
 * published run fits its GPUs' memory, as it did (issue 35), with the
 * settings its release's Megatron-Bridge gave it (release 25.09's 405B
 * FSDP plan on GB200 offloads 95 layers' activations). Three
 * predictions of the runs, not the fit's ten or so: the calibrate commands
 * of topologies/SOURCES.md refit them, and give the leave-one-out errors. */
START_TEST(fit_reproduces_the_shipped_profiles)
{
    static const struct {
        const char *runs, *base, *shipped;
    } gpus[] = {
        {"h100.csv", "dgx-h100-base.json", "dgx-h100.json"},
        {"a100.csv", "dgx-a100-80gb-base.json", "dgx-a100-80gb.json"},
        {"b200.csv", "dgx-b200-base.json", "dgx-b200.json"},
        {"gb200.csv", "gb200-nvl72-base.json", "gb200-nvl72.json"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(gpus); i++) {
        g_autofree char *csv = test_shipped("topologies/runs", gpus[i].runs);
        g_autofree char *base_path = test_shipped("topologies/runs", gpus[i].base);
        g_autoptr(CalibRuns) runs = runs_load(csv);
        GError *error = NULL;
        g_autoptr(ClusterSpec) base = cluster_spec_load(base_path, 0, &error);
        g_autoptr(ClusterSpec) shipped = test_shipped_cluster(gpus[i].shipped, 0);
        ck_assert(base);
        ck_assert_double_eq(gpu_gemm_sustained(&base->gpu), 1);
        int unfit = 0;
        double g = shipped->gpu.gemm_sustained, at = cost_at(base, runs, g, &unfit);
        ck_assert_msg(unfit == 0, "%s: %d runs do not fit", gpus[i].shipped, unfit);
        for (int side = -1; side <= 1; side += 2)
            ck_assert_msg(at <= cost_at(base, runs, g + side * 2e-3, NULL),
                          "%s: gemm_sustained %.4f is not the fit's (its cost falls toward %+g)",
                          gpus[i].shipped, g, side * 2e-3);
        /* everything else is the base's */
        GpuSpec a = base->gpu, b = shipped->gpu;
        a.gemm_sustained = b.gemm_sustained = 0;
        a.name = b.name = NULL;
        ck_assert(memcmp(&a, &b, sizeof a) == 0);
    }
}
END_TEST

/* Synthetic runs: measurements made by plansim itself under known values
 * of two parameters are fitted back to them, within 2 %. */
START_TEST(fit_recovers_known_parameters)
{
    g_autofree char *base_path = test_shipped("topologies/runs", "dgx-h100-base.json");
    GError *error = NULL;
    g_autoptr(ClusterSpec) base = cluster_spec_load(base_path, 0, &error);
    ck_assert(base);
    g_autoptr(ClusterSpec) known = cluster_spec_copy(base);
    known->gpu.gemm_sustained = 0.7;
    known->gpu.comm_interference = 0.2;
    /* four runs that lean on the two differently: tp 1 (no tp traffic), tp
     * 2, 4 and 8 (traffic beside the GEMMs), 8 GPUs to 96, each fitting its
     * GPUs with the distributed optimizer */
    static const char *const models[] = {"mcore-gpt-1.7b.json", "mcore-gpt-7.1b.json",
                                         "mcore-gpt-16b.json", "mcore-gpt-32b.json"};
    static const char *const plans[] = {
        "8,1,1,1,16,bf16,false,false,1",
        "16,2,1,2,32,bf16,true,true,1",
        "32,4,1,2,32,bf16,true,true,1",
        "96,8,1,1,24,bf16,true,true,1",
    };
    static const char header[] = "model,gpus,tp,pp,micro_batch_size,global_batch_size,dtype,"
                                 "sequence_parallel,tp_comm_overlap,zero_stage,step_s\n";
    GString *csv = g_string_new(header);
    for (gsize i = 0; i < G_N_ELEMENTS(plans); i++) {
        g_autofree char *model = test_shipped("topologies/runs", models[i]);
        g_string_append_printf(csv, "%s,%s,1\n", model, plans[i]);
    }
    /* the measurements: each run's step time under the known values
     * (the error against a step of 1 s is 1 / step - 1) */
    g_autofree char *probe_path = test_write_tmp(csv->str);
    g_autoptr(CalibRuns) probe = runs_load(probe_path);
    g_autoptr(RunsFit) truth = fit_named(known, probe, "", FALSE);
    g_string_assign(csv, header);
    for (gsize i = 0; i < G_N_ELEMENTS(plans); i++) {
        g_autofree char *model = test_shipped("topologies/runs", models[i]);
        g_string_append_printf(csv, "%s,%s,%.9g\n", model, plans[i], 1 / (1 + truth->error[i]));
    }
    g_autofree char *runs_path = test_write_tmp(csv->str);
    g_autoptr(CalibRuns) runs = runs_load(runs_path);
    g_autoptr(RunsFit) fit =
        fit_named(base, runs, "gemm_sustained,comm_compute_interference", FALSE);
    ck_assert_msg(fabs(fit->cluster->gpu.gemm_sustained / 0.7 - 1) <= 0.02 &&
                      fabs(fit->cluster->gpu.comm_interference / 0.2 - 1) <= 0.02,
                  "recovered gemm_sustained %.4f (0.7), comm_compute_interference %.4f (0.2)",
                  fit->cluster->gpu.gemm_sustained, fit->cluster->gpu.comm_interference);
    ck_assert(fit->max_error < 1e-3);
    /* both fitted, inside their ranges, the runs reproduced: nothing to warn of */
    ck_assert_msg(fit->warnings[0] == NULL, "%s", fit->warnings[0]);
    ck_assert_ptr_nonnull(strstr(fit->report, "gemm_sustained                      1.0000"));
    ck_assert_ptr_nonnull(strstr(fit->report, "fitted\n"));
    g_string_free(csv, TRUE);
    test_remove(g_steal_pointer(&probe_path));
    test_remove(g_steal_pointer(&runs_path));
}
END_TEST

/* A fit that cannot reproduce its runs says so: two runs of Llama-like
 * 1.7B on one H100 each, measured 10 times slower than the shipped profile
 * predicts. gemm_sustained can slow only the GEMMs, by at most 0.649 / 0.2
 * = 3.2 times, so it ends on its lower bound, 0.2, and the runs stay off
 * by more than 15 %; one GPU runs no collective, so no run depends on
 * comm_compute_interference (its Jacobian's column is 0): kept at the
 * profile's 0. One warning line each. */
START_TEST(fit_warns_of_a_bad_fit)
{
    g_autoptr(ClusterSpec) h100 = test_shipped_cluster("dgx-h100.json", 0);
    g_autofree char *model = test_shipped("topologies/runs", "mcore-gpt-1.7b.json");
    static const char header[] = "model,gpus,micro_batch_size,global_batch_size,step_s\n";
    g_autofree char *probe_csv =
        g_strdup_printf("%s%s,1,1,8,1\n%s,1,2,8,1\n", header, model, model);
    g_autofree char *probe_path = test_write_tmp(probe_csv);
    g_autoptr(CalibRuns) probe = runs_load(probe_path);
    g_autoptr(RunsFit) predicted = fit_named(h100, probe, "", FALSE);
    /* the error against a step of 1 s is 1 / step - 1 */
    g_autofree char *csv =
        g_strdup_printf("%s%s,1,1,8,%.9g\n%s,1,2,8,%.9g\n", header, model,
                        10 / (1 + predicted->error[0]), model, 10 / (1 + predicted->error[1]));
    g_autofree char *path = test_write_tmp(csv);
    g_autoptr(CalibRuns) runs = runs_load(path);
    g_autoptr(RunsFit) fit =
        fit_named(h100, runs, "gemm_sustained,comm_compute_interference", FALSE);
    ck_assert_double_eq(fit->cluster->gpu.gemm_sustained, 0.2);
    ck_assert_double_eq(fit->cluster->gpu.comm_interference, h100->gpu.comm_interference);
    static const char *const expected[] = {
        "gemm_sustained: fitted to 0.2, the lower end of its range (0.2 to 1)",
        "comm_compute_interference: no run depends on it (sensitivity 0): kept at the base's 0",
        ": mean |error| ",
    };
    ck_assert_int_eq(g_strv_length(fit->warnings), G_N_ELEMENTS(expected));
    for (gsize i = 0; i < G_N_ELEMENTS(expected); i++)
        ck_assert_msg(strstr(fit->warnings[i], expected[i]) && !strchr(fit->warnings[i], '\n'),
                      "warning %zu: %s", i, fit->warnings[i]);
    ck_assert_ptr_nonnull(strstr(fit->warnings[2], "(over 15 %)"));
    ck_assert_ptr_nonnull(strstr(fit->report, "comm_compute_interference           0.0000      "
                                              "0.0000  kept"));
    /* the profile's record says the same; what --fit did not name is given,
     * the microbenchmarks' parameters too (NVLS's: the H100 has it) */
    const ParamState *state = fit->cluster->calibration->state;
    ck_assert_int_eq(state[CLUSTER_PARAM_GEMM_SUSTAINED], PARAM_FITTED);
    ck_assert_int_eq(state[CLUSTER_PARAM_COMM_INTERFERENCE], PARAM_KEPT);
    ck_assert_int_eq(state[CLUSTER_PARAM_LAUNCH], PARAM_GIVEN);
    ck_assert_int_eq(state[CLUSTER_PARAM_NVLS_EFFICIENCY], PARAM_GIVEN);
    ck_assert_int_eq(state[CLUSTER_PARAM_GEMM_EFFICIENCY], PARAM_GIVEN);
    test_remove(g_steal_pointer(&probe_path));
    test_remove(g_steal_pointer(&path));
}
END_TEST

/* A run that does not fit its GPUs' memory under the model is named in
 * one warning (a published run did fit: its settings or the model are
 * wrong), and the report gives each run's peak: the 1.7B GPT of
 * Megatron-Core's table on one H100 with micro-batches of 64 sequences of
 * 4096 keeps 64 times a micro-batch's activations (Korthikanti's 34 s b h
 * a layer, 24 layers of h 2048: 1.6 TiB), where one of 1 fits. */
START_TEST(runs_that_do_not_fit_are_named)
{
    g_autoptr(ClusterSpec) h100 = test_shipped_cluster("dgx-h100.json", 0);
    g_autofree char *model = test_shipped("topologies/runs", "mcore-gpt-1.7b.json");
    g_autofree char *csv = g_strdup_printf(
        "name,model,gpus,micro_batch_size,global_batch_size,step_s\nsmall,%s,1,1,1,1\n"
        "large,%s,1,64,64,1\n",
        model, model);
    g_autofree char *path = test_write_tmp(csv);
    g_autoptr(CalibRuns) runs = runs_load(path);
    g_autoptr(RunsFit) fit = fit_named(h100, runs, "", FALSE);
    ck_assert(fit->fits[0] && !fit->fits[1]);
    ck_assert_double_gt(fit->peak_bytes[1], 34.0 * 4096 * 64 * 2048 * 24);
    gboolean named = FALSE;
    for (char **w = fit->warnings; *w; w++)
        named |= strstr(*w, "1 run does not fit") && strstr(*w, "line 3 (large") &&
                 !strstr(*w, "small");
    ck_assert_msg(named, "%s", fit->warnings[0] ? fit->warnings[0] : "no warning");
    ck_assert_ptr_nonnull(strstr(fit->report, "does not fit"));
    test_remove(g_steal_pointer(&path));
}
END_TEST

/* A row's gpus_per_node: the run used that many GPUs of each node, as
 * simulate --gpus-per-node runs it: tiny-gpt on 128 GPUs of two GB200
 * NVL72 racks, 64 of each, predicted at the step simulate replays (the
 * error against a step of 1 s is 1 / step - 1). A GPU count that is no
 * multiple of it, and more than a node's GPUs, are refused naming the row. */
START_TEST(rows_on_part_of_each_node)
{
    g_autoptr(ClusterSpec) gb200 = test_shipped_cluster("gb200-nvl72.json", 0);
    g_autofree char *model = test_shipped("models", "tiny-gpt.json");
    Run run = run_new(test_shipped_model("models", "tiny-gpt.json"),
                      test_shipped_cluster("gb200-nvl72.json", 2));
    ck_assert(cluster_spec_use_gpus_per_node(run.cluster, 64, "--gpus-per-node", NULL));
    run.plan->tp = 2;
    run.plan->global_batch_size = 64;
    run_simulate(&run);
    static const char header[] = "model,gpus,gpus_per_node,tp,global_batch_size,step_s\n";
    g_autofree char *csv = g_strdup_printf("%s%s,128,64,2,64,1\n", header, model);
    g_autofree char *path = test_write_tmp(csv);
    g_autoptr(CalibRuns) runs = runs_load(path);
    g_autoptr(RunsFit) predicted = fit_named(gb200, runs, "", FALSE);
    ck_assert_rel(1 / (1 + predicted->error[0]), run.rep.metrics.step_time_s, 1e-12);
    run_free(&run);
    static const struct {
        const char *row, *message;
    } refused[] = {{"100,64", "expected a multiple of its gpus_per_node, 64, got 100 GPUs"},
                   {"160,80", "column gpus_per_node: expected at most the 72 GPUs of a node"}};
    for (gsize k = 0; k < G_N_ELEMENTS(refused); k++) {
        g_autofree char *bad = g_strdup_printf("%s%s,%s,2,64,1\n", header, model, refused[k].row);
        g_autofree char *bad_path = test_write_tmp(bad);
        g_autoptr(CalibRuns) bad_runs = runs_load(bad_path);
        GError *error = NULL;
        ck_assert(!calib_runs_check(gb200, bad_runs, 0, &error));
        ck_assert_msg(strstr(error->message, refused[k].message), "%s", error->message);
        g_error_free(error);
        test_remove(g_steal_pointer(&bad_path));
    }
    test_remove(g_steal_pointer(&path));
}
END_TEST

/* More parameters than runs are refused, naming the file. */
START_TEST(more_parameters_than_runs_refused)
{
    g_autofree char *model = test_shipped("topologies/runs", "mcore-gpt-1.7b.json");
    g_autofree char *csv = g_strdup_printf("model,gpus,tokens_per_s_per_gpu\n%s,8,1000\n", model);
    g_autofree char *path = test_write_tmp(csv);
    g_autoptr(CalibRuns) runs = runs_load(path);
    g_autoptr(ClusterSpec) h100 = test_shipped_cluster("dgx-h100.json", 0);
    int params[CALIB_RUNS_MAX_PARAMS], n;
    GError *error = NULL;
    ck_assert(
        calib_runs_params_parse("gemm_sustained,kernel_launch_us", "--fit", params, &n, &error));
    ck_assert(!calib_runs_check(h100, runs, n, &error));
    ck_assert_msg(strstr(error->message, "at least as many runs as parameters"), "%s",
                  error->message);
    g_error_free(error);
    test_remove(g_steal_pointer(&path));
}
END_TEST

Suite *suite_calibruns(void)
{
    Suite *s = suite_create("calibruns");
    TCase *tc = tcase_create("H100");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, shipped_h100_meets_the_targets);
    tcase_add_test(tc, fit_reproduces_the_shipped_profiles);
    tcase_add_test(tc, fit_recovers_known_parameters);
    tcase_add_test(tc, fit_warns_of_a_bad_fit);
    tcase_add_test(tc, runs_that_do_not_fit_are_named);
    tcase_add_test(tc, more_parameters_than_runs_refused);
    tcase_add_test(tc, rows_on_part_of_each_node);
    suite_add_tcase(s, tc);
    return s;
}
