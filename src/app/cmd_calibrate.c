/* cmd_calibrate.c: plansim calibrate (cmd_calibrate.h), a cluster fitted
 * to nccl-tests output and GEMM timings (app/calibrate.c) or to measured
 * runs (app/calibruns.c). */
#include <stdio.h>
#include <string.h>

#include "app/cmd_calibrate.h"
#include "app/calibdata.h"
#include "app/calibrate.h"
#include "app/calibruns.h"
#include "app/cli.h"
#include "app/command.h"
#include "spec/cluster.h"
#include "base/error.h"
#include "base/text.h"

typedef struct {
    char *cluster, *gemm, *output, *runs, *fit;
    char **nccl;
} CalibrateArgs;

/* A run's model cell that is no file next to the runs: a shipped model. */
static char *run_model_path(const char *cell, GError **error)
{
    return cli_input_path(&cli_models, cell, NULL, error);
}

/* calibrate --runs: the GPU's parameters fitted to measured runs. */
static gboolean calibrate_runs(CalibrateArgs *a, const char *cluster_path, GError **error)
{
    int params[CALIB_RUNS_MAX_PARAMS], n_params;
    if (!calib_runs_params_parse(a->fit ? a->fit : CALIB_RUNS_DEFAULT_FIT, "--fit", params,
                                 &n_params, error))
        return FALSE;
    g_autoptr(ClusterSpec) base = cluster_spec_load(cluster_path, 0, error);
    g_autoptr(CalibRuns) runs = base ? calib_runs_load(a->runs, run_model_path, error) : NULL;
    if (!runs || !calib_runs_check(base, runs, n_params, error))
        return FALSE;
    g_autoptr(RunsFit) fit = calib_runs_fit(base, runs, params, n_params, TRUE);
    g_autofree char *json = cluster_spec_json(fit->cluster);
    if (!text_write_atomic(a->output, json, strlen(json), error))
        return FALSE;
    fputs(fit->report, strcmp(a->output, "-") == 0 ? stderr : stdout);
    calib_print_warnings(fit->warnings);
    return TRUE;
}

static gboolean calibrate(void *args, GError **error)
{
    CalibrateArgs *a = args;
    if (!a->output || (!a->nccl && !a->gemm && !a->runs)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "calibrate: expected -o FILE and at least one of --nccl-tests FILE, "
                    "--gemm FILE and --runs FILE, got %s",
                    a->output ? "no measurements" : "no -o");
        return FALSE;
    }
    if (a->runs && (a->nccl || a->gemm)) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT,
                    "calibrate: expected --runs alone or --nccl-tests and --gemm, got both "
                    "(fit the microbenchmarks first, then --runs with their cluster)");
        return FALSE;
    }
    if (a->fit && !a->runs) {
        g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "calibrate: expected --fit with --runs");
        return FALSE;
    }
    g_autofree char *cluster_path =
        cli_input_path(&cli_clusters, a->cluster, CLI_DEFAULT_CLUSTER, error);
    if (!cluster_path)
        return FALSE;
    g_autoptr(GPtrArray) inputs = g_ptr_array_new();
    g_ptr_array_add(inputs, cluster_path);
    g_ptr_array_add(inputs, a->gemm ? a->gemm : a->runs);
    for (char **path = a->nccl; path && *path; path++)
        g_ptr_array_add(inputs, *path);
    CliOutput out = {.flag = "-o", .path = a->output};
    if (!cli_check_outputs(&out, 1, (const char *const *)inputs->pdata, (int)inputs->len, error))
        return FALSE;
    if (a->runs)
        return calibrate_runs(a, cluster_path, error);
    g_autoptr(ClusterSpec) base = cluster_spec_load(cluster_path, 0, error);
    g_autoptr(GPtrArray) nccl = g_ptr_array_new_with_free_func((GDestroyNotify)calib_nccl_free);
    g_autoptr(CalibGemm) gemm = NULL;
    if (!base || (a->gemm && (!(gemm = calib_gemm_load(a->gemm, error)) ||
                              !calib_gemm_check(&base->gpu, gemm, error))))
        return FALSE;
    for (char **path = a->nccl; path && *path; path++) {
        CalibNccl *data = calib_nccl_load(*path, error);
        if (!data)
            return FALSE;
        g_ptr_array_add(nccl, data);
        if (!calib_nccl_check(base, data, error))
            return FALSE;
    }
    g_autoptr(Calibration) c =
        calib_run(base, (CalibNccl *const *)nccl->pdata, (int)nccl->len, gemm);
    g_autofree char *json = cluster_spec_json(c->cluster);
    if (!text_write_atomic(a->output, json, strlen(json), error))
        return FALSE;
    fputs(c->report, strcmp(a->output, "-") == 0 ? stderr : stdout);
    calib_print_warnings(c->warnings);
    return TRUE;
}

int cmd_calibrate(int argc, char **argv)
{
    CalibrateArgs a = {0};
    GOptionEntry entries[] = {
        {"cluster", 0, 0, G_OPTION_ARG_FILENAME, &a.cluster,
         "the cluster to start from (default: the shipped A100 profile)", "FILE"},
        {"nccl-tests", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a.nccl,
         "nccl-tests output (all_reduce_perf, ...); repeat for more files", "FILE"},
        {"gemm", 0, 0, G_OPTION_ARG_FILENAME, &a.gemm, "GEMM timings, CSV m,n,k,dtype,seconds",
         "FILE"},
        {"runs", 0, 0, G_OPTION_ARG_FILENAME, &a.runs,
         "measured runs, CSV: model, gpus, plan fields, and step_s, tokens_per_s_per_gpu or "
         "tflops_per_gpu",
         "FILE"},
        {"fit", 0, 0, G_OPTION_ARG_FILENAME, &a.fit,
         "with --runs, the GPU parameters to fit (default: " CALIB_RUNS_DEFAULT_FIT ")", "LIST"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &a.output,
         "write the fitted cluster to FILE (whole or not at all)", "FILE"},
        {NULL},
    };
    int status =
        command_main(argc, argv, "- fit a cluster's efficiencies and latencies to measurements",
                     entries, NULL, calibrate, &a);
    g_strfreev(a.nccl);
    return status;
}
